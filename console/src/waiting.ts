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
    case StepStatus.RUNNING:
      if (s.wakeAt) return { what: `sleep of step ${s.actionId} until ${when(s.wakeAt)}`, next: "it wakes by itself" }; // docs/semantics.md#sleep
      break;
    case StepStatus.FAILED:
      if (run.status === RunStatus.BLOCKED || run.status === RunStatus.PAUSED)
        return { what: `held on failure of ${s.actionId}`, next: "Retry step or Skip step" };
  }
  return undefined;
}

/** waitsOf answers what a run waits for; empty when it moves or is finished. */
export function waitsOf(run: Run): Wait[] {
  const steps = run.steps.map((s) => stepWait(run, s)).filter((w): w is Wait => w !== undefined);
  switch (run.status) {
    case RunStatus.PENDING:
      if (!run.definition) return [{ what: "a start or an approval", next: "Open the run" }];
      return run.definition.requiresApproval ? [{ what: "approval", next: "weft approve" }] : [{ what: "a start", next: "weft start" }];
    case RunStatus.APPROVED:
      return [{ what: "a start", next: "weft start" }];
    case RunStatus.QUEUED:
      return [{ what: "a slot (a concurrency limit is reached)", next: "" }];
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
