import type { EventKind as _ctxd_v1_EventKind, EventKind__Output as _ctxd_v1_EventKind__Output } from '../../ctxd/v1/EventKind.js';
export interface SubscribeEventsRequest {
    /**
     * One session's events; empty: every session of the tenant.
     */
    'sessionId'?: (string);
    /**
     * Only these kinds; empty: all.
     */
    'kinds'?: (_ctxd_v1_EventKind)[];
    /**
     * Resume after this event (its `cursor`). Empty: from the oldest event still kept
     * (events are kept for the server's events retention). OUT_OF_RANGE when events after
     * the cursor were already pruned.
     */
    'after'?: (string);
    /**
     * Skip the backlog: only events committed after the subscription. Not with `after`.
     */
    'fromNow'?: (boolean);
    /**
     * Milliseconds between heartbeats (0: 15000; 100 to 600000).
     */
    'heartbeatIntervalMs'?: (number);
    /**
     * A tenant stream of one tree: the events of this session and of its descendants
     * (deleted ones too), with a tenant stream's cursors. Not with session_id.
     */
    'treeRootSessionId'?: (string);
}
export interface SubscribeEventsRequest__Output {
    /**
     * One session's events; empty: every session of the tenant.
     */
    'sessionId': (string);
    /**
     * Only these kinds; empty: all.
     */
    'kinds': (_ctxd_v1_EventKind__Output)[];
    /**
     * Resume after this event (its `cursor`). Empty: from the oldest event still kept
     * (events are kept for the server's events retention). OUT_OF_RANGE when events after
     * the cursor were already pruned.
     */
    'after': (string);
    /**
     * Skip the backlog: only events committed after the subscription. Not with `after`.
     */
    'fromNow': (boolean);
    /**
     * Milliseconds between heartbeats (0: 15000; 100 to 600000).
     */
    'heartbeatIntervalMs': (number);
    /**
     * A tenant stream of one tree: the events of this session and of its descendants
     * (deleted ones too), with a tenant stream's cursors. Not with session_id.
     */
    'treeRootSessionId': (string);
}
