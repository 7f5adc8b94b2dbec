// One recorded agent session of the corpus (/work/shared/corpus/swe-trajectories, or
// CTXD_CORPUS_DIR): its task, and per step the model's reply and the tool results the
// agent sent back, in each provider's shape.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export const CORPUS_DIR = process.env.CTXD_CORPUS_DIR || '/work/shared/corpus/swe-trajectories';
export const CORPUS_SESSION = 'django__django-11099';

export const TOOL = {
  name: 'bash',
  description: 'Execute a bash command',
  parameters: {
    type: 'object',
    properties: { command: { type: 'string', description: 'The bash command to execute' } },
    required: ['command'],
  },
};

/**
 * The recorded session: `{ system, task, steps: [{ text, calls: [{id, name, arguments}],
 * results: [{id, content}], completionTokens }] }`.
 */
export function loadSession(name = CORPUS_SESSION) {
  const file = path.join(CORPUS_DIR, `${name}.traj.json.gz`);
  const { messages } = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8'));
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const task = messages.find((m) => m.role === 'user')?.content ?? '';
  const steps = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const raw = message.tool_calls;
      const calls = raw && raw !== 'None' ? (typeof raw === 'string' ? parsePython(raw) : raw) : [];
      steps.push({
        text: message.content ?? '',
        calls: calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
        results: [],
        completionTokens: completionTokens(message.extra),
      });
    } else if (message.role === 'tool') {
      const step = steps.at(-1);
      if (!step) throw new Error('a tool result before any assistant message');
      step.results.push({ id: message.tool_call_id, content: message.content ?? '' });
    }
  }
  return { system, task, steps };
}

function completionTokens(extra) {
  const recorded = typeof extra === 'object' ? extra?.response?.usage?.completion_tokens : undefined;
  if (Number.isInteger(recorded)) return recorded;
  const match = typeof extra === 'string' ? /'completion_tokens': (\d+)/.exec(extra) : null;
  return match ? Number(match[1]) : 1;
}

/** A Python literal (repr of dicts, lists, strings, numbers, None/True/False) as a JS value. */
export function parsePython(text) {
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      const out = c === '{' ? {} : [];
      for (;;) {
        ws();
        if (text[i] === close) {
          i++;
          return out;
        }
        if (c === '{') {
          const key = value();
          ws();
          if (text[i++] !== ':') throw new SyntaxError(`':' expected at ${i}`);
          out[key] = value();
        } else {
          out.push(value());
        }
        ws();
        if (text[i] === ',') i++;
      }
    }
    if (c === "'" || c === '"') return string(c);
    const word = /^(None|True|False|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/.exec(text.slice(i));
    if (!word) throw new SyntaxError(`unexpected ${JSON.stringify(c)} at ${i}`);
    i += word[0].length;
    return word[0] === 'None' ? null : word[0] === 'True' ? true : word[0] === 'False' ? false : Number(word[0]);
  };
  const ESCAPES = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '0': '\0', a: '\x07', b: '\b', f: '\f', v: '\v' };
  const string = (quote) => {
    i++;
    let out = '';
    for (;;) {
      const c = text[i++];
      if (c === undefined) throw new SyntaxError('unterminated string');
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = text[i++];
      if (e === 'x' || e === 'u' || e === 'U') {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        out += String.fromCodePoint(parseInt(text.slice(i, i + n), 16));
        i += n;
      } else if (e in ESCAPES) {
        out += ESCAPES[e];
      } else {
        out += `\\${e}`;
      }
    }
  };
  const result = value();
  ws();
  if (i !== text.length) throw new SyntaxError(`trailing text at ${i}`);
  return result;
}

// ---------------------------------------------------------------------------------------
// The recorded step in each provider's shape: the reply a provider would have sent and
// the request items the agent appends after running the tools.

const created = 1_775_803_316;

export const SHAPES = {
  openai_chat: {
    reply(step, i, promptTokens) {
      return {
        id: `chatcmpl-${i}`,
        object: 'chat.completion',
        created,
        model: 'deepseek-chat',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: step.text,
              refusal: null,
              ...(step.calls.length
                ? {
                    tool_calls: step.calls.map((c) => ({
                      id: c.id,
                      type: 'function',
                      function: { name: c.name, arguments: c.arguments },
                    })),
                  }
                : {}),
            },
            logprobs: null,
            finish_reason: step.calls.length ? 'tool_calls' : 'stop',
          },
        ],
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: step.completionTokens,
          total_tokens: promptTokens + step.completionTokens,
        },
      };
    },
    results: (step) => step.results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.content })),
  },

  openai_responses: {
    reply(step, i, promptTokens) {
      const output = [];
      if (step.text) {
        output.push({
          type: 'message',
          id: `msg_${i}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: step.text, annotations: [] }],
        });
      }
      for (const [j, c] of step.calls.entries()) {
        output.push({ type: 'function_call', id: `fc_${i}_${j}`, call_id: c.id, name: c.name, arguments: c.arguments, status: 'completed' });
      }
      return {
        id: `resp_${i}`,
        object: 'response',
        created_at: created,
        status: 'completed',
        model: 'deepseek-chat',
        output,
        parallel_tool_calls: true,
        tool_choice: 'auto',
        tools: [],
        usage: {
          input_tokens: promptTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: step.completionTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: promptTokens + step.completionTokens,
        },
      };
    },
    results: (step) => step.results.map((r) => ({ type: 'function_call_output', call_id: r.id, output: r.content })),
  },

  anthropic_messages: {
    reply(step, i, promptTokens) {
      const content = [];
      if (step.text) content.push({ type: 'text', text: step.text });
      for (const c of step.calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.arguments) });
      return {
        id: `msg_${i}`,
        type: 'message',
        role: 'assistant',
        model: 'deepseek-chat',
        content,
        stop_reason: step.calls.length ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: promptTokens, output_tokens: step.completionTokens },
      };
    },
    results: (step) =>
      step.results.length
        ? [{ role: 'user', content: step.results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content })) }]
        : [],
  },

  gemini: {
    reply(step, i, promptTokens) {
      const parts = [];
      if (step.text) parts.push({ text: step.text });
      for (const c of step.calls) parts.push({ functionCall: { id: c.id, name: c.name, args: JSON.parse(c.arguments) } });
      return {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: promptTokens,
          candidatesTokenCount: step.completionTokens,
          totalTokenCount: promptTokens + step.completionTokens,
        },
        modelVersion: 'deepseek-chat',
        responseId: `resp_${i}`,
      };
    },
    results: (step) =>
      step.results.length
        ? [
            {
              role: 'user',
              parts: step.results.map((r) => ({
                functionResponse: { id: r.id, name: 'bash', response: { output: r.content } },
              })),
            },
          ]
        : [],
  },
};
