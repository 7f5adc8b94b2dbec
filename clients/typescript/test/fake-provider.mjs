// A fake model provider on loopback for the agent-loop test: it serves the recorded
// replies at the paths the official SDKs call (Chat Completions, Responses, Anthropic
// Messages, Gemini generateContent) and checks every request it receives: the body is
// the one ctxd built, no tool call is left without its result nor a result without its
// call, and ctxd's budget report for it is within the window. A request that fails a
// check gets HTTP 400 (the SDK call throws) and is listed in `problems`.
import { isDeepStrictEqual } from 'node:util';
import http from 'node:http';

const ROUTES = [
  [/^\/v1\/chat\/completions$/, 'openai_chat'],
  [/^\/v1\/responses$/, 'openai_responses'],
  [/^\/v1\/messages$/, 'anthropic_messages'],
  [/^\/v1beta\/models\/[^/:]+:generateContent$/, 'gemini'],
];

// The part of each format's body that holds the conversation, and how it is checked.
const CONVERSATION = {
  openai_chat: (body) => body.messages,
  openai_responses: (body) => body.input,
  anthropic_messages: (body) => body.messages,
  gemini: (body) => body.contents,
};

export class FakeProvider {
  static async start() {
    const provider = new FakeProvider();
    await new Promise((resolve) => provider.server.listen(0, '127.0.0.1', resolve));
    provider.url = `http://127.0.0.1:${provider.server.address().port}`;
    return provider;
  }

  constructor() {
    this.expected = null;
    this.requests = [];
    this.problems = [];
    this.server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => this.answer(req, Buffer.concat(chunks).toString('utf8'), res));
    });
  }

  /** The next request: in `format`, the body ctxd `built`, answered with `reply`. */
  expect(format, built, reply) {
    this.expected = { format, built, reply };
  }

  answer(req, text, res) {
    const path = new URL(req.url, this.url).pathname;
    const format = ROUTES.find(([pattern]) => pattern.test(path))?.[1];
    const expected = this.expected;
    this.expected = null;
    const problems = [];
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push('the body is not JSON');
    }
    if (!expected) problems.push(`an unexpected request to ${path}`);
    else if (format !== expected.format) problems.push(`${path} called, ${expected.format} expected`);
    if (body && expected && format === expected.format) {
      problems.push(...check(format, body, expected.built));
    }
    const n = this.requests.push({ format, path, body });
    if (problems.length) {
      this.problems.push(...problems.map((p) => `request ${n} (${format ?? path}): ${p}`));
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: problems.join('; '), type: 'invalid_request_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(expected.reply));
  }

  close() {
    return new Promise((resolve) => this.server.close(resolve));
  }
}

function check(format, body, built) {
  const problems = [];
  const conversation = CONVERSATION[format](body);
  if (!Array.isArray(conversation) || conversation.length === 0) return ['no conversation in the body'];
  if (!isDeepStrictEqual(conversation, CONVERSATION[format](built.body))) {
    problems.push('the conversation sent is not the one ctxd built');
  }
  problems.push(...PAIRING[format](conversation));
  const { breakdown, status } = built.budget;
  if (status === 'BUDGET_STATUS_OVER') problems.push('ctxd reported the request OVER budget');
  if (breakdown.totalTokens + breakdown.outputReserveTokens > breakdown.contextWindowTokens) {
    problems.push(
      `prompt ${breakdown.totalTokens} + reserve ${breakdown.outputReserveTokens} exceed the ${breakdown.contextWindowTokens}-token window`,
    );
  }
  return problems;
}

// Tool calls and results pair up: every call answered before anything else is said, every
// result answering a call made before it.
const PAIRING = {
  openai_chat(messages) {
    const problems = [];
    let pending = new Set();
    for (const [i, m] of messages.entries()) {
      if (m.role === 'tool') {
        if (!pending.delete(m.tool_call_id)) problems.push(`messages[${i}] answers no pending tool call`);
        continue;
      }
      if (pending.size) problems.push(`messages[${i}] comes before the results of ${[...pending]}`);
      pending = new Set(m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls.map((c) => c.id) : []);
    }
    if (pending.size) problems.push(`the request ends with unanswered tool calls ${[...pending]}`);
    return problems;
  },

  openai_responses(items) {
    const problems = [];
    let pending = new Set();
    let inCalls = false;
    for (const [i, item] of items.entries()) {
      if (item.type === 'function_call') {
        if (!inCalls && pending.size) problems.push(`input[${i}] comes before the outputs of ${[...pending]}`);
        pending.add(item.call_id);
        inCalls = true;
      } else if (item.type === 'function_call_output') {
        if (!pending.delete(item.call_id)) problems.push(`input[${i}] answers no pending function call`);
        inCalls = false;
      } else {
        if (pending.size) problems.push(`input[${i}] comes before the outputs of ${[...pending]}`);
        inCalls = false;
      }
    }
    if (pending.size) problems.push(`the request ends with unanswered function calls ${[...pending]}`);
    return problems;
  },

  anthropic_messages(messages) {
    const problems = [];
    if (messages[0]?.role !== 'user') problems.push('the first message is not a user message');
    let calls = new Set();
    for (const [i, m] of messages.entries()) {
      if (i > 0 && messages[i - 1].role === m.role) problems.push(`messages[${i}] has the same role as the one before`);
      const blocks = typeof m.content === 'string' ? [] : m.content;
      if (m.role === 'user') {
        const answered = new Set(blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id));
        for (const id of answered) if (!calls.has(id)) problems.push(`messages[${i}] answers ${id}, not called just before`);
        for (const id of calls) if (!answered.has(id)) problems.push(`messages[${i}] leaves tool_use ${id} unanswered`);
        calls = new Set();
      } else {
        calls = new Set(blocks.filter((b) => b.type === 'tool_use').map((b) => b.id));
      }
    }
    if (messages.at(-1)?.role !== 'user') problems.push('the request does not end with a user message');
    return problems;
  },

  gemini(contents) {
    const problems = [];
    let calls = [];
    for (const [i, c] of contents.entries()) {
      const parts = c.parts ?? [];
      if (c.role === 'user') {
        const answered = parts.filter((p) => p.functionResponse).map((p) => p.functionResponse.name);
        if (answered.length !== calls.length) {
          problems.push(`contents[${i}] answers ${answered.length} function calls, ${calls.length} were made just before`);
        }
        calls = [];
      } else {
        if (calls.length) problems.push(`contents[${i}] follows unanswered function calls`);
        calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall.name);
      }
    }
    if (contents.at(-1)?.role !== 'user') problems.push('the request does not end with a user turn');
    return problems;
  },
};
