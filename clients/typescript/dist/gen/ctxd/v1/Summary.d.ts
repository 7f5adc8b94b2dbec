import type { Long } from '@grpc/proto-loader';
/**
 * A summary in the view.
 */
export interface Summary {
    'summaryId'?: (number | string | Long);
    /**
     * 0 for a leaf (covers raw messages); n for a summary of depth n-1 summaries.
     */
    'depth'?: (number);
    /**
     * The raw messages it covers, inclusive.
     */
    'firstSeq'?: (number | string | Long);
    'lastSeq'?: (number | string | Long);
    'content'?: (string);
    'tokenCount'?: (number | string | Long);
    /**
     * Tokens of what it replaced in the view.
     */
    'sourceTokens'?: (number | string | Long);
    /**
     * File paths, commands and identifiers of the covered span, and how many of them the
     * summary does not mention (retention check; by kind below). A summary that lost more
     * than a fifth lists the lost ones after its text, as many as fit.
     */
    'facts'?: (number | string | Long);
    'factsLost'?: (number | string | Long);
    /**
     * By kind: file paths anywhere in the span; the commands of its tool calls; code
     * identifiers (snake_case, camelCase, ...) the user, the assistant and its tool calls
     * used.
     */
    'paths'?: (number | string | Long);
    'pathsLost'?: (number | string | Long);
    'commands'?: (number | string | Long);
    'commandsLost'?: (number | string | Long);
    'identifiers'?: (number | string | Long);
    'identifiersLost'?: (number | string | Long);
    /**
     * True for a summary RevertCompaction took out of the view (GetSession's
     * reverted_summaries); it is never in a built request again.
     */
    'reverted'?: (boolean);
}
/**
 * A summary in the view.
 */
export interface Summary__Output {
    'summaryId': (number);
    /**
     * 0 for a leaf (covers raw messages); n for a summary of depth n-1 summaries.
     */
    'depth': (number);
    /**
     * The raw messages it covers, inclusive.
     */
    'firstSeq': (number);
    'lastSeq': (number);
    'content': (string);
    'tokenCount': (number);
    /**
     * Tokens of what it replaced in the view.
     */
    'sourceTokens': (number);
    /**
     * File paths, commands and identifiers of the covered span, and how many of them the
     * summary does not mention (retention check; by kind below). A summary that lost more
     * than a fifth lists the lost ones after its text, as many as fit.
     */
    'facts': (number);
    'factsLost': (number);
    /**
     * By kind: file paths anywhere in the span; the commands of its tool calls; code
     * identifiers (snake_case, camelCase, ...) the user, the assistant and its tool calls
     * used.
     */
    'paths': (number);
    'pathsLost': (number);
    'commands': (number);
    'commandsLost': (number);
    'identifiers': (number);
    'identifiersLost': (number);
    /**
     * True for a summary RevertCompaction took out of the view (GetSession's
     * reverted_summaries); it is never in a built request again.
     */
    'reverted': (boolean);
}
