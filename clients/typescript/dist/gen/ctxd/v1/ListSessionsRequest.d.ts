import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
export interface ListSessionsRequest {
    /**
     * Sessions per page: 0 means 50; more than 1000 means 1000; negative is
     * INVALID_ARGUMENT.
     */
    'pageSize'?: (number);
    /**
     * A previous response's next_page_token, to continue that listing; every filter must
     * be the same as in the request that listing started with (else INVALID_ARGUMENT).
     */
    'pageToken'?: (string);
    /**
     * Only sessions whose metadata has each of these keys with this value (at most 16).
     */
    'metadata'?: ({
        [key: string]: string;
    });
    /**
     * Only the child sessions of this session (created with parent_session_id).
     */
    'parentSessionId'?: (string);
    /**
     * Only the forks of this session.
     */
    'forkedFromSessionId'?: (string);
    /**
     * Only finished sessions (true) or only unfinished ones (false); unset: both.
     */
    'finished'?: (boolean);
    /**
     * Only sessions created at or after / before this time.
     */
    'createdAfter'?: (_google_protobuf_Timestamp | null);
    'createdBefore'?: (_google_protobuf_Timestamp | null);
    /**
     * Only sessions last active (updated) at or after / before this time.
     */
    'updatedAfter'?: (_google_protobuf_Timestamp | null);
    'updatedBefore'?: (_google_protobuf_Timestamp | null);
    '_finished'?: "finished";
}
export interface ListSessionsRequest__Output {
    /**
     * Sessions per page: 0 means 50; more than 1000 means 1000; negative is
     * INVALID_ARGUMENT.
     */
    'pageSize': (number);
    /**
     * A previous response's next_page_token, to continue that listing; every filter must
     * be the same as in the request that listing started with (else INVALID_ARGUMENT).
     */
    'pageToken': (string);
    /**
     * Only sessions whose metadata has each of these keys with this value (at most 16).
     */
    'metadata': ({
        [key: string]: string;
    });
    /**
     * Only the child sessions of this session (created with parent_session_id).
     */
    'parentSessionId': (string);
    /**
     * Only the forks of this session.
     */
    'forkedFromSessionId': (string);
    /**
     * Only finished sessions (true) or only unfinished ones (false); unset: both.
     */
    'finished'?: (boolean);
    /**
     * Only sessions created at or after / before this time.
     */
    'createdAfter': (_google_protobuf_Timestamp__Output | null);
    'createdBefore': (_google_protobuf_Timestamp__Output | null);
    /**
     * Only sessions last active (updated) at or after / before this time.
     */
    'updatedAfter': (_google_protobuf_Timestamp__Output | null);
    'updatedBefore': (_google_protobuf_Timestamp__Output | null);
    '_finished'?: "finished";
}
