import type { Long } from '@grpc/proto-loader';
export interface SessionFinished {
    /**
     * The finished session, its parent (empty: none, or deleted) and the parent's tool
     * call it was created for.
     */
    'childSessionId'?: (string);
    'parentSessionId'?: (string);
    'parentToolCallId'?: (string);
    /**
     * The seq of the tool result its final answer became in the parent; 0 when it was
     * not appended.
     */
    'resultSeq'?: (number | string | Long);
}
export interface SessionFinished__Output {
    /**
     * The finished session, its parent (empty: none, or deleted) and the parent's tool
     * call it was created for.
     */
    'childSessionId': (string);
    'parentSessionId': (string);
    'parentToolCallId': (string);
    /**
     * The seq of the tool result its final answer became in the parent; 0 when it was
     * not appended.
     */
    'resultSeq': (number);
}
