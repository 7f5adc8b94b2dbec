import type { SearchHit__Output } from './gen/ctxd/v1/SearchHit.js';
import type { SearchRequest } from './gen/ctxd/v1/SearchRequest.js';
import { type RoleName } from './types.js';
export type SearchHit = SearchHit__Output;
export interface SearchOptions {
    /** messages, summaries, or both (default). */
    scope?: 'messages' | 'summaries' | 'both';
    /** Only messages of these roles. */
    roles?: RoleName[];
    /** Only what was written at or after / before these times. */
    since?: Date;
    until?: Date;
    /** Most hits (0: 20; at most 100). */
    limit?: number;
}
export declare const timestamp: (date: Date) => {
    seconds: number;
    nanos: number;
};
export declare function searchRequest(sessionId: string, query: string, options: SearchOptions): SearchRequest;
