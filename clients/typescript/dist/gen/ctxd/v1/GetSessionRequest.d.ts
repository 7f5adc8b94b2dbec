export interface GetSessionRequest {
    'sessionId'?: (string);
    /**
     * Also return the active summaries and the budget of the next request (what
     * `ctxd inspect` shows). Read-only, like the rest of GetSession.
     */
    'includeView'?: (boolean);
}
export interface GetSessionRequest__Output {
    'sessionId': (string);
    /**
     * Also return the active summaries and the budget of the next request (what
     * `ctxd inspect` shows). Read-only, like the rest of GetSession.
     */
    'includeView': (boolean);
}
