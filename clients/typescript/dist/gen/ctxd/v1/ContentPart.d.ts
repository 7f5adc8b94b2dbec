import type { MediaRef as _ctxd_v1_MediaRef, MediaRef__Output as _ctxd_v1_MediaRef__Output } from '../../ctxd/v1/MediaRef.js';
/**
 * One part of a multi-part message.
 */
export interface ContentPart {
    /**
     * A text part.
     */
    'text'?: (string);
    /**
     * A media item.
     */
    'media'?: (_ctxd_v1_MediaRef | null);
    'part'?: "text" | "media";
}
/**
 * One part of a multi-part message.
 */
export interface ContentPart__Output {
    /**
     * A text part.
     */
    'text'?: (string);
    /**
     * A media item.
     */
    'media'?: (_ctxd_v1_MediaRef__Output | null);
    'part'?: "text" | "media";
}
