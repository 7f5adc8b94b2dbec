// Search requests: the options by name, converted to the proto request.
import type { SearchHit__Output } from './gen/ctxd/v1/SearchHit.js';
import type { SearchRequest } from './gen/ctxd/v1/SearchRequest.js';
import type { SearchScope } from './gen/ctxd/v1/SearchScope.js';
import { toPbMessage, type RoleName } from './types.js';

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

const SCOPES: Record<string, SearchScope> = {
  messages: 'SEARCH_SCOPE_MESSAGES',
  summaries: 'SEARCH_SCOPE_SUMMARIES',
  both: 'SEARCH_SCOPE_BOTH',
};

export const timestamp = (date: Date) => ({
  seconds: Math.floor(date.getTime() / 1000),
  nanos: (((date.getTime() % 1000) + 1000) % 1000) * 1e6,
});

export function searchRequest(sessionId: string, query: string, options: SearchOptions): SearchRequest {
  const scope = SCOPES[options.scope ?? 'both'];
  if (scope === undefined) throw new TypeError('scope must be messages, summaries or both');
  return {
    sessionId,
    query,
    scope,
    roles: (options.roles ?? []).map((role) => toPbMessage({ role }).role ?? 'ROLE_UNSPECIFIED'),
    since: options.since ? timestamp(options.since) : null,
    until: options.until ? timestamp(options.until) : null,
    limit: options.limit ?? 0,
  };
}
