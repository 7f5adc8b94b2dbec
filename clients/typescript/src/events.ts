// SubscribeEvents as an async iterator that survives disconnects and server restarts:
// it resubscribes after the last event it delivered, so nothing is missed or repeated.
import * as grpc from '@grpc/grpc-js';

import { CtxdError, fromServiceError } from './errors.js';
import type { Event__Output } from './gen/ctxd/v1/Event.js';
import type { EventKind } from './gen/ctxd/v1/EventKind.js';
import type { SubscribeEventsResponse__Output } from './gen/ctxd/v1/SubscribeEventsResponse.js';
import type { Transport } from './transport.js';
import { backoffMs, sleep } from './retry.js';

export type Event = Event__Output;

export interface EventsOptions {
  /** Resume after this cursor (an Event's `cursor`). Default: the oldest event kept. */
  after?: string;
  /** Only events committed after the subscription (not with `after`). */
  fromNow?: boolean;
  /** Only these kinds. */
  kinds?: EventKind[];
  /** Server heartbeat interval in milliseconds (0: the server's 15 000). */
  heartbeatIntervalMs?: number;
  /**
   * How long to keep trying to resubscribe while the server is unreachable, in
   * milliseconds (default 60 000); then the iterator throws the UNAVAILABLE error.
   */
  reconnectTimeoutMs?: number;
}

/**
 * The events of a session (or of every session of the tenant), in order, each once.
 * Iterate with `for await`; `break` (or `close()`) ends the subscription. After an
 * UNAVAILABLE error or a stream the server ended (e.g. on shutdown) it resubscribes from
 * `cursor`. It ends after a session's SESSION_DELETED event.
 */
export class EventStream implements AsyncIterable<Event> {
  /** The cursor of the last event delivered: where a resubscription starts. */
  cursor: string;
  /** How many times the stream was resubscribed after a disconnect. */
  reconnects = 0;
  /**
   * Resolves at the first heartbeat: the backlog has been delivered and the stream is
   * live (with `fromNow`, events committed from then on are delivered).
   */
  readonly live: Promise<void>;
  private markLive: () => void = () => {};
  private call: grpc.ClientReadableStream<SubscribeEventsResponse__Output> | null = null;
  private closed = false;
  private started = false;

  constructor(
    private readonly client: Transport,
    private readonly sessionId: string,
    private readonly options: EventsOptions,
  ) {
    this.cursor = options.after ?? '';
    this.live = new Promise((resolve) => {
      this.markLive = resolve;
    });
  }

  /** Ends the subscription; a pending `next()` finishes the iteration. */
  close(): void {
    this.closed = true;
    this.call?.cancel();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined> {
    if (this.started) throw new TypeError('an EventStream can be iterated once');
    this.started = true;
    const reconnectTimeoutMs = this.options.reconnectTimeoutMs ?? 60_000;
    let failingSince: number | null = null;
    let failures = 0;
    let fromNow = this.options.fromNow ?? false;
    while (!this.closed) {
      const call = this.client.stub.SubscribeEvents(
        {
          sessionId: this.sessionId,
          kinds: this.options.kinds ?? [],
          after: this.cursor,
          fromNow: fromNow && this.cursor === '',
          heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? 0,
        },
        this.client.metadata(),
      );
      this.call = call;
      let delivered = false;
      try {
        for await (const item of call as AsyncIterable<SubscribeEventsResponse__Output>) {
          failingSince = null;
          failures = 0;
          delivered = true;
          if (item.event) {
            this.cursor = item.event.cursor;
            yield item.event;
            if (item.event.kind === 'EVENT_KIND_SESSION_DELETED' && this.sessionId !== '') return;
          } else if (item.heartbeat) {
            this.markLive();
            if (this.cursor === '' && item.heartbeat.cursor !== '') {
              // A from_now stream's position before its first event.
              this.cursor = item.heartbeat.cursor;
              fromNow = false;
            }
          }
        }
        // The server ended the stream without a deletion (a shutdown): resubscribe, at
        // once unless it ended before sending anything.
        if (!delivered && !this.closed) await sleep(backoffMs(this.client.retry, 3));
      } catch (raw) {
        if (this.closed) return;
        const error = raw instanceof CtxdError ? raw : fromServiceError(raw as grpc.ServiceError);
        if (error.code !== grpc.status.UNAVAILABLE) throw error;
        failingSince ??= Date.now();
        if (Date.now() - failingSince > reconnectTimeoutMs) throw error;
        failures++;
        await sleep(backoffMs(this.client.retry, Math.min(failures, 10)));
      } finally {
        call.cancel();
        this.call = null;
      }
      if (!this.closed) this.reconnects++;
    }
  }
}
