export interface ExportSessionChunk {
    /**
     * The next bytes of the file (at most 1 MiB a chunk).
     */
    'data'?: (Buffer | Uint8Array | string);
}
export interface ExportSessionChunk__Output {
    /**
     * The next bytes of the file (at most 1 MiB a chunk).
     */
    'data': (Buffer);
}
