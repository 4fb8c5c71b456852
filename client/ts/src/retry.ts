// Retries of calls that are safe to repeat as they are.
import { Code } from "@connectrpc/connect";
import { toWeftError } from "./errors.js";

/** How calls that are safe to repeat are retried. Unset fields take {@link DEFAULT_RETRY_POLICY}'s values. */
export interface RetryPolicy {
  /** Attempts, counting the first; 1 disables retries. */
  maxAttempts?: number;
  /** The wait before the second attempt, in milliseconds. */
  initialBackoffMs?: number;
  /** The longest wait, in milliseconds. */
  maxBackoffMs?: number;
  /** How much each wait grows (at least 1). */
  multiplier?: number;
}

/** Four attempts, waiting 100, 200 and 400 ms (each with up to 20% jitter), capped at 2 s: the Go client's policy. */
export const DEFAULT_RETRY_POLICY: Required<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  initialBackoffMs: 100,
  maxBackoffMs: 2000,
  multiplier: 2,
});

/** Answers the policy with every unset or out-of-range field defaulted. */
export function retryPolicy(p: RetryPolicy = {}): Required<RetryPolicy> {
  const d = DEFAULT_RETRY_POLICY;
  return {
    maxAttempts: p.maxAttempts !== undefined && p.maxAttempts >= 1 ? Math.floor(p.maxAttempts) : d.maxAttempts,
    initialBackoffMs: p.initialBackoffMs !== undefined && p.initialBackoffMs > 0 ? p.initialBackoffMs : d.initialBackoffMs,
    maxBackoffMs: p.maxBackoffMs !== undefined && p.maxBackoffMs > 0 ? p.maxBackoffMs : d.maxBackoffMs,
    multiplier: p.multiplier !== undefined && p.multiplier >= 1 ? p.multiplier : d.multiplier,
  };
}

/**
 * backoffMs answers the wait after the given failed attempt (1-based):
 * initialBackoffMs × multiplier^(attempt-1), capped at maxBackoffMs, times a
 * jitter factor in [1, 1.2) (`random` answers [0, 1); injectable for tests).
 */
export function backoffMs(policy: Required<RetryPolicy>, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(policy.initialBackoffMs * policy.multiplier ** Math.max(0, attempt - 1), policy.maxBackoffMs);
  return base * (1 + 0.2 * random());
}

/**
 * isTransient tells whether a failed call may be repeated as it is: the server
 * was unavailable or not reached, or the call's deadline passed. Answers about
 * the request itself (invalid argument, claim lost, …) are not transient.
 */
export function isTransient(err: unknown): boolean {
  const e = toWeftError(err);
  return e.connectCode === Code.Unavailable || e.connectCode === Code.DeadlineExceeded || e.isNetworkError;
}

/** Options of {@link withRetry}. */
export interface WithRetryOptions {
  /** Aborts the waits between attempts (the last error is thrown). */
  signal?: AbortSignal;
  /** Called before each retry with the attempt that failed (1-based) and its error. */
  onRetry?: (attempt: number, err: unknown) => void;
  /** The wait between attempts; tests inject one. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * withRetry calls `call` until it succeeds, fails with an error that is not
 * {@link isTransient}, or the policy's attempts run out; it throws the last
 * error. `call` must send the same request each time (the same task token,
 * the same signal id): that is what makes repeating it safe.
 */
export async function withRetry<T>(policy: RetryPolicy, call: () => Promise<T>, options: WithRetryOptions = {}): Promise<T> {
  const p = retryPolicy(policy);
  const wait = options.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= p.maxAttempts || !isTransient(e) || options.signal?.aborted) throw e;
      options.onRetry?.(attempt, e);
      try {
        await wait(backoffMs(p, attempt), options.signal);
      } catch {
        throw e;
      }
    }
  }
}

/** sleep waits ms milliseconds; it rejects when signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
