// The run's header: status and substatus, facts, failure, and the feed's state.
import type { Run } from "../../client/ts/src/gen/weft/v1/run_pb";
import type { RunView } from "./live";
import { Badge, FaultView } from "./ui";
import { inFlight, stepErrorText } from "./steps";
import { waitsOf } from "./waiting";
import { RunConcurrency } from "./concurrency";
import { compensationOutcomeName, duration, isTerminal, ms, runStatusName, substatusName, when } from "./format";

/** RunHeader shows the run's status, facts and the event feed's state. */
export function RunHeader({ run, view }: { run: Run; view: RunView }) {
  const draining = substatusName(run.substatus);
  const flying = run.steps.filter(inFlight).length;
  const start = ms(run.startedAt);
  const total = run.totalDurationMs ? Number(run.totalDurationMs) : start !== undefined ? (ms(run.completedAt) ?? Date.now()) - start : undefined;
  const comp = compensationOutcomeName(run.compensationOutcome);
  return (
    <header class="run-header">
      <div class="run-title">
        <h1 class="mono" id="run-id">
          {run.runId}
        </h1>
        <span id="run-status">
          <Badge status={runStatusName(run.status)} extra={draining ? `${draining} (${flying} in flight)` : undefined} />
        </span>
        {view.feed.stale ? (
          <span class="badge stale" id="feed-state" title="A gap in run_seq was seen; resyncing until the watermark passes it">
            STALE · resyncing
          </span>
        ) : (
          <span class={`badge ${view.watching ? "live" : "quiet"}`} id="feed-state">
            {view.watching ? "LIVE" : isTerminal(run.status) ? "FINAL" : "CONNECTING"}
          </span>
        )}
      </div>
      {run.message && <p class="run-message">{run.message}</p>}
      {waitsOf(run).length > 0 && (
        <p class="run-waiting" id="run-waiting">
          Waiting on{" "}
          {waitsOf(run).map((w, i) => (
            <span key={i}>
              {i > 0 ? "; " : ""}
              <strong>{w.what}</strong>
              {w.next ? ` (${w.next})` : ""}
            </span>
          ))}
        </p>
      )}
      <dl class="facts">
        <div>
          <dt>Plan</dt>
          <dd>
            {run.planId}@{run.planVersion}
            {run.definition?.displayName ? ` (${run.definition.displayName})` : ""}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{when(run.createdAt)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{when(run.startedAt)}</dd>
        </div>
        <div>
          <dt>Completed</dt>
          <dd>{when(run.completedAt)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{duration(total)}</dd>
        </div>
        <div>
          <dt>Submitted by</dt>
          <dd>{run.submittedBy || "—"}</dd>
        </div>
        <div>
          <dt>Compensation</dt>
          <dd id="compensation">{comp || "none"}</dd>
        </div>
        <div>
          <dt>Watermark</dt>
          <dd>
            run_seq {String(view.feed.watermark)} / {String(run.lastEventSeq)}
            {view.feed.resyncs ? ` · ${view.feed.resyncs} resyncs` : ""}
          </dd>
        </div>
      </dl>
      <RunConcurrency run={run} />
      {run.error && (
        <p class="run-error">
          Failed{run.error.actionId ? ` at ${run.error.actionId}` : ""}
          {run.error.workflowTimeout ? " (workflow timeout)" : ""}: {run.error.error ? stepErrorText(run.error.error) : ""}
        </p>
      )}
      {run.cancellation && (
        <p class="run-error">
          Cancelled by {run.cancellation.cancelledBy || "—"}
          {run.cancellation.reason ? `: ${run.cancellation.reason}` : ""}
        </p>
      )}
      {view.fault && <FaultView fault={view.fault} />}
    </header>
  );
}
