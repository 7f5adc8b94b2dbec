import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import OpenAI from 'openai';

import { CtxdClient, DoesNotFitError, ToolResult, isRecallTool } from 'ctxd';

const run = promisify(execFile);
const ctxd = new CtxdClient('127.0.0.1:50051', { apiKey: process.env['CTXD_API_KEY'] });
const openai = new OpenAI();

const tools = [
  {
    name: 'bash',
    description: 'Execute a bash command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

export async function solve(task: string): Promise<string> {
  const session = await ctxd.createSession({
    policy: { contextWindowTokens: 128_000, maxOutputTokens: 8_000, recallTools: true },
    systemPrompt: 'You are a coding agent.', // sent with every build
    tools,
  });
  await session.append([{ role: 'user', content: task }]);
  for (let step = 0; step < 100; step++) {
    // The request to send now: within the window, tool calls and results paired.
    let built;
    try {
      built = await session.build({ format: 'openai_chat' });
    } catch (error) {
      if (error instanceof DoesNotFitError) throw new Error(`the task does not fit: ${JSON.stringify(error.breakdown)}`);
      throw error;
    }
    const completion = await openai.chat.completions.create({ model: 'gpt-4o', ...built.body });
    // ctxd reads the message, its tool calls and the usage from the response itself.
    await session.appendResponse(completion, { format: 'openai_chat' });

    const calls = completion.choices[0]?.message.tool_calls ?? [];
    if (calls.length === 0) return completion.choices[0]?.message.content ?? '';
    const results: ToolResult[] = [];
    for (const call of calls) {
      if (call.type !== 'function') continue;
      if (isRecallTool(call.function.name)) {
        await session.answerRecall(call.id); // ctxd answers the model's recall of what compaction took
        continue;
      }
      const { command } = JSON.parse(call.function.arguments) as { command: string };
      const output = await run('bash', ['-c', command]).then(
        (r) => r.stdout + r.stderr,
        (e: { stdout?: string; stderr?: string; message: string }) => `${e.stdout ?? ''}${e.stderr ?? e.message}`,
      );
      results.push(new ToolResult(call.id, output));
    }
    if (results.length > 0) await session.appendToolResults(results, { format: 'openai_chat' });
  }
  throw new Error('no answer within 100 steps');
}
