// Retries on UNAVAILABLE: exponential backoff with full jitter, a bounded number of
// attempts; and on RESOURCE_EXHAUSTED that carries the server's RetryInfo (a rate quota
// that will have room soon), after the delay it names. Callers that append pass the same
// idempotency key to every attempt.
import * as grpc from '@grpc/grpc-js';
import { CtxdError, ResourceExhaustedError } from './errors.js';
export function retryPolicy(options) {
    const policy = {
        maxAttempts: options?.maxAttempts ?? 5,
        initialBackoffMs: options?.initialBackoffMs ?? 100,
        maxBackoffMs: options?.maxBackoffMs ?? 5_000,
    };
    if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1 || policy.maxAttempts > 100) {
        throw new RangeError('retry.maxAttempts must be an integer from 1 to 100');
    }
    for (const name of ['initialBackoffMs', 'maxBackoffMs']) {
        if (!Number.isFinite(policy[name]) || policy[name] < 0 || policy[name] > 600_000) {
            throw new RangeError(`retry.${name} must be from 0 to 600000`);
        }
    }
    return policy;
}
/** The wait before attempt `attempt + 1` (attempt counts from 1). */
export function backoffMs(policy, attempt) {
    const ceiling = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.min(attempt - 1, 30));
    return Math.random() * ceiling;
}
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * The wait before trying again after attempt `n` failed with `error`, or null: not
 * retried. UNAVAILABLE: the backoff. RESOURCE_EXHAUSTED with the server's RetryInfo: its
 * delay, when that is at most maxBackoffMs (a longer wait is the caller's to decide);
 * without RetryInfo (a limit, not a rate) it is not retried.
 */
export function retryWaitMs(policy, error, n) {
    if (!(error instanceof CtxdError) || n >= policy.maxAttempts)
        return null;
    if (error.code === grpc.status.UNAVAILABLE)
        return backoffMs(policy, n);
    const delay = error instanceof ResourceExhaustedError ? error.retryDelayMs : undefined;
    if (delay !== undefined && delay >= 0 && delay <= policy.maxBackoffMs)
        return delay;
    return null;
}
/** Runs `attempt` until it succeeds, fails in a way that is not retried, or the attempts run out. */
export async function withRetries(policy, attempt) {
    for (let n = 1;; n++) {
        try {
            return await attempt(n);
        }
        catch (error) {
            const wait = retryWaitMs(policy, error, n);
            if (wait === null)
                throw error;
            await sleep(wait);
        }
    }
}
