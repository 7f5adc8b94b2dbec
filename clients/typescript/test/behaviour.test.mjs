// The behaviour table both SDKs pass (clients/behaviour.json; the Python suite reads the
// same file): TLS by default per target, the retry defaults, the error class of each
// gRPC code, the environment variables.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as grpc from '@grpc/grpc-js';

import * as ctxd from 'ctxd';

import { fromServiceError } from '../dist/errors.js';
import { retryPolicy } from '../dist/retry.js';
import { tlsByDefault } from '../dist/transport.js';

const table = JSON.parse(readFileSync(new URL('../../behaviour.json', import.meta.url), 'utf8'));

test('TLS is on by default except for a loopback target', () => {
  for (const { target, tls } of table.tls_by_default) assert.equal(tlsByDefault(target), tls, target);
});

test('the retry defaults', () => {
  const policy = retryPolicy(undefined);
  assert.equal(policy.maxAttempts, table.retry.max_attempts);
  assert.equal(policy.initialBackoffMs, table.retry.initial_backoff_s * 1000);
  assert.equal(policy.maxBackoffMs, table.retry.max_backoff_s * 1000);
});

test('each gRPC code has its error class', () => {
  for (const [code, name] of Object.entries(table.errors)) {
    const error = fromServiceError({ code: grpc.status[code], details: 'm', metadata: new grpc.Metadata(), name: 'Error', message: '' });
    const expected = name === 'CtxdError' ? name : `${name}Error`;
    assert.equal(error.constructor.name, expected, code);
    assert.ok(ctxd[expected], `${expected} is exported`);
  }
  assert.equal(typeof ctxd[table.client], 'function');
});

test('the address and the key come from the environment variables', () => {
  const saved = { ...process.env };
  try {
    delete process.env[table.environment.address];
    assert.throws(() => new ctxd.CtxdClient(), new RegExp(table.environment.address));
    process.env[table.environment.address] = '127.0.0.1:1';
    process.env[table.environment.api_key] = 'k';
    const client = new ctxd.CtxdClient();
    assert.equal(client.target, '127.0.0.1:1');
    assert.equal(client.metadata().get('authorization')[0], 'Bearer k');
    client.close();
  } finally {
    process.env = saved;
  }
});
