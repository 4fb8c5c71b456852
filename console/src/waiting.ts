// Why a run that is not finished does not move on, as the CLI's weft get and
// weft list say it (cmd/weft/waiting.go): the signal a step waits for, a
// manual step, a step the run is held on after its failure and what clears
// it, a sleep and its wake time, a start or an approval, a slot it is queued
// for, or a pause.
import { RunStatus, StepStatus, type Run, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { when } from "./format";

/** One thing a run waits for: what, and what ends the wait. */
export interface Wait {
  what: string;
  next: string;
}

function stepWait(run: Run, s: Step): Wait | undefined {
  switch (s.status) {
    case StepStatus.WAITING_FOR_SIGNAL:
      return { what: `signal ${s.waitingForSignal} (step ${s.actionId})`, next: "Send signal" };
    case StepStatus.WAITING_FOR_MANUAL_COMPLETION:
      return { what: `manual step ${s.actionId}`, next: "Complete it" };
    case StepStatus.SCHEDULED:
    case StepStatus.RUNNING:
      if (s.wakeAt) return { what: `sleep of step ${s.actionId} until ${when(s.wakeAt)}`, next: "it wakes by itself" }; // docs/semantics.md#sleep
      if (s.flowWait) return { what: `flow control (step ${s.actionId}): ${s.flowWait}`, next: "" }; // docs/semantics.md#flow-visibility
      break;
    case StepStatus.FAILED:
      if (run.status === RunStatus.BLOCKED || run.status === RunStatus.PAUSED)
        return { what: `held on failure of ${s.actionId}`, next: "Retry step or Skip step" };
  }
  return undefined;
}

/** waitsOf answers what a run waits for; empty when it moves or is finished. */
export function waitsOf(run: Run): Wait[] {
  // An item of a fan-out (docs/semantics.md#for-each) is one of up to
  // thousands: its forEach step says what it waits for (held on its failure),
  // and items that flow control holds are counted, not listed.
  const steps = run.steps.filter((s) => s.parentStep === "").map((s) => stepWait(run, s)).filter((w): w is Wait => w !== undefined);
  const held = new Map<string, { n: number; first: string }>();
  for (const s of run.steps) {
    if (s.parentStep === "" || !s.flowWait || (s.status !== StepStatus.SCHEDULED && s.status !== StepStatus.RUNNING)) continue;
    const h = held.get(s.parentStep);
    if (h) h.n++;
    else held.set(s.parentStep, { n: 1, first: s.flowWait });
  }
  for (const [step, h] of held) steps.push({ what: `flow control (${h.n} ${h.n === 1 ? "item" : "items"} of step ${step}): ${h.first}`, next: "" });
  switch (run.status) {
    case RunStatus.PENDING:
      if (!run.definition) return [{ what: "a start or an approval", next: "Open the run" }];
      return run.definition.requiresApproval ? [{ what: "approval", next: "weft approve" }] : [{ what: "a start", next: "weft start" }];
    case RunStatus.APPROVED:
      return [{ what: "a start", next: "weft start" }];
    case RunStatus.QUEUED: // docs/semantics.md#run-concurrency
      return [{ what: `a slot: ${run.concurrency?.wait || "the plan's or tenant's concurrency limit is reached"}`, next: "" }];
    case RunStatus.PAUSED:
      return [{ what: "resume", next: "Resume" }, ...steps];
    case RunStatus.BLOCKED:
    case RunStatus.RUNNING:
      return steps;
  }
  return [];
}

/** waitingText answers what a run waits for as one line, or "". */
export const waitingText = (run: Run): string => waitsOf(run).map((w) => w.what).join("; ");

/** signalNames answers the signal names the run's steps wait for: waiting ones first. */
export function signalNames(run: Run): string[] {
  const waiting = run.steps.filter((s) => s.status === StepStatus.WAITING_FOR_SIGNAL).map((s) => s.waitingForSignal);
  const declared = (run.definition?.actions ?? []).map((a) => a.waitForSignal?.signalName ?? "").filter((n) => n !== "");
  return [...new Set([...waiting, ...declared])];
}
