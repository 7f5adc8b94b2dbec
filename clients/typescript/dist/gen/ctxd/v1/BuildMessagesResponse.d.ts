import type { Message as _ctxd_v1_Message, Message__Output as _ctxd_v1_Message__Output } from '../../ctxd/v1/Message.js';
import type { BudgetReport as _ctxd_v1_BudgetReport, BudgetReport__Output as _ctxd_v1_BudgetReport__Output } from '../../ctxd/v1/BudgetReport.js';
import type { Trimmed as _ctxd_v1_Trimmed, Trimmed__Output as _ctxd_v1_Trimmed__Output } from '../../ctxd/v1/Trimmed.js';
import type { Summary as _ctxd_v1_Summary, Summary__Output as _ctxd_v1_Summary__Output } from '../../ctxd/v1/Summary.js';
import type { Long } from '@grpc/proto-loader';
export interface BuildMessagesResponse {
    /**
     * The history to send, in order (NEUTRAL). The system prompt is not included.
     */
    'messages'?: (_ctxd_v1_Message)[];
    /**
     * The whole request body as JSON (every format but NEUTRAL). It ends before a last
     * step whose calls are not all answered yet (NEUTRAL `messages` show that step: the
     * client is still running its tools), since no provider takes such a request; that
     * step's messages are then counted in `trimmed.incomplete_step_messages` and
     * `last_seq` is the last message the body holds.
     */
    'json'?: (string);
    /**
     * The budget of this request; never over.
     */
    'budget'?: (_ctxd_v1_BudgetReport | null);
    /**
     * The session version the messages reflect.
     */
    'version'?: (number | string | Long);
    /**
     * What was left out to fit.
     */
    'trimmed'?: (_ctxd_v1_Trimmed | null);
    /**
     * Seq of the first and last history message included (0 when none).
     */
    'firstSeq'?: (number | string | Long);
    'lastSeq'?: (number | string | Long);
    /**
     * The system prompt to send: the request's, with the summaries appended when the
     * policy places them there (SUMMARY_PLACEMENT_SYSTEM). NEUTRAL clients send this one.
     */
    'systemPrompt'?: (string);
    /**
     * The active summaries in this request, oldest first. They cover every message before
     * the view, exactly once; with SUMMARY_PLACEMENT_USER they are also the leading user
     * message of `messages` (seq 0). Expand a summary_id for the originals.
     */
    'summaries'?: (_ctxd_v1_Summary)[];
}
export interface BuildMessagesResponse__Output {
    /**
     * The history to send, in order (NEUTRAL). The system prompt is not included.
     */
    'messages': (_ctxd_v1_Message__Output)[];
    /**
     * The whole request body as JSON (every format but NEUTRAL). It ends before a last
     * step whose calls are not all answered yet (NEUTRAL `messages` show that step: the
     * client is still running its tools), since no provider takes such a request; that
     * step's messages are then counted in `trimmed.incomplete_step_messages` and
     * `last_seq` is the last message the body holds.
     */
    'json': (string);
    /**
     * The budget of this request; never over.
     */
    'budget': (_ctxd_v1_BudgetReport__Output | null);
    /**
     * The session version the messages reflect.
     */
    'version': (number);
    /**
     * What was left out to fit.
     */
    'trimmed': (_ctxd_v1_Trimmed__Output | null);
    /**
     * Seq of the first and last history message included (0 when none).
     */
    'firstSeq': (number);
    'lastSeq': (number);
    /**
     * The system prompt to send: the request's, with the summaries appended when the
     * policy places them there (SUMMARY_PLACEMENT_SYSTEM). NEUTRAL clients send this one.
     */
    'systemPrompt': (string);
    /**
     * The active summaries in this request, oldest first. They cover every message before
     * the view, exactly once; with SUMMARY_PLACEMENT_USER they are also the leading user
     * message of `messages` (seq 0). Expand a summary_id for the originals.
     */
    'summaries': (_ctxd_v1_Summary__Output)[];
}
