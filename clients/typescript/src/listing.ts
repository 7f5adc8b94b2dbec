// ListSessions requests: the filters by name, converted to the proto request.
import type { ListSessionsRequest } from './gen/ctxd/v1/ListSessionsRequest.js';
import { timestamp } from './search.js';

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

const at = (date: Date | undefined) => (date ? timestamp(date) : null);

export function listRequest(options: ListSessionsOptions): ListSessionsRequest {
  return {
    pageSize: options.pageSize ?? 0,
    pageToken: options.pageToken ?? '',
    metadata: options.metadata ?? {},
    parentSessionId: options.parentSessionId ?? '',
    forkedFromSessionId: options.forkedFromSessionId ?? '',
    ...(options.finished === undefined ? {} : { finished: options.finished }),
    createdAfter: at(options.createdAfter),
    createdBefore: at(options.createdBefore),
    updatedAfter: at(options.updatedAfter),
    updatedBefore: at(options.updatedBefore),
  };
}
