// The request bodies BuildMessages renders, one type per provider format: what ctxd's
// renderers (crates/core/src/render/) write, field for field. A block or item a client
// appended natively is kept whole and comes back as it came (`NativeBlock`). The tests
// check each against the providers' own SDK types (test/bodies.test.mjs).
import type { JsonFormat } from './types.js';

/** A JSON object a tool call carries (its arguments, a schema). */
export type JsonObject = Record<string, unknown>;

/** A block or item appended natively that ctxd does not model: returned as it came. */
export interface NativeBlock {
  type: string;
  [field: string]: unknown;
}

// --- OpenAI Chat Completions ------------------------------------------------------------

export type OpenAIChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface OpenAIChatToolCall {
  id: string;
  type: 'function';
  /** `arguments` is a JSON text, as OpenAI takes it. */
  function: { name: string; arguments: string };
}

export type OpenAIChatMessage =
  | { role: 'system' | 'developer'; content: string | { type: 'text'; text: string }[]; name?: string }
  | { role: 'user'; content: string | OpenAIChatPart[]; name?: string }
  | {
      role: 'assistant';
      /** null for an assistant message with only tool calls. */
      content: string | { type: 'text'; text: string }[] | null;
      tool_calls?: OpenAIChatToolCall[];
      reasoning_content?: string;
      name?: string;
    }
  | { role: 'tool'; content: string | { type: 'text'; text: string }[]; tool_call_id: string };

export interface OpenAIChatBody {
  messages: OpenAIChatMessage[];
  tools?: { type: 'function'; function: { name: string; description: string; parameters: JsonObject } }[];
}

// --- OpenAI Responses ---------------------------------------------------------------------

export type ResponsesContent =
  | string
  | ({ type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' })[];

/** `N`: what a natively appended item is typed as (`never` names the modeled ones only). */
export type ResponsesItem<N = NativeBlock> =
  | { type: 'reasoning'; id: string; summary: { type: 'summary_text'; text: string }[]; encrypted_content?: string }
  | { type: 'message'; role: 'system' | 'user' | 'assistant' | 'developer'; content: ResponsesContent }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: ResponsesContent }
  | { type: 'custom_tool_call'; call_id: string; name: string; input: string }
  | { type: 'custom_tool_call_output'; call_id: string; output: ResponsesContent }
  | N;

export interface OpenAIResponsesBody<N = NativeBlock> {
  instructions?: string;
  input: ResponsesItem<N>[];
  tools?: { type: 'function'; name: string; description: string; parameters: JsonObject; strict: boolean }[];
  max_output_tokens: number;
}

// --- Anthropic Messages -------------------------------------------------------------------

/** `N`: what a natively appended block is typed as (`never` names the modeled ones only). */
export type AnthropicBlock<N = NativeBlock> =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'text'; text: string }
  | {
      type: 'image';
      source:
        | { type: 'url'; url: string }
        | { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string };
    }
  | { type: 'tool_use'; id: string; name: string; input: JsonObject }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content?: ({ type: 'text'; text: string } | Extract<AnthropicBlock<never>, { type: 'image' }> | N)[];
      is_error?: true;
    }
  | N;

export interface AnthropicMessagesBody<N = NativeBlock> {
  system?: string;
  messages: { role: 'user' | 'assistant'; content: AnthropicBlock<N>[] }[];
  tools?: { name: string; description: string; input_schema: JsonObject }[];
  max_tokens: number;
}

// --- Gemini -------------------------------------------------------------------------------

export interface GeminiPart {
  text?: string;
  thought?: true;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: JsonObject };
  functionResponse?: { id?: string; name: string; response: JsonObject };
  thoughtSignature?: string;
}

export interface GeminiBody {
  systemInstruction?: { parts: [{ text: string }] };
  contents: { role: 'user' | 'model'; parts: GeminiPart[] }[];
  tools?: { functionDeclarations: { name: string; description: string; parameters: JsonObject }[] }[];
  generationConfig: { maxOutputTokens: number };
}

/** The body BuildMessages returns for each provider format. */
export interface Bodies {
  openai_chat: OpenAIChatBody;
  openai_responses: OpenAIResponsesBody;
  anthropic_messages: AnthropicMessagesBody;
  gemini: GeminiBody;
}

/** The body type of a format (`undefined` for neutral, whose messages are `messages`). */
export type BodyOf<F> = F extends JsonFormat ? Bodies[F] : undefined;
