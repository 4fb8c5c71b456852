// Names, times and JSON as the console shows them. Everything here answers
// plain strings: the views render them as text, never as HTML.
import { toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema, type Timestamp, type Value, timestampMs } from "@bufbuild/protobuf/wkt";
import { RunStatus, RunSubstatus, StepStatus, AttemptOutcome, CompensationOutcome, CompensationStatus } from "../../client/ts/src/gen/weft/v1/run_pb";
import { ErrorClass } from "../../client/ts/src/gen/weft/v1/common_pb";

/** The name of an enum value without its prefix, or its number when this console does not know it. */
export function enumName(e: Record<number, string>, v: number): string {
  return e[v] ?? String(v);
}

/** The run status's name, e.g. "RUNNING". */
export const runStatusName = (s: RunStatus): string => enumName(RunStatus, s);
/** The substatus's name, or "" when unset. */
export const substatusName = (s: RunSubstatus): string => (s === RunSubstatus.UNSPECIFIED ? "" : enumName(RunSubstatus, s));
/** The step status's name, e.g. "WAITING_FOR_MANUAL_COMPLETION". */
export const stepStatusName = (s: StepStatus): string => enumName(StepStatus, s);
/** The attempt outcome's name; "RUNNING" while unset. */
export const attemptOutcomeName = (o: AttemptOutcome): string => (o === AttemptOutcome.UNSPECIFIED ? "RUNNING" : enumName(AttemptOutcome, o));
/** The compensation outcome's name, or "" when none ran. */
export const compensationOutcomeName = (o: CompensationOutcome): string =>
  o === CompensationOutcome.UNSPECIFIED ? "" : enumName(CompensationOutcome, o);
/** The step's compensation status, or "" when none. */
export const compensationStatusName = (s: CompensationStatus): string =>
  s === CompensationStatus.UNSPECIFIED ? "" : enumName(CompensationStatus, s);
/** The error class's name, e.g. "TRANSIENT". */
export const errorClassName = (c: ErrorClass): string => enumName(ErrorClass, c);

/** The run statuses a person can filter on, in lifecycle order. */
export const RUN_STATUSES: RunStatus[] = [
  RunStatus.PENDING, RunStatus.APPROVED, RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.BLOCKED, RunStatus.PAUSED,
  RunStatus.COMPENSATING, RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED,
];

/** Whether a status is terminal. */
export const isTerminal = (s: RunStatus): boolean =>
  s === RunStatus.COMPLETED || s === RunStatus.FAILED || s === RunStatus.CANCELLED;

/** A timestamp's milliseconds since the epoch, or undefined when unset. */
export const ms = (t: Timestamp | undefined): number | undefined => (t ? timestampMs(t) : undefined);

/** A timestamp as local date and time, or "—". */
export function when(t: Timestamp | undefined): string {
  const m = ms(t);
  return m === undefined ? "—" : new Date(m).toLocaleString(undefined, { hour12: false });
}

/** A timestamp's local time of day with milliseconds, e.g. "21:09:43.512", or "—". */
export function clock(t: Timestamp | undefined): string {
  const m = ms(t);
  if (m === undefined) return "—";
  const d = new Date(m);
  return `${d.toLocaleTimeString(undefined, { hour12: false })}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

/** A duration in milliseconds as "850 ms", "4.2 s", "3 min 5 s" or "2 h 4 min". */
export function duration(d: number | undefined): string {
  if (d === undefined || !Number.isFinite(d)) return "—";
  if (d < 1000) return `${Math.max(0, Math.round(d))} ms`;
  if (d < 60_000) return `${(d / 1000).toFixed(1)} s`;
  if (d < 3_600_000) return `${Math.floor(d / 60_000)} min ${Math.round((d % 60_000) / 1000)} s`;
  return `${Math.floor(d / 3_600_000)} h ${Math.round((d % 3_600_000) / 60_000)} min`;
}

/** A google.protobuf.Value as indented JSON text, or "" when unset. */
export function jsonText(v: Value | undefined): string {
  return v ? JSON.stringify(toJson(ValueSchema, v), null, 2) : "";
}

/** Any JSON value as indented text. */
export const prettyJson = (v: JsonValue): string => JSON.stringify(v, null, 2);
