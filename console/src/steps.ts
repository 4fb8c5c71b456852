// What the views derive from a step: its attempts so far and its error as text.
import { create } from "@bufbuild/protobuf";
import { StepStatus, AttemptSchema, type Attempt, type Step, type StepError } from "../../client/ts/src/gen/weft/v1/run_pb";
import { errorClassName } from "./format";

/** A step is in flight while a worker holds its task (docs/semantics.md: only claimed tasks count for DRAINING); a sleep has none. */
export const inFlight = (s: Step) => s.status === StepStatus.RUNNING && !sleeping(s);

/** sleeping reports whether a sleep step waits for its wake time (docs/semantics.md#sleep). */
export const sleeping = (s: Step) => s.status === StepStatus.RUNNING && s.wakeAt !== undefined;

/** skippedByCondition reports whether the step's when was false (docs/semantics.md#when). */
export const skippedByCondition = (s: Step) => s.status === StepStatus.SKIPPED && s.reason === "condition";

/**
 * attemptsOf answers a step's recorded attempts and, while it runs, the
 * current one (recorded only when it ends), so that running work shows.
 */
export function attemptsOf(s: Step): Attempt[] {
  const running =
    s.status === StepStatus.RUNNING &&
    !sleeping(s) &&
    s.startedAt !== undefined &&
    !s.attempts.some((a) => a.logicalAttemptId === s.logicalAttemptId && a.engineAttemptId === s.engineAttemptId);
  if (!running) return s.attempts;
  return [...s.attempts, create(AttemptSchema, { logicalAttemptId: s.logicalAttemptId, engineAttemptId: s.engineAttemptId, startedAt: s.startedAt })];
}

/** stepErrorText answers an error's class, code and message, each once. */
export function stepErrorText(e: StepError): string {
  const cls = errorClassName(e.errorClass);
  // weftd's messages often begin with the class and code already.
  if (e.message.startsWith(`ERROR_CLASS_${cls}`)) return e.message;
  const code = e.code && !e.message.includes(e.code) ? ` ${e.code}` : "";
  return `${cls}${code}: ${e.message}`;
}
