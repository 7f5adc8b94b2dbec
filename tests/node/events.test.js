'use strict';
// ctxd from Node.js: one client subscribes to a session's events while another drives
// compaction, and sees every event, in order; a subscription resumed from a cursor
// misses nothing; Search finds what compaction took out of the view and Expand returns
// it whole.
//
// Run by tests/node/run, which passes:
//   CTXD_BIN  the server binary, started here as `CTXD_BIN serve` on a free loopback
//             port (DATABASE_URL, when set, is inherited; otherwise the server starts a
//             private PostgreSQL in its data directory)
// Optional: CTXD_TEST_API_KEY, sent as `authorization: Bearer <key>` when the database
// already holds API keys.
//
// Plain Node (no test framework): one line per test, then "node: N passed, N failed";
// exit status 1 on any failure, with the tail of the server's log.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const REPO = path.resolve(__dirname, '..', '..');
const SERVICE = 'ctxd.v1.ContextService';
const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 30_000;
const RPC_TIMEOUT_MS = 15_000;
// Compact with wait: the server waits up to COMPACT_WAIT_MS for the job.
const COMPACT_WAIT_MS = 30_000;
const COMPACT_TIMEOUT_MS = COMPACT_WAIT_MS + RPC_TIMEOUT_MS;
// Longest wait for something a stream must deliver (an event, a heartbeat, its end).
const STREAM_WAIT_MS = 20_000;
const HEARTBEAT_MS = 500;
// A whole test, streams included: a broken server fails the test, never hangs it.
const TEST_TIMEOUT_MS = 150_000;

// The test sessions' policy: a 16k window with a 2k reply reserve, and tool results
// over 500 tokens evicted at append (at most a twenty-fourth of the prompt room, 583). Everything else is the server's default:
// clearing past 60 % of the window (9 600 tokens), down to 20 % (3 200), and the
// extractive summarizer.
const WINDOW = 16_000;
const POLICY = { context_window_tokens: WINDOW, max_output_tokens: 2_000, eviction_threshold_tokens: 500 };

const LOAD_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
// google/protobuf/timestamp.proto comes with proto-loader (protobufjs' bundled copy).
const ctxdPackage = grpc.loadPackageDefinition(
  protoLoader.loadSync('ctxd/v1/ctxd.proto', { ...LOAD_OPTIONS, includeDirs: [path.join(REPO, 'proto')] }),
);
const healthPackage = grpc.loadPackageDefinition(
  protoLoader.loadSync('health.proto', { ...LOAD_OPTIONS, includeDirs: [__dirname] }),
);
const ContextService = ctxdPackage.ctxd.v1.ContextService;
const Health = healthPackage.grpc.health.v1.Health;

const SYSTEM_PROMPT = 'You are a careful coding agent. Use the bash tool to inspect the repository.';
const TOOLS = {
  definitions: {
    items: [
      {
        name: 'bash',
        description: 'Execute a bash command and return its output',
        parameters_json_schema: JSON.stringify({
          type: 'object',
          properties: { command: { type: 'string', description: 'The bash command to execute' } },
          required: ['command'],
        }),
      },
    ],
  },
};

// Which Event.detail each kind carries.
const DETAIL_OF = {
  EVENT_KIND_COMPACTION_STARTED: 'compaction_started',
  EVENT_KIND_COMPACTION_COMPLETED: 'compaction_completed',
  EVENT_KIND_COMPACTION_FAILED: 'compaction_failed',
  EVENT_KIND_TOOL_RESULTS_CLEARED: 'tool_results_cleared',
  EVENT_KIND_OUTPUT_EVICTED: 'output_evicted',
  EVENT_KIND_BUDGET_THRESHOLD_CROSSED: 'budget_threshold_crossed',
  EVENT_KIND_SESSION_DELETED: 'session_deleted',
};

// ---------------------------------------------------------------------------------------
// The server

const SERVER = { logPath: null, tmp: null, child: null, exit: null, addr: null };

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function logTail(lines = 40) {
  try {
    const text = fs.readFileSync(SERVER.logPath, 'utf8');
    return text.split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '(no server log)';
  }
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function statusName(code) {
  return Object.keys(grpc.status).find((name) => grpc.status[name] === code) ?? String(code);
}

function healthCheck(addr) {
  return new Promise((resolve) => {
    // A fresh channel per attempt: a refused connection must not leave the check in the
    // channel's reconnect backoff while the server comes up.
    const client = new Health(addr, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    client.Check({ service: SERVICE }, { deadline: Date.now() + 2_000 }, (error, response) => {
      client.close();
      resolve(error ? `${statusName(error.code)}: ${error.details}` : response.status);
    });
  });
}

async function startServer() {
  SERVER.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxd-node-'));
  SERVER.logPath = path.join(SERVER.tmp, 'ctxd.log');
  const addr = `127.0.0.1:${await freePort()}`;
  // Server defaults only: a developer's CTXD_* settings must not change what the tests
  // see. DATABASE_URL is inherited.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CTXD_')));
  // On the suite's database (DATABASE_URL) ctxd refuses calls without a key unless told.
  env.CTXD_ANONYMOUS_ACCESS = 'allow';
  const log = fs.openSync(SERVER.logPath, 'w');
  const started = Date.now();
  const child = spawn(process.env.CTXD_BIN, ['serve', '--listen', addr, '--data-dir', path.join(SERVER.tmp, 'data')], {
    env,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  SERVER.child = child;
  SERVER.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      SERVER.exit = { code, signal };
      resolve(SERVER.exit);
    });
    child.once('error', (error) => {
      SERVER.exit = { code: null, signal: null, error };
      resolve(SERVER.exit);
    });
  });
  let last = 'no answer yet';
  for (;;) {
    if (SERVER.exit) {
      const how = SERVER.exit.error ? SERVER.exit.error.message : `exit ${SERVER.exit.code} (${SERVER.exit.signal})`;
      throw new Error(`ctxd ended before serving: ${how}`);
    }
    last = await healthCheck(addr);
    if (last === 'SERVING') break;
    if (Date.now() - started > START_DEADLINE_MS) {
      throw new Error(`ctxd was not SERVING within ${START_DEADLINE_MS / 1000} s (last: ${last})`);
    }
    await delay(100);
  }
  SERVER.addr = addr;
  return (Date.now() - started) / 1000;
}

// SIGTERM (which also stops a private PostgreSQL), SIGKILL only as a last resort.
// Returns the exit code, or null when the server had to be killed.
async function stopServer() {
  const child = SERVER.child;
  if (!child) return 0;
  if (!SERVER.exit) {
    child.kill('SIGTERM');
    const stopped = await Promise.race([SERVER.exited, delay(STOP_DEADLINE_MS).then(() => null)]);
    if (!stopped) {
      child.kill('SIGKILL');
      await SERVER.exited;
      return null;
    }
  }
  return SERVER.exit.code;
}

// An interrupted run still stops the server.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    if (SERVER.child && !SERVER.exit) SERVER.child.kill('SIGTERM');
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}
process.once('exit', () => {
  if (SERVER.child && !SERVER.exit) SERVER.child.kill('SIGTERM');
});

// ---------------------------------------------------------------------------------------
// Calls

function metadata() {
  const md = new grpc.Metadata();
  const key = process.env.CTXD_TEST_API_KEY;
  if (key) md.set('authorization', `Bearer ${key}`);
  return md;
}

// Two clients on two connections (distinct channel options, own subchannel pools): the
// subscriber and the driver are separate backends.
function connect(userAgent) {
  return new ContextService(SERVER.addr, grpc.credentials.createInsecure(), {
    'grpc.primary_user_agent': userAgent,
    'grpc.use_local_subchannel_pool': 1,
  });
}

function rpc(client, method, request, timeoutMs = RPC_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata(), { deadline: Date.now() + timeoutMs }, (error, response) => {
      if (error) {
        const failure = new Error(`${method}: ${statusName(error.code)}: ${error.details}`);
        failure.code = error.code;
        reject(failure);
      } else {
        resolve(response);
      }
    });
  });
}

const n = (value) => Number(value);

// Open subscriptions, cancelled when their test ends whatever happened.
const OPEN = new Set();

// One SubscribeEvents call: everything it delivers, and waiting for what it must.
class Subscription {
  constructor(client, label, request) {
    this.label = label;
    this.request = { heartbeat_interval_ms: HEARTBEAT_MS, ...request };
    this.events = [];
    this.heartbeats = [];
    this.problems = [];
    this.done = false;
    this.error = null;
    this.cancelled = false;
    this.lastCursor = this.request.after || '';
    this.waiters = new Set();
    this.call = client.SubscribeEvents(this.request, metadata(), { deadline: Date.now() + TEST_TIMEOUT_MS });
    OPEN.add(this);
    this.call.on('data', (response) => this.onItem(response));
    this.call.on('error', (error) => {
      this.error = error;
      this.finish();
    });
    this.call.on('end', () => this.finish());
  }

  onItem(response) {
    if (response.item === 'event') {
      this.events.push(response.event);
      this.lastCursor = response.event.cursor;
    } else if (response.item === 'heartbeat') {
      // A heartbeat carries the cursor of the last event delivered on this stream (the
      // request's `after` before any). Before any event of a from_now stream, any cursor
      // (one naming the position it started from is as good as the empty `after`).
      const cursor = response.heartbeat.cursor;
      const unchecked = this.request.from_now && this.events.length === 0;
      if (!unchecked && cursor !== this.lastCursor) {
        this.problems.push(
          `heartbeat ${this.heartbeats.length + 1} carries cursor ${JSON.stringify(cursor)}, ` +
            `not the last event's ${JSON.stringify(this.lastCursor)}`,
        );
      }
      this.heartbeats.push({ heartbeat: response.heartbeat, after: this.events.length });
    } else {
      this.problems.push(`a response with neither event nor heartbeat: ${JSON.stringify(response)}`);
    }
    this.notify();
  }

  finish() {
    this.done = true;
    OPEN.delete(this);
    this.notify();
  }

  notify() {
    for (const waiter of [...this.waiters]) waiter();
  }

  cancel() {
    if (!this.done) {
      this.cancelled = true;
      this.call.cancel();
    }
  }

  ending() {
    return this.error ? `${statusName(this.error.code)}: ${this.error.details}` : 'OK';
  }

  describe() {
    const kinds = this.events.map((e) => `${e.session_seq}:${e.kind.replace('EVENT_KIND_', '')}`);
    return `${this.label} got ${this.events.length} events [${kinds.join(' ')}], ${this.heartbeats.length} heartbeats`;
  }

  // Resolves with predicate's first truthy value; rejects when the stream ends first or
  // nothing comes within STREAM_WAIT_MS.
  waitFor(what, predicate) {
    return new Promise((resolve, reject) => {
      let timer = null;
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      const check = () => {
        let value;
        try {
          value = predicate(this);
        } catch (error) {
          cleanup();
          reject(error);
          return;
        }
        if (value) {
          cleanup();
          resolve(value);
        } else if (this.done) {
          cleanup();
          reject(new Error(`${this.label} ended (${this.ending()}) before ${what}; ${this.describe()}`));
        }
      };
      timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.label}: no ${what} within ${STREAM_WAIT_MS / 1000} s; ${this.describe()}`));
      }, STREAM_WAIT_MS);
      this.waiters.add(check);
      check();
    });
  }

  // The first heartbeat: the backlog is delivered, the stream is live from now on.
  live() {
    return this.waitFor('first heartbeat', (s) => s.heartbeats.length > 0);
  }

  deleted(sessionId) {
    return this.waitFor(`SESSION_DELETED of ${sessionId}`, (s) =>
      s.events.find((e) => e.kind === 'EVENT_KIND_SESSION_DELETED' && e.session_id === sessionId),
    );
  }

  // The server ends a session's stream after its SESSION_DELETED, with status OK.
  async ended() {
    await this.waitFor('end of stream', (s) => s.done);
    assert.equal(this.error, null, `${this.label} ended with ${this.ending()}, not OK`);
  }
}

// ---------------------------------------------------------------------------------------
// A simulated agent: realistic tool output, deterministic per seed

function rng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (random, items) => items[Math.floor(random() * items.length)];
const pad = (value, width) => String(value).padStart(width, '0');

// A word no other text of the run contains (letters only, so it is one search word).
function distinctiveWord() {
  const consonants = 'bdfgklmnprstvz';
  const vowels = 'aeiou';
  let word = 'qu';
  for (let i = 0; i < 4; i++) word += consonants[crypto.randomInt(consonants.length)] + vowels[crypto.randomInt(5)];
  return `${word}x`;
}

const DIRS = ['src/store', 'src/engine', 'crates/ingest/src', 'crates/query/src', 'web/components', 'migrations'];
const STEMS = ['session', 'segment', 'planner', 'router', 'schema', 'cursor', 'budget', 'tokenizer', 'worker', 'cache'];
const EXTS = ['rs', 'rs', 'rs', 'toml', 'sql', 'ts', 'md'];

// `ls -la` of a directory: about 25 tokens a line.
function fileListing(seed, dir, lines) {
  const random = rng(seed);
  const out = [`total ${lines * 8}`, 'drwxr-xr-x  9 agent agent    4096 Mar 14 09:12 .'];
  for (let i = 0; i < lines; i++) {
    const size = Math.floor(random() * 90_000) + 120;
    const day = 1 + Math.floor(random() * 28);
    const time = `${pad(Math.floor(random() * 24), 2)}:${pad(Math.floor(random() * 60), 2)}`;
    out.push(
      `-rw-r--r--  1 agent agent ${String(size).padStart(7)} Mar ${String(day).padStart(2)} ${time} ` +
        `${dir}/${pick(random, STEMS)}_${pick(random, STEMS)}_${i}.${pick(random, EXTS)}`,
    );
  }
  return out.join('\n');
}

// A service's log: about 35 tokens a line. `special` lines go in the middle.
function serviceLog(seed, lines, special = []) {
  const random = rng(seed);
  const out = [];
  for (let i = 0; i < lines; i++) {
    if (i === Math.floor(lines / 2)) out.push(...special);
    const stamp = `2024-03-14T09:${pad(Math.floor(i / 60) % 60, 2)}:${pad(i % 60, 2)}.${pad(Math.floor(random() * 1000), 3)}Z`;
    const shard = Math.floor(random() * 64);
    const rows = Math.floor(random() * 50_000);
    const segment = Math.floor(random() * 0xffffffff).toString(16);
    const level = random() < 0.08 ? 'WARN' : 'INFO';
    const what =
      level === 'WARN'
        ? `slow flush: segment ${segment} took ${Math.floor(random() * 4000) + 900}ms (budget 750ms), retrying on shard ${shard}`
        : `flushed ${rows} rows to segment ${segment} in ${Math.floor(random() * 700)}ms (queue depth ${Math.floor(random() * 300)})`;
    out.push(`${stamp} ${level.padEnd(5)} ingest::worker{shard=${shard}}: ${what}`);
  }
  return out.join('\n');
}

const QUESTIONS = [
  'The nightly ingest job failed again. Find out why and fix it.',
  'Which module owns the segment flush? Show me where it is called.',
  'Check whether the planner still reads the old schema files.',
  'Look at the worker logs around the last restart.',
  'List what changed in the store since the last release.',
  'Is there anything in migrations that touches the cursor table?',
  'Why is the cache hit rate so low on shard 12?',
  'Compare the router config with the one in staging.',
];

const user = (content) => ({ role: 'ROLE_USER', content });
const assistant = (content, toolCalls = []) => ({ role: 'ROLE_ASSISTANT', content, tool_calls: toolCalls });
const toolCall = (id, command) => ({ id, name: 'bash', arguments_json: JSON.stringify({ command }) });
const toolResult = (id, content) => ({ role: 'ROLE_TOOL', tool_call_id: id, content });

// A driving client: appends whole agent turns to one session and keeps what the
// server answered (seqs, evictions, budgets).
class Agent {
  constructor(client, sessionId, seed) {
    this.client = client;
    this.sessionId = sessionId;
    this.seed = seed;
    this.turns = 0;
    this.toolSeqs = [];
    this.evictedSeqs = [];
    this.total = 0;
  }

  async append(...messages) {
    const response = await rpc(this.client, 'AppendTurn', { session_id: this.sessionId, messages });
    assert.equal(response.seqs.length, messages.length);
    this.evictedSeqs.push(...response.evicted_seqs.map(n));
    this.total = n(response.budget.breakdown.total_tokens);
    return response;
  }

  // One turn: the user asks, the model calls bash, the tool answers, the model replies.
  // Returns the tool result's seq and whether it was evicted at append.
  async turn(output, command) {
    this.turns += 1;
    const callId = `call_${this.turns}`;
    await this.append(user(`${QUESTIONS[this.turns % QUESTIONS.length]} (step ${this.turns})`));
    await this.append(assistant('Let me look.', [toolCall(callId, command)]));
    const result = await this.append(toolResult(callId, output));
    const seq = n(result.seqs[0]);
    this.toolSeqs.push(seq);
    await this.append(assistant(`Step ${this.turns} checked; nothing conclusive yet, looking further.`));
    return { seq, evicted: result.evicted_seqs.map(n) };
  }

  // An ordinary turn: a directory listing of about 450 tokens (under the eviction size).
  moderateTurn() {
    const dir = DIRS[this.turns % DIRS.length];
    return this.turn(fileListing(this.seed + this.turns, dir, 18), `ls -la ${dir}`);
  }

  build() {
    return rpc(this.client, 'BuildMessages', {
      session_id: this.sessionId,
      system_prompt: SYSTEM_PROMPT,
      tools: TOOLS,
      format: 'OUTPUT_FORMAT_NEUTRAL',
    });
  }
}

async function createSession(client, name) {
  const sessionId = `node-${name}-${crypto.randomBytes(6).toString('hex')}`;
  const response = await rpc(client, 'CreateSession', { session_id: sessionId, policy: POLICY });
  assert.equal(response.session.session_id, sessionId);
  assert.equal(n(response.session.policy.eviction_threshold_tokens), POLICY.eviction_threshold_tokens);
  return sessionId;
}

// Drives a session through every compaction layer, as a backend whose conversation
// outgrows a 16k window would:
//   1. a turn whose tool output holds `word`; a BuildMessages (the loop's first call);
//   2. a turn with a log far over the eviction size (evicted at append: OUTPUT_EVICTED);
//   3. ordinary turns until the request is past the clearing threshold; BuildMessages
//      then clears old tool results (TOOL_RESULTS_CLEARED) and summarizes (extractive,
//      within the call) down to the clear target;
//   4. three more turns, Compact SUMMARIZE with wait (a job: COMPACTION_STARTED,
//      COMPACTION_COMPLETED);
//   5. two more turns, Compact EMERGENCY (in the call).
async function driveCompaction(client, sessionId, word) {
  const agent = new Agent(client, sessionId, 1000);
  const wordLine = `2024-03-14T09:30:00.000Z WARN  ingest::cache: shard ${word} dropped 3 stale segments after checksum mismatch`;
  const wordText = serviceLog(11, 9, [wordLine]);
  const first = await agent.turn(wordText, 'journalctl -u ingest --since 09:00 | tail -n 25');
  assert.deepEqual(first.evicted, [], 'a 400-token tool result is not evicted');
  const firstBuild = await agent.build();
  assert.equal(firstBuild.budget.status, 'BUDGET_STATUS_OK', 'the first build fits as it is');

  const big = await agent.turn(serviceLog(22, 260), 'journalctl -u ingest --since 08:00');
  assert.deepEqual(big.evicted, [big.seq], 'a tool result over eviction_threshold_tokens is evicted at append');

  const clearAt = 0.66 * WINDOW;
  while (agent.total <= clearAt) {
    assert.ok(agent.turns < 50, `the request never passed ${clearAt} tokens (at ${agent.total} after ${agent.turns} turns)`);
    await agent.moderateTurn();
  }
  const built = await agent.build();
  assert.notEqual(built.budget.status, 'BUDGET_STATUS_OVER', 'BuildMessages always fits');

  for (let i = 0; i < 3; i++) await agent.moderateTurn();
  const summarized = await rpc(
    client,
    'Compact',
    { session_id: sessionId, mode: 'COMPACT_MODE_SUMMARIZE', wait: true, wait_timeout_ms: COMPACT_WAIT_MS },
    COMPACT_TIMEOUT_MS,
  );
  assert.ok(n(summarized.job_id) > 0, 'Compact SUMMARIZE runs a job');
  assert.ok(summarized.job, 'with wait, the response carries the job');
  assert.equal(summarized.job.state, 'JOB_STATE_COMPLETED', `job: ${JSON.stringify(summarized.job)}`);
  assert.ok(n(summarized.tokens_after) < n(summarized.tokens_before), 'SUMMARIZE shrank the request');

  for (let i = 0; i < 2; i++) await agent.moderateTurn();
  const emergency = await rpc(client, 'Compact', { session_id: sessionId, mode: 'COMPACT_MODE_EMERGENCY' });
  assert.ok(emergency.applied, 'EMERGENCY changed the view');
  assert.ok(n(emergency.tokens_after) < n(emergency.tokens_before), 'EMERGENCY shrank the request: ' + JSON.stringify(emergency));

  return { agent, wordSeq: first.seq, wordText, summarized, emergency };
}

// ---------------------------------------------------------------------------------------
// Checks on what a stream delivered

// A whole session's stream: session_seq 1..n without gap or duplicate, unique ids and
// cursors, the detail each kind carries, versions that never go back, deletion last.
function checkSessionStream(label, events, sessionId) {
  const seqs = events.map((e) => n(e.session_seq));
  assert.deepEqual(seqs, Array.from({ length: events.length }, (_, i) => i + 1), `${label}: session_seq is 1..n in order`);
  assert.equal(new Set(events.map((e) => e.event_id)).size, events.length, `${label}: event_id values are unique`);
  assert.equal(new Set(events.map((e) => e.cursor)).size, events.length, `${label}: cursors are unique`);
  let version = 0;
  for (const e of events) {
    const where = `${label}: event ${e.session_seq} (${e.kind})`;
    assert.equal(e.session_id, sessionId, where);
    assert.ok(n(e.event_id) > 0, `${where}: event_id`);
    assert.ok(typeof e.cursor === 'string' && e.cursor.length > 0, `${where}: a cursor`);
    assert.ok(e.created_at, `${where}: created_at`);
    assert.ok(e.kind in DETAIL_OF, `${where}: a known kind`);
    // SessionDeleted is empty: an encoder may leave it out.
    if (e.kind !== 'EVENT_KIND_SESSION_DELETED' || e.detail) {
      assert.equal(e.detail, DETAIL_OF[e.kind], `${where}: the detail of its kind`);
    }
    assert.ok(n(e.session_version) >= version, `${where}: session_version ${e.session_version} went back from ${version}`);
    version = n(e.session_version);
    const detail = e[e.detail];
    switch (e.kind) {
      case 'EVENT_KIND_COMPACTION_COMPLETED':
        assert.ok(
          n(detail.tokens_after) < n(detail.tokens_before),
          `${where}: tokens_after ${detail.tokens_after} < tokens_before ${detail.tokens_before}`,
        );
        break;
      case 'EVENT_KIND_TOOL_RESULTS_CLEARED':
        assert.ok(detail.seqs.length > 0, `${where}: names the cleared results`);
        assert.ok(n(detail.tokens_after) < n(detail.tokens_before), `${where}: tokens shrink`);
        break;
      case 'EVENT_KIND_OUTPUT_EVICTED':
        assert.equal(detail.tool_name, 'bash', `${where}: tool_name`);
        assert.ok(n(detail.preview_tokens) < n(detail.tokens), `${where}: the preview is smaller`);
        break;
      case 'EVENT_KIND_BUDGET_THRESHOLD_CROSSED':
        assert.notEqual(detail.status, detail.previous_status, `${where}: the status changed`);
        break;
      default:
        break;
    }
  }
  const deletions = events.filter((e) => e.kind === 'EVENT_KIND_SESSION_DELETED');
  assert.equal(deletions.length, 1, `${label}: one SESSION_DELETED`);
  assert.equal(events.at(-1).kind, 'EVENT_KIND_SESSION_DELETED', `${label}: SESSION_DELETED is last`);
}

function checkHeartbeats(subscription) {
  assert.deepEqual(subscription.problems, [], `${subscription.label}: heartbeats`);
}

const identity = (e) => `${e.session_seq}/${e.kind}/${e.event_id}`;
const kindsOf = (events) => events.map((e) => e.kind.replace('EVENT_KIND_', '')).join(' ');

// ---------------------------------------------------------------------------------------
// Tests

const NOTES = [];

async function testEventsInOrder({ subscriber, driver }) {
  // The tenant's stream from now on, open before the session exists.
  const tenant = new Subscription(subscriber, 'tenant stream', { session_id: '', from_now: true });
  await tenant.live();

  const sessionId = await createSession(driver, 'events');
  const stream = new Subscription(subscriber, 'session stream', { session_id: sessionId });
  await stream.live();

  const word = distinctiveWord();
  const drove = await driveCompaction(driver, sessionId, word);

  // A late subscriber replays the backlog from the start: the same events.
  const late = new Subscription(driver, 'late session stream', { session_id: sessionId });
  await late.live();

  await rpc(driver, 'DeleteSession', { session_id: sessionId });
  await stream.deleted(sessionId);
  await stream.ended();
  await late.deleted(sessionId);
  await late.ended();
  await tenant.deleted(sessionId);
  tenant.cancel();

  const events = stream.events;
  checkSessionStream('session stream', events, sessionId);
  for (const s of [stream, late, tenant]) checkHeartbeats(s);

  const index = (what, predicate) => {
    const at = events.findIndex(predicate);
    assert.ok(at >= 0, `session stream: no ${what} in [${kindsOf(events)}]`);
    return at;
  };
  // Every eviction AppendTurn reported, and no other.
  const evicted = events.filter((e) => e.kind === 'EVENT_KIND_OUTPUT_EVICTED');
  assert.deepEqual(
    evicted.map((e) => n(e.output_evicted.seq)),
    drove.agent.evictedSeqs,
    'one OUTPUT_EVICTED per seq AppendTurn reported evicted, in order',
  );
  const evictedAt = index('OUTPUT_EVICTED', (e) => e.kind === 'EVENT_KIND_OUTPUT_EVICTED');
  const clearedAt = index('TOOL_RESULTS_CLEARED', (e) => e.kind === 'EVENT_KIND_TOOL_RESULTS_CLEARED');
  for (const e of events.filter((e) => e.kind === 'EVENT_KIND_TOOL_RESULTS_CLEARED')) {
    for (const seq of e.tool_results_cleared.seqs) {
      assert.ok(drove.agent.toolSeqs.includes(n(seq)), `cleared seq ${seq} is a tool result`);
    }
  }
  const jobId = drove.summarized.job_id;
  const jobStartedAt = index(
    `COMPACTION_STARTED of job ${jobId}`,
    (e) => e.kind === 'EVENT_KIND_COMPACTION_STARTED' && e.compaction_started.job_id === jobId,
  );
  const jobDoneAt = index(
    `COMPACTION_COMPLETED (SUMMARIZE) of job ${jobId}`,
    (e) =>
      e.kind === 'EVENT_KIND_COMPACTION_COMPLETED' &&
      e.compaction_completed.job_id === jobId &&
      e.compaction_completed.compaction === 'COMPACTION_KIND_SUMMARIZE',
  );
  const emergencyStartedAt = index(
    'COMPACTION_STARTED (EMERGENCY)',
    (e) => e.kind === 'EVENT_KIND_COMPACTION_STARTED' && e.compaction_started.compaction === 'COMPACTION_KIND_EMERGENCY',
  );
  const emergencyAt = index(
    'COMPACTION_COMPLETED (EMERGENCY)',
    (e) => e.kind === 'EVENT_KIND_COMPACTION_COMPLETED' && e.compaction_completed.compaction === 'COMPACTION_KIND_EMERGENCY',
  );
  assert.equal(n(events[emergencyAt].compaction_completed.job_id), 0, 'EMERGENCY runs within the call');
  assert.equal(
    events[emergencyAt].session_version,
    drove.emergency.version,
    'the EMERGENCY event carries the version Compact returned',
  );
  // The session's changes in the order they were made.
  const order = [evictedAt, clearedAt, jobStartedAt, jobDoneAt, emergencyStartedAt, emergencyAt, events.length - 1];
  assert.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
    `eviction, clearing, job started/completed, emergency started/completed, deletion: in that order in [${kindsOf(events)}]`,
  );

  // The same events on the late stream (backlog) and on the tenant's (live).
  assert.deepEqual(late.events.map(identity), events.map(identity), 'the late stream replays the same events');
  const tenantEvents = tenant.events.filter((e) => e.session_id === sessionId);
  assert.deepEqual(tenantEvents.map(identity), events.map(identity), "the tenant stream has the session's events in order");

  NOTES.push(
    `events: ${events.length} in order (${kindsOf(events)}), ${stream.heartbeats.length} heartbeats; ` +
      `late and tenant streams identical`,
  );
}

async function testResume({ subscriber, driver }) {
  // Here the second client subscribes and the first drives.
  const sessionId = await createSession(subscriber, 'resume');
  const agent = new Agent(driver, sessionId, 2000);
  const first = new Subscription(subscriber, 'first subscription', { session_id: sessionId });
  await first.live();

  // Two evicted tool results: at least two events.
  for (let i = 0; i < 2; i++) {
    const big = await agent.turn(serviceLog(30 + i, 200), `journalctl -u ingest -n 200 --no-pager # ${i}`);
    assert.deepEqual(big.evicted, [big.seq]);
  }
  const k = 2;
  await first.waitFor(`${k} events`, (s) => s.events.length >= k);
  const seen = first.events.slice(0, k);
  const cursor = seen.at(-1).cursor;
  first.cancel();
  await first.waitFor('end after cancel', (s) => s.done);
  assert.deepEqual(
    seen.map((e) => n(e.session_seq)),
    [1, 2],
    'the first subscription starts at the first event',
  );

  // While nobody listens: an emergency compaction and another eviction.
  const emergency = await rpc(driver, 'Compact', { session_id: sessionId, mode: 'COMPACT_MODE_EMERGENCY' });
  assert.ok(emergency.applied, 'EMERGENCY changed the view');
  const big = await agent.turn(serviceLog(40, 200), 'journalctl -u ingest -n 200 --no-pager # 2');
  assert.deepEqual(big.evicted, [big.seq]);

  const resumed = new Subscription(subscriber, 'resumed subscription', { session_id: sessionId, after: cursor });
  await resumed.live();
  assert.ok(resumed.events.length > 0, 'the backlog after the cursor is delivered before the first heartbeat');
  assert.equal(
    n(resumed.events[0].session_seq),
    n(seen.at(-1).session_seq) + 1,
    `the resumed stream starts right after the cursor (got [${kindsOf(resumed.events)}])`,
  );
  const backlog = resumed.events.length;
  await rpc(driver, 'DeleteSession', { session_id: sessionId });
  await resumed.deleted(sessionId);
  await resumed.ended();
  checkHeartbeats(resumed);

  // Redelivery (at-least-once) may only repeat what was seen, identically.
  const bySeq = new Map();
  for (const e of [...seen, ...resumed.events]) {
    const previous = bySeq.get(e.session_seq);
    if (previous) assert.equal(identity(e), identity(previous), `event ${e.session_seq} redelivered differently`);
    bySeq.set(e.session_seq, e);
  }
  const union = [...bySeq.values()].sort((a, b) => n(a.session_seq) - n(b.session_seq));
  checkSessionStream('seen + resumed', union, sessionId);
  assert.deepEqual(
    resumed.events.map((e) => n(e.session_seq)),
    union.slice(k).map((e) => n(e.session_seq)),
    'the resumed stream is in order with nothing repeated',
  );
  const kinds = union.map((e) => e.kind);
  for (const kind of ['EVENT_KIND_OUTPUT_EVICTED', 'EVENT_KIND_COMPACTION_COMPLETED']) {
    assert.ok(kinds.includes(kind), `${kind} in [${kindsOf(union)}]`);
  }
  const missed = union.filter((e) => n(e.session_seq) > k);
  assert.ok(
    missed.some((e) => e.kind === 'EVENT_KIND_COMPACTION_COMPLETED'),
    'the compaction made while disconnected is in the resumed stream',
  );
  NOTES.push(
    `resume: ${k} events seen, cancelled, resumed after event ${k}: ${backlog} from the backlog, ` +
      `${union.length} in all without gap`,
  );
}

async function testSearch({ subscriber, driver }) {
  const sessionId = await createSession(driver, 'search');
  const word = distinctiveWord();
  const drove = await driveCompaction(driver, sessionId, word);

  const found = await rpc(subscriber, 'Search', { session_id: sessionId, query: word });
  const hit = found.hits.find((h) => n(h.seq) > 0);
  assert.ok(hit, `a message hit for ${word}: ${JSON.stringify(found.hits)}`);
  assert.equal(hit.session_id, sessionId);
  assert.equal(n(hit.seq), drove.wordSeq, 'the hit is the tool result that held the word');
  assert.equal(hit.role, 'ROLE_TOOL');
  assert.ok(
    ['VIEW_STATE_CLEARED', 'VIEW_STATE_SUMMARIZED'].includes(hit.view_state),
    `the hit is out of the view now (view_state ${hit.view_state})`,
  );
  assert.ok(hit.snippet.includes('«') && hit.snippet.includes('»'), `the snippet marks the match: ${hit.snippet}`);

  const expanded = await rpc(subscriber, 'Expand', { session_id: sessionId, list: { seqs: [hit.seq] } });
  assert.equal(expanded.messages.length, 1);
  const original = expanded.messages[0];
  assert.equal(n(original.seq), drove.wordSeq);
  assert.equal(original.role, 'ROLE_TOOL');
  assert.equal(original.content, drove.wordText, 'Expand returns the tool result whole, byte-exact');

  // Only messages with SEARCH_SCOPE_MESSAGES; the tenant-wide search finds it too;
  // a word never written finds nothing.
  const messagesOnly = await rpc(subscriber, 'Search', {
    session_id: sessionId,
    query: word,
    scope: 'SEARCH_SCOPE_MESSAGES',
  });
  assert.ok(messagesOnly.hits.length > 0 && messagesOnly.hits.every((h) => n(h.seq) > 0 && n(h.summary_id) === 0));
  const tenantWide = await rpc(subscriber, 'Search', { session_id: '', query: word });
  assert.ok(
    tenantWide.hits.some((h) => h.session_id === sessionId && n(h.seq) === drove.wordSeq),
    `the tenant-wide search finds it: ${JSON.stringify(tenantWide.hits)}`,
  );
  const none = await rpc(subscriber, 'Search', { session_id: sessionId, query: distinctiveWord() });
  assert.deepEqual(none.hits, [], 'a word never written finds nothing');

  await rpc(driver, 'DeleteSession', { session_id: sessionId });
  NOTES.push(
    `search: ${word} found at seq ${hit.seq} (${hit.view_state.replace('VIEW_STATE_', '').toLowerCase()}), ` +
      `Expand returned its ${drove.wordText.length} characters`,
  );
}

async function testSubscribeErrors({ subscriber }) {
  const expectError = async (label, request, code) => {
    const s = new Subscription(subscriber, label, request);
    await s.waitFor('its end', (x) => x.done);
    assert.ok(s.error, `${label}: the stream fails`);
    assert.equal(statusName(s.error.code), statusName(code), `${label}: ${s.ending()}`);
  };
  await expectError('unknown session', { session_id: `node-missing-${crypto.randomBytes(6).toString('hex')}` }, grpc.status.NOT_FOUND);
  const sessionId = await createSession(subscriber, 'errors');
  await expectError('after with from_now', { session_id: sessionId, after: 'x', from_now: true }, grpc.status.INVALID_ARGUMENT);
  await expectError('heartbeat too short', { session_id: sessionId, heartbeat_interval_ms: 50 }, grpc.status.INVALID_ARGUMENT);
  await rpc(subscriber, 'DeleteSession', { session_id: sessionId });
}

const TESTS = [
  ['events: a subscriber sees every event in order while another client compacts', testEventsInOrder],
  ['resume: a subscription resumed after a cursor misses nothing', testResume],
  ['search: a compacted tool result is found and Expand returns it whole', testSearch],
  ['errors: unknown session, after with from_now, heartbeat interval', testSubscribeErrors],
];

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  if (!process.env.CTXD_BIN) {
    console.error('events.test.js: set CTXD_BIN to the ctxd binary (tests/node/run does).');
    return 2;
  }
  const started = Date.now();
  let passed = 0;
  let failed = 0;
  let clients = null;
  try {
    const startS = await startServer();
    NOTES.push(`server: SERVING after ${startS.toFixed(1)} s`);
  } catch (error) {
    console.log(`FAIL server start: ${error.message}`);
    failed += 1;
  }
  if (failed === 0) {
    clients = { subscriber: connect('ctxd-node-subscriber/1'), driver: connect('ctxd-node-driver/1') };
    for (const [name, test] of TESTS) {
      const at = Date.now();
      try {
        await withTimeout(test(clients), TEST_TIMEOUT_MS, name);
        passed += 1;
        console.log(`ok   ${name} (${((Date.now() - at) / 1000).toFixed(1)} s)`);
      } catch (error) {
        failed += 1;
        console.log(`FAIL ${name} (${((Date.now() - at) / 1000).toFixed(1)} s)`);
        console.log(`     ${String(error && error.stack ? error.stack : error).split('\n').join('\n     ')}`);
      } finally {
        for (const s of [...OPEN]) s.cancel();
      }
    }
  }

  // The clients stay connected across the stop, as a live backend's would.
  const stopping = Date.now();
  const code = await stopServer();
  if (clients) for (const client of Object.values(clients)) client.close();
  if (SERVER.addr) {
    if (code === null) {
      failed += 1;
      console.log(`FAIL server stop: ctxd did not stop within ${STOP_DEADLINE_MS / 1000} s of SIGTERM`);
    } else if (code !== 0) {
      failed += 1;
      console.log(`FAIL server stop: ctxd exited with ${code} (${SERVER.exit.signal}) after SIGTERM`);
    } else {
      NOTES.push(`server: exit 0 ${((Date.now() - stopping) / 1000).toFixed(1)} s after SIGTERM`);
    }
  }

  console.log(`\nctxd node client (${((Date.now() - started) / 1000).toFixed(1)} s):`);
  for (const note of NOTES) console.log(`  ${note}`);
  if (failed > 0 && SERVER.logPath) console.log(`\nserver log tail:\n${logTail()}`);
  if (SERVER.tmp) fs.rmSync(SERVER.tmp, { recursive: true, force: true });
  console.log(`node: ${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
