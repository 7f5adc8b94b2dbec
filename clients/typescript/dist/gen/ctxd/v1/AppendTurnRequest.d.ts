import type { Message as _ctxd_v1_Message, Message__Output as _ctxd_v1_Message__Output } from '../../ctxd/v1/Message.js';
import type { Usage as _ctxd_v1_Usage, Usage__Output as _ctxd_v1_Usage__Output } from '../../ctxd/v1/Usage.js';
import type { Long } from '@grpc/proto-loader';
export interface AppendTurnRequest {
    'sessionId'?: (string);
    /**
     * The messages to append, in order. At least one.
     */
    'messages'?: (_ctxd_v1_Message)[];
    /**
     * Optimistic concurrency: when set, the append happens only if the session's version
     * is this one; otherwise ABORTED with the current version.
     */
    'expectedVersion'?: (number | string | Long);
    /**
     * Retry safety: a retry with the same key and the same payload returns the first
     * response and appends nothing; the same key with another payload is
     * INVALID_ARGUMENT. At most 200 characters.
     */
    'idempotencyKey'?: (string);
    /**
     * The provider's usage for the model call that produced the first assistant message
     * of this batch. Anchors later estimates.
     */
    'usage'?: (_ctxd_v1_Usage | null);
    '_expectedVersion'?: "expectedVersion";
}
export interface AppendTurnRequest__Output {
    'sessionId': (string);
    /**
     * The messages to append, in order. At least one.
     */
    'messages': (_ctxd_v1_Message__Output)[];
    /**
     * Optimistic concurrency: when set, the append happens only if the session's version
     * is this one; otherwise ABORTED with the current version.
     */
    'expectedVersion'?: (number);
    /**
     * Retry safety: a retry with the same key and the same payload returns the first
     * response and appends nothing; the same key with another payload is
     * INVALID_ARGUMENT. At most 200 characters.
     */
    'idempotencyKey': (string);
    /**
     * The provider's usage for the model call that produced the first assistant message
     * of this batch. Anchors later estimates.
     */
    'usage': (_ctxd_v1_Usage__Output | null);
    '_expectedVersion'?: "expectedVersion";
}
