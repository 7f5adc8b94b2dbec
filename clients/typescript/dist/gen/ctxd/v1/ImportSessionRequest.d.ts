/**
 * One chunk of the file (every message of the stream is one; the name says it is the
 * client's, so an undecodable one is INVALID_ARGUMENT).
 */
export interface ImportSessionRequest {
    /**
     * The id to import the session as; read from the first chunk only (empty: the id the
     * file names).
     */
    'sessionId'?: (string);
    /**
     * The next bytes of the file. The whole file is at most the server's
     * max_session_bytes x 4 + 16 MiB (RESOURCE_EXHAUSTED beyond, naming the setting).
     */
    'data'?: (Buffer | Uint8Array | string);
}
/**
 * One chunk of the file (every message of the stream is one; the name says it is the
 * client's, so an undecodable one is INVALID_ARGUMENT).
 */
export interface ImportSessionRequest__Output {
    /**
     * The id to import the session as; read from the first chunk only (empty: the id the
     * file names).
     */
    'sessionId': (string);
    /**
     * The next bytes of the file. The whole file is at most the server's
     * max_session_bytes x 4 + 16 MiB (RESOURCE_EXHAUSTED beyond, naming the setting).
     */
    'data': (Buffer);
}
