import type { Message as _ctxd_v1_Message, Message__Output as _ctxd_v1_Message__Output } from '../../ctxd/v1/Message.js';
import type { Long } from '@grpc/proto-loader';
export interface ExpandResponse {
    /**
     * The messages, in seq order, exactly as appended (with seq, turn, token_count,
     * view_state and created_at filled in).
     */
    'messages'?: (_ctxd_v1_Message)[];
    /**
     * Sum of token_count over `messages`.
     */
    'totalTokens'?: (number | string | Long);
    /**
     * When max_tokens stopped the response early: the first requested seq not returned
     * (ask again from there with a range). 0 when everything requested was returned.
     */
    'nextSeq'?: (number | string | Long);
}
export interface ExpandResponse__Output {
    /**
     * The messages, in seq order, exactly as appended (with seq, turn, token_count,
     * view_state and created_at filled in).
     */
    'messages': (_ctxd_v1_Message__Output)[];
    /**
     * Sum of token_count over `messages`.
     */
    'totalTokens': (number);
    /**
     * When max_tokens stopped the response early: the first requested seq not returned
     * (ask again from there with a range). 0 when everything requested was returned.
     */
    'nextSeq': (number);
}
