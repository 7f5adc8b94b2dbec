// The address and the key from CTXD_ADDRESS and CTXD_API_KEY when not passed; no address
// at all is a TypeError naming the variable. Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { CtxdClient, UnauthenticatedError } from 'ctxd';

import { startServer } from './server.mjs';

let server;
const saved = { address: process.env.CTXD_ADDRESS, key: process.env.CTXD_API_KEY };

before(async () => {
  delete process.env.CTXD_ADDRESS;
  delete process.env.CTXD_API_KEY;
  server = await startServer();
});

after(async () => {
  await server.stop();
  for (const [name, value] of [['CTXD_ADDRESS', saved.address], ['CTXD_API_KEY', saved.key]]) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

test('the address and the key come from the environment when not passed', async () => {
  assert.throws(() => new CtxdClient(), /CTXD_ADDRESS/);
  process.env.CTXD_ADDRESS = server.addr;
  const client = new CtxdClient();
  try {
    await client.createSession();
  } finally {
    client.close();
  }
  process.env.CTXD_API_KEY = 'ctxd_not_a_key_this_server_knows';
  const keyed = new CtxdClient();
  try {
    await assert.rejects(keyed.createSession(), UnauthenticatedError);
  } finally {
    keyed.close();
  }
});
