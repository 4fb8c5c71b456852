// Typed faults: every error a Weft call can raise, converted into one WeftError
// with a stable string code.
import { Code, ConnectError } from "@connectrpc/connect";
import { FaultCode, FaultCodeSchema, FaultSchema, type Fault } from "./gen/weft/v1/fault_pb.js";
import { ViolationsSchema, type FieldPath } from "./gen/buf/validate/validate_pb.js";

/** The header weftd sets on every answer; it finds the server's log line. */
export const CORRELATION_HEADER = "weft-correlation-id";

/**
 * The stable codes of Weft's faults (weft.v1.FaultCode without its prefix, in
 * PascalCase). An error without a recognised Fault detail takes its Connect
 * code's name instead (e.g. "Unknown" for a network failure, "Canceled" for an
 * aborted call); see {@link WeftError.code}.
 */
export type WeftFaultCode =
  | "Unspecified"
  | "InvalidArgument"
  | "NotFound"
  | "IllegalTransition"
  | "SignalAcceptanceIndeterminate"
  | "OperationConflict"
  | "TaskClaimLost"
  | "ResourceExhausted"
  | "Unauthenticated"
  | "PermissionDenied"
  | "CapabilityUnavailable"
  | "Unavailable"
  | "SchemaValidationFailed"
  | "Internal"
  | "Unimplemented"
  | "PayloadTooLarge"
  | "FailedPrecondition";

/** The names of Connect codes, used when an error carries no known Fault. */
export type ConnectCodeName = keyof typeof Code;

/** A WeftError's code: a fault code, a Connect code name, or (from a newer server) another string. */
export type WeftErrorCode = WeftFaultCode | ConnectCodeName | (string & {});

/** One field that broke a validation rule (from buf.validate.Violations). */
export interface FieldViolation {
  /** The field's path, e.g. "run_id" or "definition.actions[0].id". */
  readonly field: string;
  /** The rule's id, e.g. "string.min_len". */
  readonly ruleId: string;
  /** The rule's human-readable message. */
  readonly message: string;
}

/**
 * WeftError is the error every call of a Weft client rejects with.
 *
 * `code` is stable: compare it, not `message`. It is the Fault's code name
 * (e.g. "InvalidArgument", "IllegalTransition",
 * "SignalAcceptanceIndeterminate"); without a Fault detail, or with a fault
 * code this client does not know yet, it is the Connect code's name
 * (e.g. "Unavailable", "Unknown").
 */
export class WeftError extends Error {
  override readonly name = "WeftError";
  /** The stable code; see the class comment. */
  readonly code: WeftErrorCode;
  /** The Connect (gRPC) code of the answer. */
  readonly connectCode: Code;
  /** The Fault detail, when the server sent one. */
  readonly fault: Fault | undefined;
  /** The fault code's number, also when this client does not know its name. */
  readonly faultCode: FaultCode | undefined;
  /** The fields that broke validation rules (empty unless invalid input). */
  readonly violations: readonly FieldViolation[];
  /** Finds the server's log line for this error, when known. */
  readonly correlationId: string | undefined;
  /** When to retry, for ResourceExhausted (from the Fault or Retry-After). */
  readonly retryAfterMs: number | undefined;
  /** The server's message, without the "[code]" prefix ConnectError adds. */
  readonly rawMessage: string;
  /** The underlying ConnectError (its metadata, details and cause). */
  override readonly cause: ConnectError;

  constructor(err: ConnectError) {
    const fault = err.findDetails(FaultSchema)[0];
    const code = codeOf(err.code, fault?.code);
    super(`${code}: ${err.rawMessage}`);
    this.code = code;
    this.connectCode = err.code;
    this.fault = fault;
    this.faultCode = fault?.code;
    this.violations = err
      .findDetails(ViolationsSchema)
      .flatMap((v) => v.violations)
      .map((v) => ({ field: formatFieldPath(v.field), ruleId: v.ruleId, message: v.message }));
    this.correlationId = fault?.correlationId || err.metadata.get(CORRELATION_HEADER) || undefined;
    this.retryAfterMs = retryAfter(fault, err.metadata.get("retry-after"));
    this.rawMessage = err.rawMessage;
    this.cause = err;
  }

  /** True for a failure to reach the server at all (fetch or socket error). */
  get isNetworkError(): boolean {
    return isNetworkError(this.cause);
  }

  static [Symbol.hasInstance](v: unknown): boolean {
    // Tolerates two copies of this module in one bundle.
    return v instanceof Error && v.name === "WeftError" && "connectCode" in v && "violations" in v;
  }
}

/**
 * toWeftError converts anything a call threw into a WeftError: a WeftError
 * as is, a ConnectError with its details, any other value as code "Unknown"
 * (or "Canceled" for an AbortError).
 */
export function toWeftError(err: unknown): WeftError {
  if (err instanceof WeftError) return err;
  return new WeftError(ConnectError.from(err));
}

/** The PascalCase name of a fault code, or undefined for a number this client does not know. */
export function faultCodeName(code: FaultCode): WeftFaultCode | undefined {
  const v = FaultCodeSchema.value[code];
  if (!v) return undefined;
  return pascal(v.localName) as WeftFaultCode;
}

function codeOf(connectCode: Code, fault: FaultCode | undefined): WeftErrorCode {
  if (fault !== undefined && fault !== FaultCode.UNSPECIFIED) {
    const name = faultCodeName(fault);
    if (name) return name;
  }
  return Code[connectCode] ?? "Unknown";
}

function pascal(screaming: string): string {
  return screaming
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

function retryAfter(fault: Fault | undefined, header: string | null): number | undefined {
  if (fault?.retryAfterMs) return fault.retryAfterMs;
  if (header && /^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  return undefined;
}

/** Formats a protovalidate field path as "a.b[0].c["key"]". */
export function formatFieldPath(path: FieldPath | undefined): string {
  if (!path) return "";
  let out = "";
  for (const el of path.elements) {
    out += (out ? "." : "") + el.fieldName;
    const sub = el.subscript;
    switch (sub.case) {
      case "index":
      case "intKey":
      case "uintKey":
        out += `[${sub.value}]`;
        break;
      case "boolKey":
        out += `[${sub.value}]`;
        break;
      case "stringKey":
        out += `[${JSON.stringify(sub.value)}]`;
        break;
      default:
        // No subscript, or a kind this client does not know.
        break;
    }
  }
  return out;
}

/**
 * isNetworkError tells whether a call failed before reaching the server: the
 * fetch API's TypeError (connect-web) or a socket error that connect-node
 * reports as unavailable.
 */
export function isNetworkError(err: unknown): boolean {
  const e = err instanceof WeftError ? err.cause : err;
  if (e instanceof ConnectError) {
    if (e.code === Code.Unknown && e.cause instanceof Error) return e.cause.name === "TypeError";
    return false;
  }
  return e instanceof Error && e.name === "TypeError";
}

/** isRetryable tells whether retrying the same request may succeed: unavailable or a network failure. */
export function isRetryable(err: unknown): boolean {
  const e = toWeftError(err);
  return e.connectCode === Code.Unavailable || e.isNetworkError;
}
