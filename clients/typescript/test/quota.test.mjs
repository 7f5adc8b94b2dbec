// A rate quota's refusal (RESOURCE_EXHAUSTED with RetryInfo) is waited out and the call
// tried again; with retries off it reaches the caller with the server's delay. Run by
// clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { CtxdClient, ResourceExhaustedError } from 'ctxd';

import { Server } from './server.mjs';

const server = new Server();

before(async () => {
  server.env = { CTXD_QUOTA_REQUESTS_PER_SEC: '2', CTXD_QUOTA_REQUESTS_BURST: '1' };
  await server.start();
});

after(() => server.stop());

test('a rate quota is waited out, and reported when retries are off', async () => {
  const once = new CtxdClient(server.addr, { retry: { maxAttempts: 1 } });
  try {
    const refused = await (async () => {
      for (let n = 0; n < 3; n++) {
        try {
          await once.listSessions({ pageSize: 1 });
        } catch (error) {
          return error;
        }
      }
      return null;
    })();
    assert.ok(refused instanceof ResourceExhaustedError, String(refused));
    assert.ok(refused.retryDelayMs !== undefined && refused.retryDelayMs > 0, String(refused.retryDelayMs));
  } finally {
    once.close();
  }
  const client = new CtxdClient(server.addr);
  try {
    for (let n = 0; n < 4; n++) await client.listSessions({ pageSize: 1 });
  } finally {
    client.close();
  }
});
