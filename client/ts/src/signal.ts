// signalRun: idempotent signal delivery. One signal id per logical signal,
// reused across this helper's own retries, so a retry after a lost answer is
// answered with the original accepted result instead of a second signal.
import type { Client } from "@connectrpc/connect";
import type { JsonValue } from "@bufbuild/protobuf";
import { SignalService, type SignalRunResponse } from "./gen/weft/v1/signal_pb.js";
import { isRetryable, toWeftError } from "./errors.js";
import { toValue } from "./values.js";

/** What to signal. */
export interface SignalRunInput {
  /** The target run. */
  runId: string;
  /** The signal's name. */
  signalName: string;
  /** The payload, as JSON. */
  payload?: JsonValue;
  /** The signal id; default a fresh UUID, made once and reused across retries. */
  signalId?: string;
}

/** How {@link signalRun} retries. */
export interface SignalRunOptions {
  /** Attempts in all, the first included (default 5). */
  maxAttempts?: number;
  /** Delay before the first retry, doubled each time (default 200 ms). */
  initialBackoffMs?: number;
  /** Cap of the delay between attempts (default 5000 ms). */
  maxBackoffMs?: number;
  /** Aborts the call and any further retries. */
  signal?: AbortSignal;
  /** A timeout for each attempt, in milliseconds. */
  timeoutMs?: number;
  /** Called before each retry (for logs); attempt counts from 2. */
  onRetry?: (attempt: number, error: unknown, signalId: string) => void;
}

/**
 * signalRun sends a named signal to a run. It makes one signal id (unless
 * input.signalId is set) and reuses it for its own retries, which happen only
 * when the server was unavailable or could not be reached; any other error
 * rejects at once, as a WeftError. A duplicate answers the original accepted
 * result with `duplicate` true.
 */
export async function signalRun(
  signals: Client<typeof SignalService>,
  input: SignalRunInput,
  options: SignalRunOptions = {},
): Promise<SignalRunResponse> {
  const signalId = input.signalId ?? newSignalId();
  const payload = input.payload === undefined ? undefined : toValue(input.payload);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  let backoff = options.initialBackoffMs ?? 200;
  const maxBackoff = options.maxBackoffMs ?? 5000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await signals.signalRun(
        { runId: input.runId, signalName: input.signalName, signalId, payload },
        { signal: options.signal, timeoutMs: options.timeoutMs },
      );
    } catch (e) {
      const err = toWeftError(e);
      if (attempt >= maxAttempts || !isRetryable(err) || options.signal?.aborted) throw err;
      options.onRetry?.(attempt + 1, err, signalId);
      const wait = Math.min(maxBackoff, Math.max(backoff, err.retryAfterMs ?? 0));
      await sleep(wait * (0.5 + Math.random() / 2), options.signal);
      backoff = Math.min(maxBackoff, backoff * 2);
    }
  }
}

/** newSignalId answers a random UUID (crypto.randomUUID where the platform has it). */
export function newSignalId(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === "function") return c.randomUUID();
  // Insecure browser contexts lack randomUUID; build a version 4 UUID.
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(toWeftError(signal.reason ?? new Error("aborted")));
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(toWeftError(signal?.reason ?? new Error("aborted")));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
