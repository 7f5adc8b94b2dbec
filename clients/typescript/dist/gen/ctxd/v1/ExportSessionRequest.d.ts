export interface ExportSessionRequest {
    'sessionId'?: (string);
}
export interface ExportSessionRequest__Output {
    'sessionId': (string);
}
