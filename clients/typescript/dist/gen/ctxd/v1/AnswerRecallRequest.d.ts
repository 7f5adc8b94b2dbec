export interface AnswerRecallRequest {
    'sessionId'?: (string);
    /**
     * The id of the model's call to ctxd_recall_search or ctxd_recall_expand.
     */
    'toolCallId'?: (string);
}
export interface AnswerRecallRequest__Output {
    'sessionId': (string);
    /**
     * The id of the model's call to ctxd_recall_search or ctxd_recall_expand.
     */
    'toolCallId': (string);
}
