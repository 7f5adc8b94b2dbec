// Decoding the grpc-status-details-bin trailer: what the server sends is read into
// fields, and whatever else arrives (random bytes, a truncated or oversized trailer)
// yields empty details, never an exception.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as grpc from '@grpc/grpc-js';

import { decodeStatusDetails, DoesNotFitError, FailedPreconditionError, fromServiceError } from '../dist/errors.js';
import { errorDetailsRoot } from '../dist/proto.js';

function trailer(details) {
  const root = errorDetailsRoot();
  const Status = root.lookupType('google.rpc.Status');
  const anys = details.map(([type, value]) => {
    const Type = root.lookupType(type);
    return { type_url: `type.googleapis.com/${type}`, value: Type.encode(Type.fromObject(value)).finish() };
  });
  const md = new grpc.Metadata();
  md.set('grpc-status-details-bin', Buffer.from(Status.encode(Status.fromObject({ code: 3, message: 'm', details: anys })).finish()));
  return md;
}

test('the details the server sends are decoded', () => {
  const md = trailer([
    ['google.rpc.BadRequest', { fieldViolations: [{ field: 'messages[0].role', description: 'required' }] }],
    ['google.rpc.ErrorInfo', { reason: 'VERSION_MISMATCH', domain: 'ctxd', metadata: { current_version: '7' } }],
    ['google.rpc.QuotaFailure', { violations: [{ subject: 'quota_requests_per_sec', description: 'd' }] }],
    ['google.rpc.RetryInfo', { retryDelay: { seconds: 2, nanos: 500_000_000 } }],
  ]);
  const details = decodeStatusDetails(md);
  assert.deepEqual(details.badRequest, [{ field: 'messages[0].role', description: 'required' }]);
  assert.deepEqual(details.errorInfo, { reason: 'VERSION_MISMATCH', domain: 'ctxd', metadata: { current_version: '7' } });
  assert.deepEqual(details.quotaViolations, [{ subject: 'quota_requests_per_sec', description: 'd' }]);
  assert.equal(details.retryDelayMs, 2_500);
  const error = fromServiceError({ code: grpc.status.ABORTED, details: 'conflict', metadata: md, name: 'Error', message: '' });
  assert.equal(error.constructor.name, 'ConflictError');
  assert.equal(error.currentVersion, 7);
});

test('FAILED_PRECONDITION: DoesNotFitError for DOES_NOT_FIT, else FailedPreconditionError naming the field', () => {
  const refused = fromServiceError({
    code: grpc.status.FAILED_PRECONDITION,
    details: 'finished',
    metadata: trailer([['google.rpc.PreconditionFailure', { violations: [{ type: 'STATE', subject: 'session_id', description: 'd' }] }]]),
    name: 'Error',
    message: '',
  });
  assert.ok(refused instanceof FailedPreconditionError && !(refused instanceof DoesNotFitError), refused.constructor.name);
  assert.equal(refused.field, 'session_id');
  assert.deepEqual(refused.statusDetails.preconditionViolations, [{ type: 'STATE', subject: 'session_id', description: 'd' }]);
  const tooBig = fromServiceError({
    code: grpc.status.FAILED_PRECONDITION,
    details: 'does not fit',
    metadata: trailer([['google.rpc.ErrorInfo', { reason: 'DOES_NOT_FIT', domain: 'ctxd', metadata: { available_tokens: '9' } }]]),
    name: 'Error',
    message: '',
  });
  assert.ok(tooBig instanceof DoesNotFitError, tooBig.constructor.name);
  assert.ok(tooBig instanceof FailedPreconditionError, 'a DoesNotFitError is a FailedPreconditionError');
  assert.deepEqual(tooBig.breakdown, { available_tokens: 9 });
  assert.equal(tooBig.field, '');
});

test('any other trailer gives empty details, never an exception', () => {
  // xorshift32, seeded: the same cases every run.
  let state = 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const valid = trailer([['google.rpc.BadRequest', { fieldViolations: [{ field: 'f', description: 'd' }] }]]).get(
    'grpc-status-details-bin',
  )[0];
  for (let i = 0; i < 2_000; i++) {
    const bytes =
      i % 2 === 0
        ? Buffer.from(Array.from({ length: next() % 200 }, () => next() & 0xff))
        : Buffer.from(valid.subarray(0, next() % valid.length)); // truncated
    const md = new grpc.Metadata();
    md.set('grpc-status-details-bin', bytes);
    const details = decodeStatusDetails(md);
    assert.ok(Array.isArray(details.badRequest) && Array.isArray(details.quotaViolations));
  }
  const huge = new grpc.Metadata();
  huge.set('grpc-status-details-bin', Buffer.alloc(65 * 1024, 0x0a));
  assert.deepEqual(decodeStatusDetails(huge).badRequest, []);
  assert.deepEqual(decodeStatusDetails(undefined).badRequest, []);
});
