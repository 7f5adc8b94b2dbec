// The agent loop with the providers' official SDKs: a recorded coding-agent session of
// the corpus replayed through ctxd and a fake provider on loopback, in each provider's
// shape. Each step: build(format) → the provider SDK's call → appendResponse(reply) →
// appendToolResults(recorded outputs). The window is small, so the session is compacted
// on the way; the fake provider checks every request (see fake-provider.mjs), and the
// event iterator follows the session across a server restart halfway.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';

import { CtxdClient } from 'ctxd';

import { loadSession, SHAPES, TOOL } from './corpus.mjs';
import { FakeProvider } from './fake-provider.mjs';
import { Collector } from './helpers.mjs';
import { startServer } from './server.mjs';

const MODEL = 'deepseek-chat';
// Small enough that the recorded session (about 14 000 tokens in all) is compacted.
const POLICY = { contextWindowTokens: 6_000, maxOutputTokens: 1_000, tokenizer: 'TOKENIZER_DEEPSEEK_V3' };
const apiKey = process.env.CTXD_TEST_API_KEY || undefined;


const recorded = loadSession();
let server;
let provider;
let client;

before(async () => {
  server = await startServer();
  provider = await FakeProvider.start();
  client = new CtxdClient(server.addr, { apiKey });
});
after(async () => {
  client?.close();
  await provider?.close();
  await server?.stop();
});

// Each provider's official SDK, pointed at the fake, sending the body ctxd built.
const CALL = {
  openai_chat: (body) =>
    new OpenAI({ apiKey: 'test', baseURL: `${provider.url}/v1`, maxRetries: 0 }).chat.completions.create({
      model: MODEL,
      ...body,
    }),
  openai_responses: (body) =>
    new OpenAI({ apiKey: 'test', baseURL: `${provider.url}/v1`, maxRetries: 0 }).responses.create({ model: MODEL, ...body }),
  anthropic_messages: (body) =>
    new Anthropic({ apiKey: 'test', baseURL: provider.url, maxRetries: 0 }).messages.create({ model: MODEL, ...body }),
  gemini: (body) =>
    new GoogleGenAI({ apiKey: 'test', httpOptions: { baseUrl: provider.url } }).models.generateContent({
      model: MODEL,
      contents: body.contents,
      config: { systemInstruction: body.systemInstruction, tools: body.tools },
    }),
};

describe('agent loop through compaction with the official SDKs', () => {
  for (const format of Object.keys(SHAPES)) {
    test(format, { timeout: 300_000 }, async (t) => {
      const session = await client.createSession({ policy: POLICY, metadata: { format } });
      const collector = new Collector(session.events({ heartbeatIntervalMs: 500 }), 60_000);
      const before = provider.requests.length;
      const halfway = Math.floor(recorded.steps.length / 2);
      let compactedBuilds = 0;
      try {
        await session.append([{ role: 'user', content: recorded.task }]);
        for (const [i, step] of recorded.steps.entries()) {
          const built = await session.build({ format, systemPrompt: recorded.system, tools: [TOOL] });
          if (built.summaries.length > 0 || built.trimmed.messages > 0 || built.firstSeq > 1) compactedBuilds++;
          const reply = SHAPES[format].reply(step, i, built.budget.breakdown.tokenizerTotalTokens);
          provider.expect(format, built, reply);
          const response = await CALL[format](built.body);
          await session.appendResponse(response, { format });
          const results = SHAPES[format].results(step);
          if (results.length) await session.appendToolResults(results, { format });
          if (i === halfway) {
            await server.stop();
            await server.start(server.addr);
          }
        }
        assert.deepEqual(provider.problems, []);
        assert.equal(provider.requests.length - before, recorded.steps.length);
        assert.ok(compactedBuilds > 0, 'the window forced compaction');

        // Everything appended is in the log, tool outputs byte-exact.
        const state = await session.get(true);
        const calls = recorded.steps.reduce((n, s) => n + s.results.length, 0);
        assert.equal(state.session.messageCount, 1 + recorded.steps.length + calls);
        assert.ok(state.session.compaction.summariesWritten + state.session.compaction.clearedMessages > 0);
        const log = await session.expand({ firstSeq: 1, lastSeq: state.session.messageCount });
        const tools = log.messages.filter((m) => m.role === 'ROLE_TOOL');
        assert.deepEqual(
          tools.map((m) => m.toolCallId),
          recorded.steps.flatMap((s) => s.results.map((r) => r.id)),
        );
        if (format !== 'gemini') {
          assert.deepEqual(
            tools.map((m) => m.content),
            recorded.steps.flatMap((s) => s.results.map((r) => r.content)),
          );
        }

        // The events, across the restart: 1..n, none lost or repeated, compaction among them.
        await session.delete();
        await collector.waitUntil((events) => events.at(-1)?.kind === 'EVENT_KIND_SESSION_DELETED', 'the deletion');
        await collector.finished;
        const events = collector.events;
        assert.deepEqual(
          events.map((e) => e.sessionSeq),
          events.map((_, i) => i + 1),
        );
        assert.ok(
          events.some((e) => e.kind === 'EVENT_KIND_COMPACTION_COMPLETED' || e.kind === 'EVENT_KIND_TOOL_RESULTS_CLEARED'),
          `compaction events: ${events.map((e) => e.kind).join(' ')}`,
        );
        assert.ok(collector.stream.reconnects >= 1, 'the iterator resubscribed after the restart');
        const kinds = {};
        for (const e of events) kinds[e.kind] = (kinds[e.kind] ?? 0) + 1;
        t.diagnostic(
          `${recorded.steps.length} steps, ${compactedBuilds} compacted builds, ` +
            `${state.session.compaction.summariesWritten} summaries, ${state.session.compaction.clearedMessages} cleared, ` +
            `${collector.stream.reconnects} resubscriptions, events ${JSON.stringify(kinds)}`,
        );
      } catch (error) {
        error.message += `\nprovider problems: ${JSON.stringify(provider.problems.slice(0, 5))}\nserver log:\n${server.logTail(15)}`;
        throw error;
      } finally {
        await collector.close();
      }
    });
  }
});
