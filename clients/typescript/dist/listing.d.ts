import type { ListSessionsRequest } from './gen/ctxd/v1/ListSessionsRequest.js';
export interface ListSessionsOptions {
    /** Sessions per page (0: 50; at most 1000). */
    pageSize?: number;
    /** A previous page's `nextPageToken`, with the same filters. */
    pageToken?: string;
    /** Only sessions whose metadata has each of these keys with this value. */
    metadata?: Record<string, string>;
    /** Only the child sessions of this session. */
    parentSessionId?: string;
    /** Only the forks of this session. */
    forkedFromSessionId?: string;
    /** Only finished (true) or unfinished (false) sessions. */
    finished?: boolean;
    /** Only sessions created / last active at or after, or before, these times. */
    createdAfter?: Date;
    createdBefore?: Date;
    updatedAfter?: Date;
    updatedBefore?: Date;
}
export declare function listRequest(options: ListSessionsOptions): ListSessionsRequest;
