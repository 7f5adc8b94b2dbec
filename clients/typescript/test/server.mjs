// A `ctxd serve` subprocess on a loopback port for the tests: started, stopped, and
// started again on the same port and database (a restart). CTXD_BIN names the binary;
// DATABASE_URL, when set, is inherited (otherwise the server runs a private PostgreSQL
// in its data directory, which a restart reuses).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { CtxdClient, NotFoundError } from 'ctxd';

const START_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 30_000;

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export class Server {
  constructor() {
    this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ctxd-ts-'));
    this.logPath = path.join(this.tmp, 'ctxd.log');
    this.child = null;
    this.addr = null;
  }

  /** `clientOptions`: how the readiness probe connects (TLS settings for a TLS server). */
  async start(addr, args = this.args ?? [], clientOptions = this.clientOptions ?? {}) {
    this.args = args;
    this.clientOptions = clientOptions;
    this.addr = addr ?? `127.0.0.1:${await freePort()}`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('CTXD_')));
    // On the suite's database (DATABASE_URL) ctxd refuses calls without a key unless told.
    env.CTXD_ANONYMOUS_ACCESS = 'allow';
    // What a test adds (e.g. an OTLP endpoint).
    Object.assign(env, this.env ?? {});
    const log = fs.openSync(this.logPath, 'a');
    const child = spawn(process.env.CTXD_BIN, ['serve', '--listen', this.addr, '--data-dir', path.join(this.tmp, 'data'), ...this.args], {
      env,
      stdio: ['ignore', log, log],
    });
    fs.closeSync(log);
    this.child = child;
    this.exit = null;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve((this.exit = { code, signal })));
      child.once('error', (error) => resolve((this.exit = { error })));
    });
    // Serving once a call reaches the service: a session that does not exist is NOT_FOUND.
    const probe = new CtxdClient(this.addr, { ...clientOptions, retry: { maxAttempts: 1 }, timeoutMs: 2_000 });
    const started = Date.now();
    try {
      for (;;) {
        if (this.exit) throw new Error(`ctxd ended before serving: ${JSON.stringify(this.exit)}\n${this.logTail()}`);
        try {
          await probe.session('probe').get();
        } catch (error) {
          if (error instanceof NotFoundError) break;
          if (Date.now() - started > START_DEADLINE_MS) throw new Error(`ctxd not serving: ${error.message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      probe.close();
    }
  }

  /** SIGTERM (which also stops a private PostgreSQL), SIGKILL as a last resort. */
  async stop() {
    if (!this.child || this.exit) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_DEADLINE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  logTail(lines = 40) {
    try {
      return fs.readFileSync(this.logPath, 'utf8').split('\n').slice(-lines - 1).join('\n');
    } catch {
      return '(no server log)';
    }
  }
}

// An interrupted run still stops the servers.
const RUNNING = new Set();
export async function startServer(addr, args, clientOptions) {
  const server = new Server();
  await server.start(addr, args, clientOptions);
  RUNNING.add(server);
  return server;
}
process.once('exit', () => {
  for (const server of RUNNING) if (server.child && !server.exit) server.child.kill('SIGTERM');
});
