/** How calls are retried when the server is unavailable. */
export interface RetryOptions {
    /** Attempts in all, the first included (default 5; 1 disables retries). */
    maxAttempts?: number;
    /** The first backoff in milliseconds (default 100). */
    initialBackoffMs?: number;
    /** The longest backoff in milliseconds (default 5000). */
    maxBackoffMs?: number;
}
export interface RetryPolicy {
    maxAttempts: number;
    initialBackoffMs: number;
    maxBackoffMs: number;
}
export declare function retryPolicy(options: RetryOptions | undefined): RetryPolicy;
/** The wait before attempt `attempt + 1` (attempt counts from 1). */
export declare function backoffMs(policy: RetryPolicy, attempt: number): number;
export declare const sleep: (ms: number) => Promise<void>;
/**
 * The wait before trying again after attempt `n` failed with `error`, or null: not
 * retried. UNAVAILABLE: the backoff. RESOURCE_EXHAUSTED with the server's RetryInfo: its
 * delay, when that is at most maxBackoffMs (a longer wait is the caller's to decide);
 * without RetryInfo (a limit, not a rate) it is not retried.
 */
export declare function retryWaitMs(policy: RetryPolicy, error: unknown, n: number): number | null;
/** Runs `attempt` until it succeeds, fails in a way that is not retried, or the attempts run out. */
export declare function withRetries<T>(policy: RetryPolicy, attempt: (n: number) => Promise<T>): Promise<T>;
