// The SDK's own input types and their conversion to the proto requests. Output types are
// the generated ones (src/gen/), re-exported by index.ts under plain names.
import type { Message as PbMessage } from './gen/ctxd/v1/Message.js';
import type { OutputFormat } from './gen/ctxd/v1/OutputFormat.js';
import type { Role } from './gen/ctxd/v1/Role.js';
import type { Tools as PbTools } from './gen/ctxd/v1/Tools.js';

/** The provider shapes BuildMessages renders and AppendNative reads. */
export type JsonFormat = 'openai_chat' | 'openai_responses' | 'anthropic_messages' | 'gemini';
/** `neutral`: proto messages; the others: a provider request body. */
export type Format = 'neutral' | JsonFormat;

const FORMATS: Record<Format, OutputFormat> = {
  neutral: 'OUTPUT_FORMAT_NEUTRAL',
  openai_chat: 'OUTPUT_FORMAT_OPENAI_CHAT',
  openai_responses: 'OUTPUT_FORMAT_OPENAI_RESPONSES',
  anthropic_messages: 'OUTPUT_FORMAT_ANTHROPIC_MESSAGES',
  gemini: 'OUTPUT_FORMAT_GEMINI',
};

export function outputFormat(format: Format): OutputFormat {
  const value = FORMATS[format];
  if (value === undefined) {
    throw new TypeError(`format must be one of ${Object.keys(FORMATS).join(', ')}, not ${JSON.stringify(format)}`);
  }
  return value;
}

export function jsonFormat(format: JsonFormat): OutputFormat {
  if ((format as Format) === 'neutral') throw new TypeError('format must be a provider format, not neutral');
  return outputFormat(format);
}

/** A role by its short name or its proto name. */
export type RoleName = 'system' | 'user' | 'assistant' | 'tool' | Role;

const ROLES: Record<string, Role> = {
  system: 'ROLE_SYSTEM',
  user: 'ROLE_USER',
  assistant: 'ROLE_ASSISTANT',
  tool: 'ROLE_TOOL',
};

/** A message to append: the proto Message with the role by name. */
export interface MessageInput extends Omit<PbMessage, 'role'> {
  role: RoleName;
}

export function toPbMessage(message: MessageInput): PbMessage {
  const role = ROLES[message.role] ?? message.role;
  return { ...message, role: role as Role };
}

/** A tool offered to the model: its JSON Schema as an object (or as a JSON text). */
export interface ToolInput {
  name: string;
  description?: string;
  parameters?: Record<string, unknown> | string;
}

/** The tools of a request: definitions, or only what they cost in tokens. */
export type ToolsInput = ToolInput[] | { tokenCount: number };

export function toPbTools(tools: ToolsInput | undefined): PbTools | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return { tokenCount: tools.tokenCount };
  return {
    definitions: {
      items: tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? '',
        parametersJsonSchema:
          tool.parameters === undefined
            ? ''
            : typeof tool.parameters === 'string'
              ? tool.parameters
              : JSON.stringify(tool.parameters),
      })),
    },
  };
}

/** A provider body: an SDK's response object, a parsed JSON value, or the JSON text. */
export function toJsonText(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  const text = JSON.stringify(value, (key, inner: unknown) =>
    // @google/genai responses carry the HTTP response (headers) next to the body.
    key === 'sdkHttpResponse' ? undefined : inner,
  );
  if (text === undefined) throw new TypeError(`${what} must be a JSON value or a JSON text`);
  return text;
}

/**
 * A tool's output for a call, in no provider's shape: `appendToolResults` writes it in
 * the format's (Gemini needs the tool's `name`).
 */
export class ToolResult {
  constructor(
    readonly callId: string,
    readonly output: string,
    readonly name: string = '',
  ) {}
}

/**
 * Request items for AppendNative: provider items pass as they are; each run of
 * consecutive ToolResults is written in the format's shape (one user message for
 * Anthropic's and Gemini's results of one step).
 */
export function nativeItems(items: readonly unknown[], format: JsonFormat): unknown[] {
  const out: unknown[] = [];
  let run: ToolResult[] = [];
  const flush = () => {
    if (run.length > 0) out.push(...toolResultItems(run, format));
    run = [];
  };
  for (const item of items) {
    if (item instanceof ToolResult) {
      run.push(item);
    } else {
      flush();
      out.push(item);
    }
  }
  flush();
  return out;
}

function toolResultItems(results: ToolResult[], format: JsonFormat): unknown[] {
  switch (format) {
    case 'openai_chat':
      return results.map((r) => ({ role: 'tool', tool_call_id: r.callId, content: r.output }));
    case 'openai_responses':
      return results.map((r) => ({ type: 'function_call_output', call_id: r.callId, output: r.output }));
    case 'anthropic_messages':
      return [
        { role: 'user', content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.callId, content: r.output })) },
      ];
    case 'gemini':
      return [
        {
          role: 'user',
          parts: results.map((r) => ({ functionResponse: { id: r.callId, name: r.name, response: { output: r.output } } })),
        },
      ];
    default:
      throw new TypeError(`format must be a provider format, not ${JSON.stringify(format)}`);
  }
}

/** ctxd's recall tools: a session whose policy has recallTools gets them in every build. */
export const RECALL_TOOLS = ['ctxd_recall_search', 'ctxd_recall_expand'] as const;

/** Whether a tool call is to one of ctxd's recall tools: answer it with
 * `session.answerRecall(callId)` instead of running it. */
export function isRecallTool(name: string): boolean {
  return (RECALL_TOOLS as readonly string[]).includes(name);
}
