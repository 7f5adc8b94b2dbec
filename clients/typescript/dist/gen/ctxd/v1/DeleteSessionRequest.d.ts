export interface DeleteSessionRequest {
    'sessionId'?: (string);
}
export interface DeleteSessionRequest__Output {
    'sessionId': (string);
}
