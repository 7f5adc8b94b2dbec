// Test helpers: a TCP proxy that can cut a connection right after the server answered
// (the answer lost on the way back), and a collector that waits on an event stream.
import net from 'node:net';

import { freePort } from './server.mjs';

/**
 * Forwards a loopback port to the server. After `cutNextReply()`, the next chunk the
 * server sends that is larger than HTTP/2's small control frames (a call's response) is
 * dropped and both sockets are destroyed: the call ran on the server, the client only
 * sees the connection go.
 */
export class CuttingProxy {
  static async start(target) {
    const proxy = new CuttingProxy(target);
    const port = await freePort();
    await new Promise((resolve) => proxy.server.listen(port, '127.0.0.1', resolve));
    proxy.addr = `127.0.0.1:${port}`;
    return proxy;
  }

  constructor(target) {
    const [host, port] = target.split(':');
    this.armed = false;
    this.cuts = 0;
    this.frozen = new Set();
    this.sockets = new Set();
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(port), host);
      this.sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.on('data', (chunk) => {
        if (!this.frozen.has(client)) upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (this.frozen.has(client)) return;
        if (this.armed && chunk.length > 64) {
          this.armed = false;
          this.cuts++;
          drop();
          return;
        }
        client.write(chunk);
      });
    });
  }

  /** The open connections go silent both ways, without closing: a peer that vanished. */
  freeze() {
    for (const socket of this.sockets) if (!socket.destroyed) this.frozen.add(socket);
  }

  cutNextReply() {
    this.armed = true;
  }

  close() {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(resolve));
  }
}

/** Reads an EventStream in the background; `waitFor(n)` resolves once n events came. */
export class Collector {
  constructor(stream, timeoutMs = 30_000) {
    this.stream = stream;
    this.timeoutMs = timeoutMs;
    this.events = [];
    this.error = null;
    this.done = false;
    this.waiters = new Set();
    this.finished = (async () => {
      try {
        for await (const event of stream) {
          this.events.push(event);
          this.notify();
        }
      } catch (error) {
        this.error = error;
      } finally {
        this.done = true;
        this.notify();
      }
    })();
  }

  notify() {
    for (const waiter of [...this.waiters]) waiter();
  }

  waitFor(count) {
    return this.waitUntil((events) => events.length >= count, `${count} events`);
  }

  /** Resolves once `predicate(events)` holds; rejects when the stream ends first or on timeout. */
  waitUntil(predicate, what = 'the expected events') {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`not ${what} within ${this.timeoutMs} ms (${this.events.length} events)`));
      }, this.timeoutMs);
      const check = () => {
        if (predicate(this.events)) {
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve(this.events.slice());
        } else if (this.done) {
          clearTimeout(timer);
          this.waiters.delete(check);
          reject(this.error ?? new Error(`the stream ended after ${this.events.length} events, before ${what}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  async close() {
    this.stream.close();
    await this.finished;
  }
}
