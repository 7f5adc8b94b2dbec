// UpdateLedger through the SDK: todos and notes by name, a done todo kept done, a bad
// status refused before any call. Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { CtxdClient } from 'ctxd';

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

test('todos and notes are set, and a done todo stays done', async () => {
  const session = await client.createSession();
  const set = await session.updateLedger({
    todos: [{ id: 't1', text: 'write the tests', status: 'in_progress' }],
    notes: [{ id: 'n1', text: 'the fixture is slow' }],
  });
  assert.deepEqual(set.entries.map((e) => e.text).sort(), ['the fixture is slow', 'write the tests']);
  await session.updateLedger({ todos: [{ id: 't1', status: 'done' }] });
  const reopened = await client.updateLedger(session.id, { todos: [{ id: 't1', status: 'pending' }] });
  assert.deepEqual(reopened.keptDoneTodoIds, ['t1']);
  assert.throws(() => session.updateLedger({ todos: [{ id: 't2', text: 'x', status: 'later' }] }), /todos\[0\]\.status/);
});
