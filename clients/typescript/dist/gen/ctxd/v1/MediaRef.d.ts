/**
 * A reference to a media item (image, audio, document). ctxd stores the reference, not
 * the bytes.
 */
export interface MediaRef {
    /**
     * Where the client can find the item (URL, file id, data URI...). Passed through as is.
     */
    'uri'?: (string);
    /**
     * MIME type, e.g. "image/png".
     */
    'mimeType'?: (string);
    /**
     * The client's estimate of what the item costs in tokens. 0 means use the policy's
     * flat per-item cost (media_item_tokens). At most 100 000 000.
     */
    'tokenEstimate'?: (number);
}
/**
 * A reference to a media item (image, audio, document). ctxd stores the reference, not
 * the bytes.
 */
export interface MediaRef__Output {
    /**
     * Where the client can find the item (URL, file id, data URI...). Passed through as is.
     */
    'uri': (string);
    /**
     * MIME type, e.g. "image/png".
     */
    'mimeType': (string);
    /**
     * The client's estimate of what the item costs in tokens. 0 means use the policy's
     * flat per-item cost (media_item_tokens). At most 100 000 000.
     */
    'tokenEstimate': (number);
}
