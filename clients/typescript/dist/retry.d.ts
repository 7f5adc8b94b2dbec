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
/** Runs `attempt` until it succeeds, fails with anything but UNAVAILABLE, or the attempts run out. */
export declare function withRetries<T>(policy: RetryPolicy, attempt: (n: number) => Promise<T>): Promise<T>;
