import type { SeqRange as _ctxd_v1_SeqRange, SeqRange__Output as _ctxd_v1_SeqRange__Output } from '../../ctxd/v1/SeqRange.js';
import type { SeqList as _ctxd_v1_SeqList, SeqList__Output as _ctxd_v1_SeqList__Output } from '../../ctxd/v1/SeqList.js';
import type { Long } from '@grpc/proto-loader';
export interface ExpandRequest {
    'sessionId'?: (string);
    'range'?: (_ctxd_v1_SeqRange | null);
    'list'?: (_ctxd_v1_SeqList | null);
    /**
     * Largest sum of token_count over the returned messages; 0 means no cap. Messages are
     * returned in seq order while they fit; the first one is returned even when it alone
     * is larger, so every message can be read. `next_seq` says where to continue.
     */
    'maxTokens'?: (number | string | Long);
    /**
     * The original messages a summary covers (summary_id from BuildMessages).
     */
    'summaryId'?: (number | string | Long);
    /**
     * What to return. Required.
     */
    'target'?: "range" | "list" | "summaryId";
}
export interface ExpandRequest__Output {
    'sessionId': (string);
    'range'?: (_ctxd_v1_SeqRange__Output | null);
    'list'?: (_ctxd_v1_SeqList__Output | null);
    /**
     * Largest sum of token_count over the returned messages; 0 means no cap. Messages are
     * returned in seq order while they fit; the first one is returned even when it alone
     * is larger, so every message can be read. `next_seq` says where to continue.
     */
    'maxTokens': (number);
    /**
     * The original messages a summary covers (summary_id from BuildMessages).
     */
    'summaryId'?: (number);
    /**
     * What to return. Required.
     */
    'target'?: "range" | "list" | "summaryId";
}
