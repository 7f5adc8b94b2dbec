// The SDK against a real `ctxd serve`: every helper of a session, the error classes with
// their decoded details, a retried append that is not duplicated, and the event iterator
// resuming across a server restart. Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import {
  AlreadyExistsError,
  ConflictError,
  CtxdClient,
  DoesNotFitError,
  InvalidArgumentError,
  NotFoundError,
  ResourceExhaustedError,
  ToolResult,
  UnauthenticatedError,
} from 'ctxd';

import { Collector, CuttingProxy } from './helpers.mjs';
import { startServer } from './server.mjs';

const TOOLS = [
  {
    name: 'bash',
    description: 'Execute a bash command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];
const POLICY = { contextWindowTokens: 16_000, maxOutputTokens: 2_000, evictionThresholdTokens: 2_000 };
const apiKey = process.env.CTXD_TEST_API_KEY || undefined;
const newId = (label) => `ts-${label}-${randomUUID()}`;

// A tool step: the assistant's call and its result of about `words` tokens.
function step(id, command, output) {
  return [
    { role: 'assistant', content: '', toolCalls: [{ id, name: 'bash', argumentsJson: JSON.stringify({ command }) }] },
    { role: 'tool', toolCallId: id, content: output },
  ];
}
const bigOutput = (n, words) => Array.from({ length: words }, (_, i) => `line${n}_${i}`).join('\n');

describe('session helpers', () => {
  let server;
  let client;
  before(async () => {
    server = await startServer();
    client = new CtxdClient(server.addr, { apiKey });
  });
  after(async () => {
    client?.close();
    await server?.stop();
  });

  test('create, append, build in every rendered format, check, expand, search, compact, get, delete', async () => {
    const id = newId('helpers');
    const session = await client.createSession({ id, policy: { ...POLICY, toolOutputProtectTokens: 200 } });
    assert.equal(session.id, id);
    assert.equal(session.info.policy.contextWindowTokens, 16_000);

    // Results of about 450 tokens: under the eviction size in force (583, a twenty-fourth
    // of the 14 000-token prompt room), so they stay whole until cleared.
    const first = await session.append(
      [{ role: 'user', content: 'Find the failing zebra_unicorn test.' }, ...step('call_1', 'pytest -x', bigOutput(1, 100))],
      { usage: { inputTokens: 100, outputTokens: 20 } },
    );
    assert.deepEqual(first.seqs, [1, 2, 3]);
    assert.equal(first.replayed, false);
    // A provider's reply and its tool results in one call: the Chat Completions shape.
    const reply = {
      id: 'chatcmpl-2',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'bash', arguments: '{"command":"cat setup.py"}' } }],
          },
        },
      ],
      usage: { prompt_tokens: 400, completion_tokens: 10, total_tokens: 410 },
    };
    const native = await session.appendResponse(reply, {
      format: 'openai_chat',
      items: [{ role: 'tool', tool_call_id: 'call_2', content: bigOutput(2, 100) }],
    });
    assert.deepEqual(native.seqs, [4, 5]);

    const neutral = await session.build({ systemPrompt: 'Be brief.', tools: TOOLS });
    assert.equal(neutral.body, undefined);
    assert.deepEqual(
      neutral.messages.map((m) => m.role),
      ['ROLE_USER', 'ROLE_ASSISTANT', 'ROLE_TOOL', 'ROLE_ASSISTANT', 'ROLE_TOOL'],
    );
    assert.equal(neutral.messages[2].toolCallId, 'call_1');
    const chat = await session.build({ format: 'openai_chat', systemPrompt: 'Be brief.', tools: TOOLS });
    assert.equal(chat.body.messages[0].role, 'system');
    assert.equal(chat.body.messages[2].tool_calls[0].id, 'call_1');
    assert.equal(chat.body.tools[0].function.name, 'bash');
    const anthropic = await session.build({ format: 'anthropic_messages', systemPrompt: 'Be brief.', tools: TOOLS });
    // The system prompt as a text block with the cache breakpoint after it.
    assert.deepEqual(anthropic.body.system, [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    assert.equal(anthropic.body.messages[1].content[0].type, 'tool_use');
    assert.equal(anthropic.body.max_tokens, 2_000);
    assert.ok(chat.budget.breakdown.totalTokens > 0);
    assert.equal(chat.lastSeq, 5);

    const base = await session.check({ systemPrompt: 'Be brief.', tools: TOOLS });
    const more = await session.check({
      systemPrompt: 'Be brief.',
      tools: TOOLS,
      pendingMessages: [{ role: 'user', content: bigOutput(3, 200) }],
    });
    assert.ok(more.breakdown.historyTokens > base.breakdown.historyTokens, 'pending messages count');

    const expanded = await session.expand({ firstSeq: 2, lastSeq: 3 });
    assert.deepEqual(
      expanded.messages.map((m) => m.seq),
      [2, 3],
    );
    assert.equal(expanded.messages[1].content, bigOutput(1, 100));
    const listed = await session.expand({ seqs: [5, 1] });
    assert.deepEqual(
      listed.messages.map((m) => m.seq),
      [1, 5],
    );

    const hits = await session.search('zebra_unicorn');
    assert.ok(hits.some((hit) => hit.seq === 1), `search hits: ${JSON.stringify(hits)}`);
    const tenantHits = await client.search('zebra_unicorn', { scope: 'messages', roles: ['user'] });
    assert.ok(tenantHits.some((hit) => hit.sessionId === id));

    const dry = await session.compact({ mode: 'clear_tool_results', targetTokens: 1, dryRun: true });
    assert.equal(dry.applied, false);
    assert.deepEqual(dry.clearedSeqs, [3], 'the older tool result would be cleared, the newest kept');
    const cleared = await session.compact({ mode: 'clear_tool_results', targetTokens: 1 });
    assert.equal(cleared.applied, true);
    assert.deepEqual(cleared.clearedSeqs, [3]);
    assert.ok(cleared.tokensAfter < cleared.tokensBefore);
    const view = await session.build();
    assert.equal(view.messages[2].viewState, 'VIEW_STATE_CLEARED');
    const original = await session.expand({ seqs: [3] });
    assert.equal(original.messages[0].content, bigOutput(1, 100), 'the original stays whole');

    const state = await session.get(true);
    assert.equal(state.session.messageCount, 5);
    assert.equal(state.session.version, cleared.version);
    assert.equal(state.session.compaction.clearedMessages, 1);

    // The clearing undone by its event's cursor: a dry run first, then for real.
    let clearing;
    for await (const event of session.events({ kinds: ['EVENT_KIND_TOOL_RESULTS_CLEARED'] })) {
      clearing = event;
      break;
    }
    const preview = await session.revertCompaction({ eventCursor: clearing.cursor }, { dryRun: true });
    assert.equal(preview.applied, false);
    assert.deepEqual(preview.restoredSeqs, [3]);
    const reverted = await session.revertCompaction({ eventCursor: clearing.cursor });
    assert.equal(reverted.applied, true);
    assert.equal(reverted.version, cleared.version + 1);
    assert.equal((await session.build()).messages[2].viewState, 'VIEW_STATE_FULL');
    const held = await session.get();
    assert.equal(held.session.compaction.clearedMessages, 0);
    assert.equal(held.session.compaction.compactionHeld, true);

    const handle = client.session(id);
    assert.equal((await handle.get()).session.sessionId, id);
    const deleted = await session.delete();
    assert.equal(deleted.deletedMessages, 5);
    await assert.rejects(session.get(), NotFoundError);
  });

  test('ToolResults are written in each provider format; the handle keeps the system prompt and tools', async () => {
    for (const format of ['openai_chat', 'openai_responses', 'anthropic_messages', 'gemini']) {
      const session = await client.createSession({ policy: POLICY, systemPrompt: 'Be brief.', tools: TOOLS });
      const call = (id) => ({ id, name: 'bash', argumentsJson: '{"command":"ls"}' });
      await session.append([
        { role: 'user', content: 'List it twice.' },
        { role: 'assistant', content: '', toolCalls: [call(`${format}_1`), call(`${format}_2`)] },
      ]);
      const appended = await session.appendToolResults(
        [new ToolResult(`${format}_1`, 'a.txt', 'bash'), new ToolResult(`${format}_2`, 'b.txt', 'bash')],
        { format },
      );
      assert.deepEqual(appended.seqs, [3, 4], format);
      const log = await session.expand({ firstSeq: 3, lastSeq: 4 });
      assert.deepEqual(
        log.messages.map((m) => [m.role, m.toolCallId, m.content]),
        [
          ['ROLE_TOOL', `${format}_1`, 'a.txt'],
          ['ROLE_TOOL', `${format}_2`, 'b.txt'],
        ],
        format,
      );
      const built = await session.build({ format: 'openai_chat' });
      assert.deepEqual(built.body.messages[0], { role: 'system', content: 'Be brief.' }, 'the default system prompt');
      assert.equal(built.body.tools[0].function.name, 'bash', 'the default tools');
      const handle = client.session(session.id, { systemPrompt: 'Other.' });
      assert.equal((await handle.build({ format: 'openai_chat' })).body.messages[0].content, 'Other.');
      await session.delete();
    }
  });

  test('errors carry their details: violations, current version, budget breakdown', async () => {
    const session = await client.createSession({ policy: POLICY });
    await assert.rejects(client.createSession({ id: session.id }), AlreadyExistsError);

    const invalid = await session.append([{ role: 'tool', content: 'orphan' }]).catch((e) => e);
    assert.ok(invalid instanceof InvalidArgumentError, String(invalid));
    assert.deepEqual(
      invalid.violations.map((v) => v.field),
      ['messages[0].tool_call_id'],
    );
    assert.match(invalid.violations[0].description, /tool call/);

    await session.append([{ role: 'user', content: 'one' }]);
    await session.append([{ role: 'user', content: 'two' }]);
    const conflict = await session.append([{ role: 'user', content: 'three' }], { expectedVersion: 1 }).catch((e) => e);
    assert.ok(conflict instanceof ConflictError, String(conflict));
    assert.equal(conflict.currentVersion, 2);
    assert.equal((await session.get()).session.messageCount, 2, 'nothing appended by the rejected call');

    const tooBig = await session.build({ systemPrompt: 'word '.repeat(20_000) }).catch((e) => e);
    assert.ok(tooBig instanceof DoesNotFitError, String(tooBig));
    assert.equal(tooBig.breakdown.context_window_tokens, 16_000);
    assert.equal(tooBig.breakdown.output_reserve_tokens, 2_000);
    assert.equal(tooBig.breakdown.available_tokens, 14_000);
    assert.ok(tooBig.breakdown.system_tokens > 14_000);

    const native = await session
      .appendResponse({ id: 'chatcmpl-1', object: 'chat.completion', choices: 'none' }, { format: 'openai_chat' })
      .catch((e) => e);
    assert.ok(native instanceof InvalidArgumentError, String(native));
    assert.match(native.violations[0].field, /^response_json: \$/, 'the violation names the JSON path');
    assert.equal((await session.get()).session.messageCount, 2, 'nothing appended by the rejected body');

    await assert.rejects(client.session(newId('missing')).get(), NotFoundError);
    const stranger = new CtxdClient(server.addr, { apiKey: 'ctxd_not_a_key' });
    await assert.rejects(stranger.session(session.id).get(), UnauthenticatedError);
    stranger.close();
  });

  test('a retried append whose first answer was lost is not appended twice', async () => {
    const proxy = await CuttingProxy.start(server.addr);
    const viaProxy = new CtxdClient(proxy.addr, { apiKey, retry: { initialBackoffMs: 50 } });
    try {
      const session = await viaProxy.createSession({ policy: POLICY });
      await session.append([{ role: 'user', content: 'before' }]);
      proxy.cutNextReply();
      const result = await session.append([{ role: 'user', content: 'the retried one' }]);
      assert.equal(proxy.cuts, 1, 'the first answer was cut');
      assert.equal(result.replayed, true, 'the retry got the first attempt stored answer');
      assert.deepEqual(result.seqs, [2]);
      const log = await session.expand({ firstSeq: 1, lastSeq: 2 });
      assert.deepEqual(
        log.messages.map((m) => m.content),
        ['before', 'the retried one'],
      );
      assert.equal((await session.get()).session.messageCount, 2);

      // The same for AppendNative: the tool result of a call, its answer lost once.
      await session.append([step('call_r', 'ls', '')[0]]);
      proxy.cutNextReply();
      const native = await session.appendToolResults([{ role: 'tool', tool_call_id: 'call_r', content: 'README.md' }], {
        format: 'openai_chat',
      });
      assert.equal(proxy.cuts, 2);
      assert.equal(native.replayed, true);
      assert.deepEqual(native.seqs, [4]);
      assert.equal((await session.get()).session.messageCount, 4);
    } finally {
      viaProxy.close();
      await proxy.close();
    }
  });
});

describe('events through a connection that goes silent', () => {
  test('keepalive notices it and the iterator resubscribes on a new connection', { timeout: 60_000 }, async () => {
    const server = await startServer();
    const proxy = await CuttingProxy.start(server.addr);
    const direct = new CtxdClient(server.addr, { apiKey });
    const viaProxy = new CtxdClient(proxy.addr, {
      apiKey,
      channelOptions: { 'grpc.keepalive_time_ms': 500, 'grpc.keepalive_timeout_ms': 500 },
    });
    let collector;
    try {
      const session = await direct.createSession({ policy: POLICY });
      collector = new Collector(viaProxy.session(session.id).events());
      await session.append([{ role: 'user', content: 'Go.' }, ...step('call_s1', 'cat s1', bigOutput(1, 3_000))]);
      await collector.waitUntil((events) => events.some((e) => e.kind === 'EVENT_KIND_OUTPUT_EVICTED'));
      proxy.freeze();
      await session.append(step('call_s2', 'cat s2', bigOutput(2, 3_000)));
      const events = await collector.waitUntil(
        (all) => all.filter((e) => e.kind === 'EVENT_KIND_OUTPUT_EVICTED').length === 2,
        'the event committed while the connection was silent',
      );
      assert.deepEqual(
        events.map((e) => e.sessionSeq),
        events.map((_, i) => i + 1),
      );
      assert.ok(collector.stream.reconnects >= 1);
    } finally {
      await collector?.close();
      viaProxy.close();
      direct.close();
      await proxy.close();
      await server.stop();
    }
  });
});

describe('quota errors', () => {
  test('RESOURCE_EXHAUSTED carries the retry delay', async () => {
    const server = await startServer(undefined, ['--quota-append-bytes-per-min', '3000']);
    const client = new CtxdClient(server.addr, { apiKey });
    try {
      const session = await client.createSession({ policy: POLICY });
      await session.append([{ role: 'user', content: 'x'.repeat(2_000) }]);
      const error = await session.append([{ role: 'user', content: 'y'.repeat(2_000) }]).catch((e) => e);
      assert.ok(error instanceof ResourceExhaustedError, String(error));
      assert.ok(error.retryDelayMs > 0 && error.retryDelayMs <= 60_000, `retryDelayMs ${error.retryDelayMs}`);
      assert.equal(error.violations[0].subject, 'quota_append_bytes_per_min');
    } finally {
      client.close();
      await server.stop();
    }
  });
});

describe('events', () => {
  test('fromNow skips the backlog, on the session stream and the tenant stream', { timeout: 60_000 }, async () => {
    const server = await startServer();
    const client = new CtxdClient(server.addr, { apiKey });
    const collectors = [];
    try {
      const session = await client.createSession({ policy: POLICY });
      await session.append([{ role: 'user', content: 'Go.' }, ...step('call_n1', 'cat n1', bigOutput(1, 3_000))]);
      const backlog = await session.get();
      const own = new Collector(session.events({ fromNow: true, heartbeatIntervalMs: 200 }));
      const tenant = new Collector(client.events({ fromNow: true, kinds: ['EVENT_KIND_OUTPUT_EVICTED'], heartbeatIntervalMs: 200 }));
      collectors.push(own, tenant);
      await Promise.all([own.stream.live, tenant.stream.live]);
      await session.append(step('call_n2', 'cat n2', bigOutput(2, 3_000)));
      const seen = await own.waitUntil((events) => events.some((e) => e.kind === 'EVENT_KIND_OUTPUT_EVICTED'));
      assert.ok(seen.every((e) => e.sessionVersion > backlog.session.version), 'nothing from before the subscription');
      const all = await tenant.waitUntil((events) => events.some((e) => e.sessionId === session.id));
      const mine = all.filter((e) => e.sessionId === session.id);
      assert.deepEqual(
        mine.map((e) => e.outputEvicted.seq),
        [5],
      );
    } finally {
      for (const c of collectors) await c.close();
      client.close();
      await server.stop();
    }
  });


  test('the iterator resumes across a server restart with nothing lost or repeated', { timeout: 180_000 }, async () => {
    const server = await startServer();
    const client = new CtxdClient(server.addr, { apiKey });
    let collector;
    try {
      const session = await client.createSession({ policy: POLICY });
      collector = new Collector(session.events({ heartbeatIntervalMs: 500 }));
      await session.append([{ role: 'user', content: 'Go.' }]);
      // Each tool result over the eviction threshold is one OUTPUT_EVICTED event.
      for (let i = 1; i <= 3; i++) await session.append(step(`call_a${i}`, `cat a${i}`, bigOutput(i, 3_000)));
      const evicted = (events) => events.filter((e) => e.kind === 'EVENT_KIND_OUTPUT_EVICTED');
      await collector.waitUntil((events) => evicted(events).length === 3);
      const before = collector.events.length;

      await server.stop();
      await server.start(server.addr);
      for (let i = 4; i <= 6; i++) await session.append(step(`call_b${i}`, `cat b${i}`, bigOutput(i, 3_000)));
      await collector.waitUntil((events) => evicted(events).length === 6);
      await session.delete();
      await collector.waitUntil((events) => events.at(-1)?.kind === 'EVENT_KIND_SESSION_DELETED');
      await collector.finished;
      const all = collector.events;
      assert.equal(collector.error, null, String(collector.error));
      assert.ok(all.length > before, 'events after the restart');
      assert.deepEqual(
        all.map((e) => e.sessionSeq),
        all.map((_, i) => i + 1),
        `session_seq 1..n, none lost, none repeated: ${all.map((e) => `${e.sessionSeq}:${e.kind}`).join(' ')}`,
      );
      assert.deepEqual(
        evicted(all).map((e) => e.outputEvicted.seq),
        [3, 5, 7, 9, 11, 13],
      );
      assert.ok(collector.stream.reconnects >= 1, 'the stream was resubscribed');
    } catch (error) {
      error.message += `\nserver log:\n${server.logTail()}`;
      throw error;
    } finally {
      await collector?.close();
      client.close();
      await server.stop();
    }
  });
});
