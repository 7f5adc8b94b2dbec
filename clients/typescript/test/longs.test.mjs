// 64-bit integers are exact: an answer's 64-bit field is the same integer the server
// sent, or the answer is refused (never a neighbouring number, as a plain double gives
// above 2^53). Decoded through the client's own service definition.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import protobuf from 'protobufjs';

import { CTXD } from '../dist/gen/descriptors.js';
import { exactDefinition } from '../dist/proto.js';

const root = protobuf.Root.fromJSON(CTXD);
const service = exactDefinition()['ctxd.v1.ContextService'];
const encode = (typeName, object) => {
  const type = root.lookupType(`ctxd.v1.${typeName}`);
  return Buffer.from(type.encode(type.fromObject(object)).finish());
};

test('64-bit fields up to 2^53 - 1 decode to the same number', () => {
  const job = service.GetJob.responseDeserialize(encode('Job', { jobId: '9007199254740991', attempts: 2 }));
  assert.equal(job.jobId, Number.MAX_SAFE_INTEGER);
  assert.equal(job.attempts, 2);
  // Nested and repeated 64-bit fields, and defaults.
  const hits = service.Search.responseDeserialize(
    encode('SearchResponse', { hits: [{ seq: '123456789012345', firstSeq: '1' }] }),
  ).hits;
  assert.deepEqual([hits[0].seq, hits[0].firstSeq, hits[0].lastSeq], [123456789012345, 1, 0]);
  const appended = service.AppendTurn.responseDeserialize(encode('AppendTurnResponse', { seqs: ['7', '8'] }));
  assert.deepEqual(appended.seqs, [7, 8]);
});

test('a 64-bit field beyond 2^53 - 1 is refused, not rounded', () => {
  // As a double, 2^53 + 1 reads as 2^53.
  assert.throws(
    () => service.GetJob.responseDeserialize(encode('Job', { jobId: '9007199254740993' })),
    /Job\.jobId is 9007199254740993, beyond what a JavaScript number holds exactly/,
  );
  assert.throws(
    () => service.Search.responseDeserialize(encode('SearchResponse', { hits: [{ seq: '-9007199254740993' }] })),
    /SearchHit\.seq/,
  );
});
