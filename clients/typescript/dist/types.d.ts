import type { Message as PbMessage } from './gen/ctxd/v1/Message.js';
import type { OutputFormat } from './gen/ctxd/v1/OutputFormat.js';
import type { Role } from './gen/ctxd/v1/Role.js';
import type { Tools as PbTools } from './gen/ctxd/v1/Tools.js';
/** The provider shapes BuildMessages renders and AppendNative reads. */
export type JsonFormat = 'openai_chat' | 'openai_responses' | 'anthropic_messages' | 'gemini';
/** `neutral`: proto messages; the others: a provider request body. */
export type Format = 'neutral' | JsonFormat;
export declare function outputFormat(format: Format): OutputFormat;
export declare function jsonFormat(format: JsonFormat): OutputFormat;
/** A role by its short name or its proto name. */
export type RoleName = 'system' | 'user' | 'assistant' | 'tool' | Role;
/** A message to append: the proto Message with the role by name. */
export interface MessageInput extends Omit<PbMessage, 'role'> {
    role: RoleName;
}
export declare function toPbMessage(message: MessageInput): PbMessage;
/** A tool offered to the model: its JSON Schema as an object (or as a JSON text). */
export interface ToolInput {
    name: string;
    description?: string;
    parameters?: Record<string, unknown> | string;
}
/** The tools of a request: definitions, or only what they cost in tokens. */
export type ToolsInput = ToolInput[] | {
    tokenCount: number;
};
export declare function toPbTools(tools: ToolsInput | undefined): PbTools | undefined;
/** A provider body: an SDK's response object, a parsed JSON value, or the JSON text. */
export declare function toJsonText(value: unknown, what: string): string;
/**
 * A tool's output for a call, in no provider's shape: `appendToolResults` writes it in
 * the format's (Gemini needs the tool's `name`).
 */
export declare class ToolResult {
    readonly callId: string;
    readonly output: string;
    readonly name: string;
    constructor(callId: string, output: string, name?: string);
}
/**
 * Request items for AppendNative: provider items pass as they are; each run of
 * consecutive ToolResults is written in the format's shape (one user message for
 * Anthropic's and Gemini's results of one step).
 */
export declare function nativeItems(items: readonly unknown[], format: JsonFormat): unknown[];
/** ctxd's recall tools: a session whose policy has recallTools gets them in every build. */
export declare const RECALL_TOOLS: readonly ['ctxd_recall_search', 'ctxd_recall_expand'];
/** Whether a tool call is to one of ctxd's recall tools: answer it with
 * `session.answerRecall(callId)` instead of running it. */
export declare function isRecallTool(name: string): boolean;
