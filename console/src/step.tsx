// One step: its facts, input and output, artifacts, attempts, and its actions.
import { can, why } from "./me";
import { StepStatus, type Run, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import type { Action } from "../../client/ts/src/gen/weft/v1/definition_pb";
import { Badge } from "./ui";
import { attemptsOf, skippedByCondition, sleeping, stepErrorText } from "./steps";
import type { Pending } from "./actions";
import { isItem, progressText } from "./fanout";
import { attemptOutcomeName, clock, compensationStatusName, duration, isTerminal, jsonText, stepStatusName, when } from "./format";

/** activityText says what the step does: its activity, a signal wait, a sleep, or a person. */
function activityText(action?: Action): string {
  if (!action) return "";
  if (action.activity) return action.activity;
  if (action.waitForSignal) return `waits for signal ${action.waitForSignal.signalName}`;
  if (action.sleepMs !== undefined) return `sleeps ${duration(action.sleepMs)}`;
  if (action.sleepUntil) return `sleeps until ${action.sleepUntil}`;
  if (action.workflow) {
    const w = action.workflow;
    const plan = w.planId || w.definition?.planId || "";
    return `runs sub-workflow ${plan ? `${plan}${w.planVersion ? `@${w.planVersion}` : ""}` : "(inline)"}`;
  }
  return "manual";
}

/** StepPanel shows one step and offers the actions its status allows. */
export function StepPanel({ run, step, action, onAct, onSelect }: { run: Run; step: Step; action?: Action; onAct: (p: Pending) => void; onSelect: (id: string) => void }) {
  const status = stepStatusName(step.status);
  const comp = compensationStatusName(step.compensationStatus);
  const live = !isTerminal(run.status);
  // An item is acted on through its forEach step: controls naming an item
  // are refused (docs/semantics.md#for-each).
  const item = isItem(step);
  return (
    <section class="step" aria-labelledby="step-title" id="step-panel" data-step={step.actionId}>
      <h2 id="step-title">
        {item ? "Item" : "Step"} <span class="mono">{step.actionId}</span> <Badge status={status} />
      </h2>
      {item && (
        <p class="item-of" id="item-of">
          Item {step.itemIndex} of forEach step{" "}
          <button type="button" class="link mono" id="item-parent" onClick={() => onSelect(step.parentStep)}>
            {step.parentStep}
          </button>
          : retry, skip and rerun act on the step, not on one item.
        </p>
      )}
      {!item && <div class="step-actions">
        {step.status === StepStatus.WAITING_FOR_MANUAL_COMPLETION && step.completionToken && !can("manual.complete") && (
          <span class="gated" id="complete-gated">Completing this step {why("manual.complete")}.</span>
        )}
        {step.status === StepStatus.WAITING_FOR_MANUAL_COMPLETION && step.completionToken && (
          <button type="button" id="act-complete" class="primary" disabled={!can("manual.complete")} title={can("manual.complete") ? undefined : why("manual.complete")} onClick={() => onAct({ kind: "complete", step })}>
            Complete this step…
          </button>
        )}
        {live && step.status === StepStatus.FAILED && (
          <button type="button" id="act-retry" disabled={!can("runs.operate")} title={can("runs.operate") ? undefined : why("runs.operate")} onClick={() => onAct({ kind: "retry", step: step.actionId })}>
            Retry step
          </button>
        )}
        {!live && (
          <button type="button" id="act-rerun" disabled={!can("runs.operate")} title={can("runs.operate") ? undefined : why("runs.operate")} onClick={() => onAct({ kind: "rerun", step: step.actionId })}>
            Rerun from this step
          </button>
        )}
        {live && (step.status === StepStatus.PENDING || step.status === StepStatus.FAILED) && (
          <button type="button" id="act-skip" disabled={!can("runs.operate")} title={can("runs.operate") ? undefined : why("runs.operate")} onClick={() => onAct({ kind: "skip", step: step.actionId })}>
            Skip step
          </button>
        )}
      </div>}
      <dl class="facts">
        <div>
          <dt>Activity</dt>
          <dd>{activityText(action)}</dd>
        </div>
        {action?.forEach && !item ? (
          // A forEach step's attempts are its items'; only its logical attempt (RETRY_STEP, rerun) is its own.
          <div>
            <dt>Logical attempt</dt>
            <dd id="step-logical-attempt">{step.logicalAttemptId}</dd>
          </div>
        ) : (
          <div>
            <dt>Attempt</dt>
            <dd>
              {step.logicalAttemptId}.{step.engineAttemptId}
            </dd>
          </div>
        )}
        <div>
          <dt>Started</dt>
          <dd>{when(step.startedAt)}</dd>
        </div>
        <div>
          <dt>Completed</dt>
          <dd>{when(step.completedAt)}</dd>
        </div>
        {step.fanOut && (
          <div class="wide">
            <dt>Fan-out</dt>
            <dd id="step-fanout">{progressText(step.fanOut)}</dd>
          </div>
        )}
        {action?.forEach && !item && (
          <div>
            <dt>For each</dt>
            <dd class="mono">{action.forEach}</dd>
          </div>
        )}
        {step.childRunId && (
          <div>
            <dt>Child run</dt>
            <dd>
              <a class="mono" id="step-child" href={`#/runs/${encodeURIComponent(step.childRunId)}`}>
                {step.childRunId}
              </a>
            </dd>
          </div>
        )}
        {step.flowWait && (
          <div class="wide">
            <dt>Why its task waits</dt>
            <dd id="step-flow-wait">{step.flowWait}</dd>
          </div>
        )}
        {step.waitingForSignal && (
          <div>
            <dt>Waiting for signal</dt>
            <dd class="mono">{step.waitingForSignal}</dd>
          </div>
        )}
        {step.completionToken && (
          <div>
            <dt>Completion token</dt>
            <dd class="mono" id="completion-token">
              {step.completionToken}
            </dd>
          </div>
        )}
        {step.reason && (
          <div>
            <dt>Reason</dt>
            <dd id="step-reason">{skippedByCondition(step) ? `Skipped by condition: when ${action?.when ?? ""} was false` : step.reason}</dd>
          </div>
        )}
        {step.wakeAt && (
          <div>
            <dt>{sleeping(step) ? "Wakes at" : "Slept until"}</dt>
            <dd id="step-wake">{when(step.wakeAt)}</dd>
          </div>
        )}
        {step.iteration > 0 && action?.repeat && (
          <div>
            <dt>Iteration</dt>
            <dd id="step-iteration">
              {step.iteration} of at most {action.repeat.maxIterations}
            </dd>
          </div>
        )}
        {comp && (
          <div>
            <dt>Compensation</dt>
            <dd>
              {comp}
              {step.compensationError ? ` — ${step.compensationError.message}` : ""}
            </dd>
          </div>
        )}
      </dl>
      {step.error && <p class="run-error">{stepErrorText(step.error)}</p>}
      <div class="io">
        <div>
          <h3>Input</h3>
          <pre class="json" id="step-input">{jsonText(step.input ?? action?.input) || "—"}</pre>
        </div>
        <div>
          <h3>Output</h3>
          <pre class="json" id="step-output">{jsonText(step.output) || "—"}</pre>
        </div>
      </div>
      {step.artifacts.length > 0 && (
        <>
          <h3>Artifacts</h3>
          <ul>
            {step.artifacts.map((a) => (
              <li key={a.uri}>
                <span class="mono">{a.uri}</span> {a.kind && <span class="muted">{a.kind}</span>} {a.sizeBytes ? `${String(a.sizeBytes)} bytes` : ""}
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Attempts</h3>
      {attemptsOf(step).length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <table class="attempts">
          <thead>
            <tr>
              <th scope="col">Attempt</th>
              <th scope="col">Outcome</th>
              <th scope="col">Error</th>
              <th scope="col">Started</th>
              <th scope="col">Ended</th>
              <th scope="col">Worker</th>
            </tr>
          </thead>
          <tbody>
            {attemptsOf(step).map((a) => (
              <tr key={`${a.logicalAttemptId}.${a.engineAttemptId}`}>
                <td>
                  {a.logicalAttemptId}.{a.engineAttemptId}
                </td>
                <td>
                  <Badge status={attemptOutcomeName(a.outcome)} />
                </td>
                <td>{a.error ? stepErrorText(a.error) : "—"}</td>
                <td class="nowrap">{clock(a.startedAt)}</td>
                <td class="nowrap">{clock(a.completedAt)}</td>
                <td class="mono">{a.workerId || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
