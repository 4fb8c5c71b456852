// The run's signals and its event log, in run_seq order, as text.
import { toJson } from "@bufbuild/protobuf";
import { EventSchema, SignalKind, type Event } from "../../client/ts/src/gen/weft/v1/event_pb";
import { stepErrorText } from "./steps";
import { clock, prettyJson, when } from "./format";

/** kindName names a signal's kind; a named user signal is "SIGNAL". */
const kindName = (k: SignalKind): string => (k === SignalKind.UNSPECIFIED ? "SIGNAL" : (SignalKind[k] ?? String(k)));

/** Signals lists the signals the log records: accepted, refused and consumed. */
export function Signals({ events }: { events: Event[] }) {
  const rows = events.filter((e) => e.payload.case === "signalAccepted" || e.payload.case === "signalRejected" || e.payload.case === "signalConsumed");
  if (rows.length === 0) return <p class="muted">No signals yet.</p>;
  return (
    <table class="signals">
      <thead>
        <tr>
          <th scope="col">run_seq</th>
          <th scope="col">What</th>
          <th scope="col">Kind</th>
          <th scope="col">Name</th>
          <th scope="col">Signal id</th>
          <th scope="col">Actor</th>
          <th scope="col">When / why</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((e) => {
          const p = e.payload;
          let cells: string[] = [];
          if (p.case === "signalAccepted")
            cells = ["accepted", kindName(p.value.kind), p.value.result?.signalName ?? "", p.value.result?.signalId ?? "", p.value.actor, when(p.value.result?.acceptedAt)];
          else if (p.case === "signalRejected")
            cells = ["rejected", kindName(p.value.kind), p.value.signalName, p.value.signalId, p.value.actor, p.value.reason];
          else if (p.case === "signalConsumed") cells = ["consumed", "", p.value.signalName, p.value.signalId, "", `by ${e.stepId}`];
          return (
            <tr key={String(e.runSeq)} class={`sig-${cells[0]}`}>
              <td>{String(e.runSeq)}</td>
              {cells.map((c, i) => (
                <td key={i} class={i === 3 ? "mono" : ""}>
                  {c || "—"}
                </td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** summary answers one line about an event's payload, as text. */
function summary(e: Event): string {
  const p = e.payload;
  switch (p.case) {
    case "stepFailed":
      return `${p.value.error ? stepErrorText(p.value.error) : ""}${p.value.willRetry ? " (will retry)" : ""}`;
    case "stepWaiting":
      return p.value.signalName ? `waits for signal ${p.value.signalName}` : "waits for manual completion";
    case "signalAccepted":
      return `${kindName(p.value.kind)} ${p.value.result?.signalName ?? ""} by ${p.value.actor}`;
    case "signalRejected":
      return `${p.value.signalName} refused: ${p.value.reason}`;
    case "stepSkipped":
      return p.value.reason === "condition" ? "skipped by condition (when was false)" : p.value.reason;
    case "stepCancelled":
      return p.value.reason;
    case "stepSleeping":
      return `sleeps until ${when(p.value.wakeAt)}`;
    case "stepIterated":
      return `iteration ${p.value.iteration} done; next is logical attempt ${p.value.newLogicalAttemptId}`;
    case "runPaused":
      return `by ${p.value.requestedBy}, ${p.value.inFlightTasks} in flight${p.value.reason ? `: ${p.value.reason}` : ""}`;
    case "runDrained":
      return p.value.timedOut ? `drain timed out, ${p.value.orphanedTasks} tasks orphaned` : "nothing in flight";
    case "runResumed":
      return `by ${p.value.requestedBy}`;
    case "runCancelled":
      return p.value.cancellation ? `by ${p.value.cancellation.cancelledBy}${p.value.cancellation.reason ? `: ${p.value.cancellation.reason}` : ""}` : "";
    case "runCompensating":
      return `after ${p.value.failedActionId}: ${p.value.compensationOrder.join(", ")}`;
    case "stepRetried":
      return `logical attempt ${p.value.newLogicalAttemptId} by ${p.value.requestedBy}`;
    default:
      return "";
  }
}

/**
 * The events the engine decides as a consequence of another (a worker's
 * report, an operator's call, a timer): their emitted_by names whoever
 * caused the commit, so the log shows them as the engine's, after whom.
 */
const ENGINE_EVENTS = new Set([
  "StepScheduled", "StepWaiting", "RunBlocked", "RunUnblocked", "RunCompleted", "RunFailed", "RunCompensating",
  "CompensationStarted", "RunDrained", "RunQueued", "SignalConsumed", "StepSleeping", "StepIterated",
]);

/** By names who emitted an event: the engine for its own decisions. */
function By({ e }: { e: Event }) {
  if (!ENGINE_EVENTS.has(e.eventType)) return <>{e.emittedBy}</>;
  return (
    <span class="by-engine" title={e.emittedBy ? `decided by the engine after ${e.emittedBy}'s call or report` : "decided by the engine"}>
      engine{e.emittedBy ? <span class="muted"> (after {e.emittedBy})</span> : null}
    </span>
  );
}

/** EventLog lists every event with its envelope; Details holds the whole event as JSON text. */
export function EventLog({ events }: { events: Event[] }) {
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <table class="events">
      <thead>
        <tr>
          <th scope="col">run_seq</th>
          <th scope="col">Emitted at</th>
          <th scope="col">Type</th>
          <th scope="col">Step</th>
          <th scope="col">Attempt</th>
          <th scope="col">By</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={String(e.runSeq)} data-seq={String(e.runSeq)}>
            <td>{String(e.runSeq)}</td>
            <td class="nowrap">{clock(e.emittedAt)}</td>
            <td>{e.eventType}</td>
            <td class="mono nowrap">{e.stepId}</td>
            <td>
              {e.logicalAttemptId}
              {e.engineAttemptId !== undefined ? `.${e.engineAttemptId}` : ""}
            </td>
            <td>
              <By e={e} />
            </td>
            <td>
              <details>
                <summary>{summary(e) || "payload"}</summary>
                <pre class="json">{prettyJson(toJson(EventSchema, e))}</pre>
              </details>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
