// Session trees through the SDK against a real `ctxd serve`: a fork at a middle seq reads
// the source's prefix and goes its own way; a retried fork returns the fork it made; a
// subagent's session spawned for a tool call and finished with its answer, which becomes
// that call's result in the parent; the parent's tree lists the child; and the errors of
// bad requests, with the field named.
// Run by clients/typescript/run (CTXD_BIN set).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';

import {
  AlreadyExistsError,
  CtxdClient,
  DoesNotFitError,
  FailedPreconditionError,
  InvalidArgumentError,
  NotFoundError,
} from 'ctxd';

import { CuttingProxy } from './helpers.mjs';
import { startServer } from './server.mjs';

const POLICY = { contextWindowTokens: 16_000, maxOutputTokens: 2_000 };
const apiKey = process.env.CTXD_TEST_API_KEY || undefined;
const newId = (label) => `ts-${label}-${randomUUID()}`;

// An assistant's tool call and its result.
function step(id, command, output) {
  return [
    { role: 'assistant', content: '', toolCalls: [{ id, name: 'bash', argumentsJson: JSON.stringify({ command }) }] },
    { role: 'tool', toolCallId: id, content: output },
  ];
}
// What a message says, without the row's timestamps.
const said = (m) => ({
  seq: m.seq,
  role: m.role,
  content: m.content,
  toolCallId: m.toolCallId,
  toolCalls: m.toolCalls.map((c) => [c.id, c.name, c.argumentsJson]),
});

describe('session trees', () => {
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

  test('a fork at a middle seq reads the prefix; appends on either side leave the other as it was', async () => {
    const source = await client.createSession({ policy: POLICY, systemPrompt: 'Be brief.' });
    await source.append([
      { role: 'user', content: 'Why does the build fail?' },
      ...step('call_1', 'make', 'error: missing header foo.h'),
      ...step('call_2', 'ls include', 'bar.h'),
    ]);
    const sourceLog = await source.expand({ firstSeq: 1, lastSeq: 5 });
    assert.equal(sourceLog.messages.length, 5);
    const sourceState = await source.get();

    const fork = await source.fork({ atSeq: 3, metadata: { branch: 'retry' } });
    assert.notEqual(fork.id, source.id);
    assert.equal(fork.info.forkedFromSessionId, source.id);
    assert.equal(fork.info.forkedAtSeq, 3);
    assert.equal(fork.info.messageCount, 3);
    assert.equal(fork.info.metadata.branch, 'retry');
    assert.equal(fork.defaults.systemPrompt, 'Be brief.', "the fork's handle has the source handle's system prompt");

    const prefix = sourceLog.messages.slice(0, 3).map(said);
    assert.deepEqual((await fork.expand({ firstSeq: 1, lastSeq: 3 })).messages.map(said), prefix);
    const built = await fork.build();
    assert.equal(built.lastSeq, 3);
    assert.deepEqual(built.messages.map(said), prefix);
    assert.equal(built.systemPrompt, 'Be brief.');

    const forkAppend = await fork.append([{ role: 'user', content: 'Try adding include/ to the path.' }]);
    assert.deepEqual(forkAppend.seqs, [4], 'the fork numbers its own messages after the shared ones');
    const forkLog = await fork.expand({ firstSeq: 1, lastSeq: 4 });
    assert.equal(forkLog.messages[3].content, 'Try adding include/ to the path.');
    const sourceAfter = await source.get();
    assert.equal(sourceAfter.session.messageCount, 5);
    assert.equal(sourceAfter.session.version, sourceState.session.version, "the fork's append is not the source's change");
    assert.deepEqual((await source.expand({ firstSeq: 1, lastSeq: 5 })).messages.map(said), sourceLog.messages.map(said));

    await source.append([{ role: 'user', content: 'Look at bar.h instead.' }]);
    assert.equal((await fork.get()).session.messageCount, 4);
    assert.deepEqual((await fork.expand({ firstSeq: 1, lastSeq: 4 })).messages.map(said), forkLog.messages.map(said));

    // Through the client, with the id chosen and no seq: the source's last.
    const id = newId('fork');
    const whole = await client.forkSession(source.id, { id });
    assert.equal(whole.id, id);
    assert.equal(whole.info.forkedAtSeq, 6);
    assert.equal(whole.defaults.systemPrompt, undefined, 'client.forkSession has no handle to take defaults from');
    assert.equal((await whole.build()).lastSeq, 6);
  });

  test('a retried fork whose first answer was lost returns the fork it made', async () => {
    const proxy = await CuttingProxy.start(server.addr);
    const viaProxy = new CtxdClient(proxy.addr, { apiKey, retry: { initialBackoffMs: 50 } });
    try {
      const source = await viaProxy.createSession({ policy: POLICY });
      await source.append([{ role: 'user', content: 'only' }]);
      const id = newId('fork-retry');
      proxy.cutNextReply();
      const fork = await source.fork({ id });
      assert.equal(proxy.cuts, 1, 'the first answer was cut');
      assert.equal(fork.id, id);
      assert.equal(fork.info.forkedFromSessionId, source.id);
      assert.equal(fork.info.messageCount, 1);

      // An id taken by a session that is no fork of the source stays an error.
      const other = await viaProxy.createSession({ policy: POLICY });
      await assert.rejects(viaProxy.forkSession(source.id, { id: other.id }), AlreadyExistsError);
    } finally {
      viaProxy.close();
      await proxy.close();
    }
  });

  test("a subagent's session spawned for a tool call and finished: its answer is the call's result; the tree lists it", async () => {
    const parent = await client.createSession({ policy: POLICY });
    const call = { id: 'call_task', name: 'task', argumentsJson: '{"prompt":"find where parse() fails"}' };
    await parent.append([
      { role: 'user', content: 'Fix the parser.' },
      { role: 'assistant', content: '', toolCalls: [call] },
    ]);

    const child = await parent.spawn('call_task', {
      policy: { contextWindowTokens: 8_000, maxOutputTokens: 1_000 },
      systemPrompt: 'You are a subagent.',
    });
    assert.equal(child.info.parentSessionId, parent.id);
    assert.equal(child.info.parentToolCallId, 'call_task');
    assert.equal(child.info.depth, 1);
    assert.equal(child.info.policy.contextWindowTokens, 8_000, 'the child has its own policy');
    assert.equal(child.defaults.systemPrompt, 'You are a subagent.');
    await child.append([
      { role: 'user', content: 'find where parse() fails' },
      { role: 'assistant', content: 'parse() fails on an empty line.' },
    ]);

    const open = await parent.tree();
    assert.equal(open.childrenTotal, 1);
    assert.deepEqual(
      open.children.map((c) => [c.sessionId, c.parentToolCallId, c.finished]),
      [[child.id, 'call_task', false]],
    );
    const childTree = await child.tree();
    assert.equal(childTree.session.parentSessionId, parent.id);
    assert.equal(childTree.childrenTotal, 0);
    assert.equal(open.subtree.sessions, 2);
    assert.equal(open.subtree.logTokens, open.session.logTokens + childTree.session.logTokens);

    const answer = 'parse() fails on an empty line: it indexes line[0].';
    const finished = await child.finish(answer);
    assert.equal(finished.parentSessionId, parent.id);
    assert.equal(finished.parentToolCallId, 'call_task');
    assert.equal(finished.version, childTree.session.version + 1);
    assert.deepEqual(finished.parentAppend.seqs, [3]);

    const result = (await parent.expand({ seqs: [3] })).messages[0];
    assert.deepEqual([result.role, result.toolCallId, result.content], ['ROLE_TOOL', 'call_task', answer]);
    const built = await parent.build();
    assert.deepEqual(
      built.messages.map((m) => m.role),
      ['ROLE_USER', 'ROLE_ASSISTANT', 'ROLE_TOOL'],
    );
    assert.equal(built.messages[2].content, answer);

    const closed = await parent.tree();
    assert.equal(closed.children[0].finished, true);
    assert.ok(closed.children[0].finishedAt, 'the child has its finishing time');
    assert.ok((await child.get()).session.finishedAt, 'the child is finished');

    const appended = await child.append([{ role: 'user', content: 'one more thing' }]).catch((e) => e);
    assert.ok(appended instanceof FailedPreconditionError && !(appended instanceof DoesNotFitError), String(appended));
    assert.equal(appended.field, 'session_id');
    const again = await child.finish().catch((e) => e);
    assert.ok(again instanceof FailedPreconditionError, String(again));
    assert.equal(again.field, 'session_id');
    assert.equal((await parent.get()).session.messageCount, 3, 'nothing more reached the parent');
  });

  test('sessions are listed by their metadata, most recently active first, page after page', async () => {
    const team = randomUUID();
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(await client.createSession({ policy: POLICY, metadata: { team } }));
    }
    await made[0].append([{ role: 'user', content: 'most recent' }]);
    const page = await client.listSessions({ metadata: { team }, pageSize: 2 });
    assert.deepEqual(page.sessions.map((s) => s.sessionId), [made[0].id, made[2].id]);
    assert.notEqual(page.nextPageToken, '');
    const all = [];
    for await (const session of client.sessions({ metadata: { team }, pageSize: 1 })) all.push(session.sessionId);
    assert.deepEqual(all, [made[0].id, made[2].id, made[1].id]);
    await assert.rejects(client.listSessions({ pageSize: -1 }), InvalidArgumentError);
  });

  test('bad requests: a fork past the end, a spawn for a call the parent never made', async () => {
    const source = await client.createSession({ policy: POLICY });
    await source.append([{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }]);

    const id = newId('fork-past');
    const past = await source.fork({ id, atSeq: 3 }).catch((e) => e);
    assert.ok(past instanceof InvalidArgumentError, String(past));
    assert.deepEqual(
      past.violations.map((v) => v.field),
      ['at_seq'],
    );
    assert.match(past.violations[0].description, /past the source's last seq \(2\)/);
    await assert.rejects(client.session(id).get(), NotFoundError, 'no fork was made');

    const spawned = await source.spawn('call_never_made').catch((e) => e);
    assert.ok(spawned instanceof InvalidArgumentError, String(spawned));
    assert.deepEqual(
      spawned.violations.map((v) => v.field),
      ['parent_tool_call_id'],
    );
    assert.equal((await source.tree()).childrenTotal, 0);

    const rootAnswer = await source.finish('an answer with no parent to take it').catch((e) => e);
    assert.ok(rootAnswer instanceof FailedPreconditionError, String(rootAnswer));
    assert.equal(rootAnswer.field, 'append_to_parent');
    assert.equal((await source.get()).session.finishedAt, null, 'the refused finish changed nothing');
  });
});
