// Compile-time check (tsc --noEmit in ./run): the body types of src/bodies.ts are
// assignable to the request types of the providers' own SDKs, so a body from build() goes
// to the SDK as it is. A block or item appended natively comes back as it came and is
// typed `NativeBlock`; the Anthropic and Responses checks take the modeled ones (`never`
// for natives), which is every block ctxd itself writes.
import type Anthropic from '@anthropic-ai/sdk';
import type { GenerateContentParameters } from '@google/genai';
import type OpenAI from 'openai';

import type { AnthropicMessagesBody, Built, OpenAIResponsesBody } from '../src/index.js';

export function openaiChat(built: Built<'openai_chat'>): OpenAI.Chat.ChatCompletionCreateParamsNonStreaming {
  return { model: 'gpt-4.1', ...built.body };
}

export function openaiResponses(body: OpenAIResponsesBody<never>): OpenAI.Responses.ResponseCreateParamsNonStreaming {
  return { model: 'gpt-4.1', ...body };
}

export function anthropic(body: AnthropicMessagesBody<never>): Anthropic.MessageCreateParamsNonStreaming {
  // A tool's input_schema is the client's own JSON Schema, typed as any object; the SDK's
  // type wants `type: 'object'` spelled out.
  const tools = body.tools?.map((tool) => ({ ...tool, input_schema: { type: 'object' as const, ...tool.input_schema } }));
  return { model: 'claude-sonnet-4-5', ...body, tools };
}

export function gemini(built: Built<'gemini'>): GenerateContentParameters {
  const { contents, systemInstruction, tools, generationConfig } = built.body;
  return { model: 'gemini-2.5-pro', contents, config: { systemInstruction, tools, ...generationConfig } };
}

export function neutral(built: Built<'neutral'>): undefined {
  return built.body;
}
