import type { Session as _ctxd_v1_Session, Session__Output as _ctxd_v1_Session__Output } from '../../ctxd/v1/Session.js';
export interface ListSessionsResponse {
    /**
     * The sessions of this page, most recently updated first (ties: newest first). Each
     * as GetSession returns it, with its parent and depth.
     */
    'sessions'?: (_ctxd_v1_Session)[];
    /**
     * Pass as page_token for the next page; empty when this page is the last.
     */
    'nextPageToken'?: (string);
}
export interface ListSessionsResponse__Output {
    /**
     * The sessions of this page, most recently updated first (ties: newest first). Each
     * as GetSession returns it, with its parent and depth.
     */
    'sessions': (_ctxd_v1_Session__Output)[];
    /**
     * Pass as page_token for the next page; empty when this page is the last.
     */
    'nextPageToken': (string);
}
