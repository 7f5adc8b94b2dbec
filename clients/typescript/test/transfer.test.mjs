// ExportSession / ImportSession through the SDK: a session's file imported under another
// id expands as the original; a changed file is refused naming its record, writing
// nothing. Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { CtxdClient, InvalidArgumentError, NotFoundError } from 'ctxd';

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

test('an exported session imports as another with the same messages', async () => {
  const session = await client.createSession();
  await session.append([
    { role: 'user', content: 'Run the tests.' },
    { role: 'assistant', content: 'They pass.' },
  ]);
  const file = await client.exportSession(session.id);
  assert.match(file.toString('utf8').split('\n')[0], /"format":"ctxd.session"/);
  const imported = await client.importSession(file, `${session.id}-copy`);
  assert.equal(imported.session.sessionId, `${session.id}-copy`);
  assert.equal(imported.messages, 2);
  const copy = await client.exportSession(`${session.id}-copy`);
  const body = (bytes) => bytes.toString('utf8').split('\n').slice(2, 4);
  assert.deepEqual(body(copy), body(file));

  const changed = Buffer.from(file.toString('utf8').replace('They pass.', 'They fail.'));
  await assert.rejects(client.importSession(changed, 'changed'), (error) => {
    assert.ok(error instanceof InvalidArgumentError, String(error));
    assert.match(error.message, /\(end\)\.sha256/);
    return true;
  });
  await assert.rejects(client.tree('changed'), NotFoundError);
});
