// Activity failures: the error class that decides the engine's retry, an
// application code, and whether the side effect may have happened.
import { ErrorClass } from "../gen/weft/v1/common_pb.js";

/** The longest failure message reported (the API allows 4096 characters). */
export const MAX_MESSAGE_CHARS = 2048;
/** The longest application error code reported. */
export const MAX_CODE_CHARS = 128;

/**
 * ActivityFailure is an activity error with the class that decides its retry
 * (docs/semantics.md#error-classes-weftv1errorclass), an application code and whether the
 * external effect may have happened. Throw one from an activity (or use
 * {@link fail}); any other error is reported with class UNKNOWN. Its message is
 * reported to weftd: keep payloads and secrets out of it.
 */
export class ActivityFailure extends Error {
  override readonly name = "ActivityFailure";
  /** The class; UNSPECIFIED is reported as UNKNOWN. */
  readonly errorClass: ErrorClass;
  /** An application error code (at most 128 characters), or "". */
  readonly code: string;
  /** True when the external effect may have happened: the engine verifies before it retries. */
  readonly sideEffectPossible: boolean;
  /**
   * The earliest the next attempt may start, in milliseconds from the report
   * (a rate limit's Retry-After): weftd starts it at the later of this and the
   * retry policy's backoff, at most a day (docs/semantics.md#retry-after). 0: the backoff alone.
   */
  readonly retryAfterMs: number;

  constructor(
    errorClass: ErrorClass,
    code: string,
    message: string,
    options: { cause?: unknown; sideEffectPossible?: boolean; retryAfterMs?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.errorClass = errorClass === ErrorClass.UNSPECIFIED ? ErrorClass.UNKNOWN : errorClass;
    this.code = code;
    this.sideEffectPossible = options.sideEffectPossible ?? false;
    this.retryAfterMs = options.retryAfterMs ?? 0;
  }

  static [Symbol.hasInstance](v: unknown): boolean {
    // Tolerates two copies of this module (e.g. the package and a bundle).
    return v instanceof Error && v.name === "ActivityFailure" && "errorClass" in v && "sideEffectPossible" in v;
  }
}

/**
 * fail answers an ActivityFailure to throw, e.g.
 *
 *     throw fail(ErrorClass.VALIDATION, "sku_unknown", "the SKU is not in the catalogue");
 */
export function fail(errorClass: ErrorClass, code: string, message: string | Error): ActivityFailure {
  return typeof message === "string"
    ? new ActivityFailure(errorClass, code, message)
    : new ActivityFailure(errorClass, code, message.message, { cause: message });
}

/**
 * rateLimited answers a RATE_LIMIT failure whose next attempt starts no
 * sooner than `retryAfterMs` from now, e.g. from the external system's
 * Retry-After:
 *
 *     throw rateLimited("the bank answered 429", 30_000);
 */
export function rateLimited(message: string, retryAfterMs: number): ActivityFailure {
  return new ActivityFailure(ErrorClass.RATE_LIMIT, "rate_limited", message, { retryAfterMs });
}

/** The longest retry_after the API takes: a day. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/** retryAfterMs answers ms as the API's retry_after_ms: a whole number within its bound. */
export function retryAfterMs(ms: number | undefined): number {
  if (!ms || !Number.isFinite(ms) || ms <= 0) return 0;
  return Math.min(Math.ceil(ms), MAX_RETRY_AFTER_MS);
}

/**
 * sideEffectPossible marks err as one after which the external effect may
 * have happened, keeping its class and code when it is an ActivityFailure.
 */
export function sideEffectPossible(err: unknown): ActivityFailure {
  if (err instanceof ActivityFailure) {
    return new ActivityFailure(err.errorClass, err.code, err.message, { cause: err.cause, sideEffectPossible: true, retryAfterMs: err.retryAfterMs });
  }
  return new ActivityFailure(ErrorClass.UNKNOWN, "", messageOf(err), { cause: err, sideEffectPossible: true });
}

/** Why the runtime ended an activity's AbortSignal. */
export type AbortKind = "deadline" | "cancel-requested" | "claim-lost" | "abandoned";

/** TaskAborted is the reason of an activity's AbortSignal when the runtime aborts it. */
export class TaskAborted extends Error {
  override readonly name = "TaskAborted";
  /** Why the task was stopped. */
  readonly kind: AbortKind;
  constructor(kind: AbortKind) {
    super(abortMessages[kind]);
    this.kind = kind;
  }
}

const abortMessages: Record<AbortKind, string> = {
  deadline: "the attempt's deadline passed",
  "cancel-requested": "weft asked the worker to stop the task",
  "claim-lost": "the task's claim was lost",
  abandoned: "the worker shut down before the task finished",
};

/** A failure as reported: class, code, message, side effect. */
export interface Classified {
  errorClass: ErrorClass;
  code: string;
  message: string;
  sideEffectPossible: boolean;
  /** The failure's retry_after, in milliseconds (0 or absent: none). */
  retryAfterMs?: number;
}

/**
 * classify answers the failure to report for an activity's error, given why
 * the runtime aborted it (if it did). An explicit ActivityFailure wins; then a
 * cancel request (CANCELLED) and the deadline (TIMEOUT); anything else is
 * UNKNOWN, which the engine retries until attempts run out.
 */
export function classify(err: unknown, aborted: AbortKind | undefined): Classified {
  if (err instanceof ActivityFailure) {
    return { errorClass: err.errorClass, code: err.code, message: err.message, sideEffectPossible: err.sideEffectPossible, retryAfterMs: err.retryAfterMs };
  }
  const message = messageOf(err);
  switch (aborted) {
    case "cancel-requested":
      return { errorClass: ErrorClass.CANCELLED, code: "cancel_requested", message, sideEffectPossible: false };
    case "deadline":
      return { errorClass: ErrorClass.TIMEOUT, code: "deadline_exceeded", message, sideEffectPossible: false };
    default:
      return { errorClass: ErrorClass.UNKNOWN, code: "", message, sideEffectPossible: false };
  }
}

/** messageOf answers an error's message ("failed" when it has none). */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name || "failed";
  if (typeof err === "string") return err || "failed";
  return "failed";
}

/** truncate cuts s to at most n characters (code points), ending a cut string with "…". */
export function truncate(s: string, n: number): string {
  const chars = Array.from(s);
  return chars.length <= n ? s : chars.slice(0, n - 1).join("") + "…";
}
