import type { Long } from '@grpc/proto-loader';
export interface RecallAnswered {
    /**
     * The answer: the call's tool result.
     */
    'seq'?: (number | string | Long);
    /**
     * The call answered (at most 200 characters of its id).
     */
    'toolCallId'?: (string);
    /**
     * "search" or "expand".
     */
    'tool'?: (string);
    /**
     * The answer's tokens.
     */
    'tokens'?: (number | string | Long);
    /**
     * The call's arguments were wrong: the answer says what was wrong.
     */
    'error'?: (boolean);
    /**
     * The provider endpoint's round within one agent request (1, 2, ...); 0 when a client
     * asked (AnswerRecall).
     */
    'round'?: (number);
}
export interface RecallAnswered__Output {
    /**
     * The answer: the call's tool result.
     */
    'seq': (number);
    /**
     * The call answered (at most 200 characters of its id).
     */
    'toolCallId': (string);
    /**
     * "search" or "expand".
     */
    'tool': (string);
    /**
     * The answer's tokens.
     */
    'tokens': (number);
    /**
     * The call's arguments were wrong: the answer says what was wrong.
     */
    'error': (boolean);
    /**
     * The provider endpoint's round within one agent request (1, 2, ...); 0 when a client
     * asked (AnswerRecall).
     */
    'round': (number);
}
