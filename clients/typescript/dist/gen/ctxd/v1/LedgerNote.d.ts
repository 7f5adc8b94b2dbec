/**
 * A note to create, replace or (with empty text) remove, by id.
 */
export interface LedgerNote {
    /**
     * 1 to 128 characters, unique within the request.
     */
    'id'?: (string);
    /**
     * At most 2 000 characters; empty removes the note.
     */
    'text'?: (string);
}
/**
 * A note to create, replace or (with empty text) remove, by id.
 */
export interface LedgerNote__Output {
    /**
     * 1 to 128 characters, unique within the request.
     */
    'id': (string);
    /**
     * At most 2 000 characters; empty removes the note.
     */
    'text': (string);
}
