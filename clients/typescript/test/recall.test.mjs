// Recall through the TypeScript SDK: a scripted model whose tool result was evicted
// searches for a line it held, reads the result back from where each answer stops, and
// acts on the recovered line; ctxd answers every recall call (session.answerRecall).
// Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { CtxdClient, RECALL_TOOLS, isRecallTool } from 'ctxd';

import { startServer } from './server.mjs';

let server;
let client;

before(async () => {
  server = await startServer();
  client = new CtxdClient(server.addr, { apiKey: process.env.CTXD_TEST_API_KEY || undefined });
});

after(async () => {
  client.close();
  await server.stop();
});

const lines = (from, to) =>
  Array.from({ length: to - from }, (_, i) => `tests/test_models.py::test_case_${from + i} PASSED\n`).join('');
const OUTPUT = `${lines(0, 200)}tests/test_views.py::test_unicode_slug FAILED - AssertionError: zebrafish-slug\n${lines(200, 400)}`;
const BASH = [{ name: 'bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } }];

test('a scripted model recovers what eviction took, through search and expand', async () => {
  const session = await client.createSession({
    policy: { contextWindowTokens: 16000, maxOutputTokens: 2000, evictionThresholdTokens: 300, recallTools: true },
    tools: BASH,
  });
  await session.append([
    { role: 'user', content: 'Why does the slug test fail?' },
    { role: 'assistant', content: '', toolCalls: [{ id: 't1', name: 'bash', argumentsJson: '{"command":"pytest"}' }] },
  ]);
  const evicted = await session.append([{ role: 'tool', toolCallId: 't1', content: OUTPUT }]);
  assert.deepEqual(evicted.evictedSeqs, evicted.seqs);
  const first = await session.build({ format: 'openai_chat' });
  assert.deepEqual(first.body.tools?.map((tool) => tool.function.name), ['bash', ...RECALL_TOOLS]);
  assert.ok(!JSON.stringify(first.body.messages).includes('zebrafish'), 'the preview does not hold it');

  // The model's turn: one call, answered by ctxd; returns what the next request shows.
  const modelCalls = async (id, name, args) => {
    await session.append([{ role: 'assistant', content: '', toolCalls: [{ id, name, argumentsJson: JSON.stringify(args) }] }]);
    assert.ok(isRecallTool(name));
    await session.answerRecall(id);
    const built = await session.build({ format: 'openai_chat' });
    const last = built.body.messages.at(-1);
    assert.equal(last.role === 'tool' && last.tool_call_id, id);
    return String(last.content);
  };
  const found = await modelCalls('c1', 'ctxd_recall_search', { query: 'FAILED AssertionError' });
  const seq = Number(/- seq (\d+) \(tool result, not shown above\)/.exec(found)[1]);
  assert.equal(seq, evicted.seqs[0]);
  const textOf = (answer) => answer.split(']\n').slice(1).join(']\n').replace(/…?\n\[stopped at max_tokens[^\]]*\]$/, '');
  let read = await modelCalls('c2', 'ctxd_recall_expand', { seqs: [seq] });
  let recovered = textOf(read);
  for (let turn = 3; !recovered.includes('zebrafish-slug'); turn += 1) {
    assert.ok(turn < 20);
    const offset = Number(/and offset (\d+)\]$/.exec(read)[1]);
    read = await modelCalls(`c${turn}`, 'ctxd_recall_expand', { first_seq: seq, last_seq: seq, offset });
    recovered += textOf(read);
  }
  assert.ok(OUTPUT.startsWith(recovered.trimEnd()), 'read back exactly, in order');
  const line = /^.*zebrafish.*$/m.exec(recovered)[0];
  await session.append([{ role: 'assistant', content: `Found it: ${line}` }]);
  const final = await session.build({ format: 'openai_chat' });
  assert.match(String(final.body.messages.at(-1).content), /AssertionError: zebrafish-slug/);
  // A call that is not to a recall tool is refused, and writes nothing.
  const before = (await session.get()).version;
  await assert.rejects(session.answerRecall('t1'), (error) => error.codeName === 'INVALID_ARGUMENT');
  assert.equal((await session.get()).version, before);
});
