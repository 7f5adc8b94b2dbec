import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
/**
 * Sent once the backlog has been delivered (the stream is live from then on), and then
 * whenever the stream has been quiet for heartbeat_interval_ms.
 */
export interface Heartbeat {
    'time'?: (_google_protobuf_Timestamp | null);
    /**
     * The cursor of the last event delivered on this stream (the request's `after` when
     * none yet).
     */
    'cursor'?: (string);
}
/**
 * Sent once the backlog has been delivered (the stream is live from then on), and then
 * whenever the stream has been quiet for heartbeat_interval_ms.
 */
export interface Heartbeat__Output {
    'time': (_google_protobuf_Timestamp__Output | null);
    /**
     * The cursor of the last event delivered on this stream (the request's `after` when
     * none yet).
     */
    'cursor': (string);
}
