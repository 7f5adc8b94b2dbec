import type { Event__Output } from './gen/ctxd/v1/Event.js';
import type { EventKind } from './gen/ctxd/v1/EventKind.js';
import type { Transport } from './transport.js';
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
export declare class EventStream implements AsyncIterable<Event> {
    private readonly client;
    private readonly sessionId;
    private readonly options;
    /** The cursor of the last event delivered: where a resubscription starts. */
    cursor: string;
    /** How many times the stream was resubscribed after a disconnect. */
    reconnects: number;
    /**
     * Resolves at the first heartbeat: the backlog has been delivered and the stream is
     * live (with `fromNow`, events committed from then on are delivered).
     */
    readonly live: Promise<void>;
    private markLive;
    private call;
    private closed;
    private started;
    constructor(client: Transport, sessionId: string, options: EventsOptions);
    /** Ends the subscription; a pending `next()` finishes the iteration. */
    close(): void;
    [Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined>;
}
