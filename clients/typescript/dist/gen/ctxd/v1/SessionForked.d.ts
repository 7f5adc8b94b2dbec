import type { Long } from '@grpc/proto-loader';
export interface SessionForked {
    /**
     * The session forked.
     */
    'sourceSessionId'?: (string);
    /**
     * The new session.
     */
    'forkSessionId'?: (string);
    /**
     * The last seq they share.
     */
    'atSeq'?: (number | string | Long);
}
export interface SessionForked__Output {
    /**
     * The session forked.
     */
    'sourceSessionId': (string);
    /**
     * The new session.
     */
    'forkSessionId': (string);
    /**
     * The last seq they share.
     */
    'atSeq': (number);
}
