import type { Policy as _ctxd_v1_Policy, Policy__Output as _ctxd_v1_Policy__Output } from '../../ctxd/v1/Policy.js';
import type { Long } from '@grpc/proto-loader';
export interface ForkSessionRequest {
    /**
     * The session to fork (of the caller's tenant).
     */
    'sourceSessionId'?: (string);
    /**
     * The last seq of the source the fork shares, from 0 (nothing) to the source's last
     * seq; unset: the source's last seq.
     */
    'atSeq'?: (number | string | Long);
    /**
     * The fork's id, unique within the tenant, as CreateSession's. Empty: ctxd generates
     * one.
     */
    'sessionId'?: (string);
    /**
     * Overrides over the source's policy (not the server's defaults); unset fields keep
     * the source's. The tokenizer and heuristic_chars_per_token cannot change: the shared
     * messages keep the token counts they were appended with.
     */
    'policy'?: (_ctxd_v1_Policy | null);
    /**
     * Entries set over the source's metadata for the fork.
     */
    'metadata'?: ({
        [key: string]: string;
    });
    '_atSeq'?: "atSeq";
}
export interface ForkSessionRequest__Output {
    /**
     * The session to fork (of the caller's tenant).
     */
    'sourceSessionId': (string);
    /**
     * The last seq of the source the fork shares, from 0 (nothing) to the source's last
     * seq; unset: the source's last seq.
     */
    'atSeq'?: (number);
    /**
     * The fork's id, unique within the tenant, as CreateSession's. Empty: ctxd generates
     * one.
     */
    'sessionId': (string);
    /**
     * Overrides over the source's policy (not the server's defaults); unset fields keep
     * the source's. The tokenizer and heuristic_chars_per_token cannot change: the shared
     * messages keep the token counts they were appended with.
     */
    'policy': (_ctxd_v1_Policy__Output | null);
    /**
     * Entries set over the source's metadata for the fork.
     */
    'metadata': ({
        [key: string]: string;
    });
    '_atSeq'?: "atSeq";
}
