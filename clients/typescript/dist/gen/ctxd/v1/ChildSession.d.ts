import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
/**
 * A child in its parent's GetSession.
 */
export interface ChildSession {
    'sessionId'?: (string);
    /**
     * The parent's tool call it was created for.
     */
    'parentToolCallId'?: (string);
    /**
     * Whether FinishSession ended it, and when.
     */
    'finished'?: (boolean);
    'finishedAt'?: (_google_protobuf_Timestamp | null);
    'createdAt'?: (_google_protobuf_Timestamp | null);
}
/**
 * A child in its parent's GetSession.
 */
export interface ChildSession__Output {
    'sessionId': (string);
    /**
     * The parent's tool call it was created for.
     */
    'parentToolCallId': (string);
    /**
     * Whether FinishSession ended it, and when.
     */
    'finished': (boolean);
    'finishedAt': (_google_protobuf_Timestamp__Output | null);
    'createdAt': (_google_protobuf_Timestamp__Output | null);
}
