// The run's signals and its event log, in run_seq order, as text. A run
// with a fan-out (docs/semantics.md#for-each) logs several events per item,
// thousands for a large one: the log shows the newest 500 of those its step
// filter keeps (Show all for the rest), and renders an event's JSON only
// once its Details are opened.
import { toJson } from "@bufbuild/protobuf";
import { useState } from "preact/hooks";
import { ALL_STEPS, EVENT_LOG_SHOWN, ITEMS_OF, shownEvents } from "./logfilter";
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
    case "stepFannedOut":
      return `fanned out over ${p.value.itemCount} items, at most ${p.value.maxConcurrency} at once`;
    case "runQueued":
      return p.value.reason;
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

/** Details shows an event's JSON, built only once opened. */
function Details({ e }: { e: Event }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(ev) => setOpen((ev.currentTarget as HTMLDetailsElement).open)}>
      <summary>{summary(e) || "payload"}</summary>
      {open && <pre class="json">{prettyJson(toJson(EventSchema, e))}</pre>}
    </details>
  );
}

/**
 * EventLog lists the events with their envelopes, in run_seq order: the
 * newest EVENT_LOG_SHOWN of those the step filter keeps, or all of them;
 * Details holds the whole event as JSON text.
 */
export function EventLog({ events, steps = [], fanOuts = [] }: { events: Event[]; steps?: string[]; fanOuts?: string[] }) {
  const [step, setStep] = useState(ALL_STEPS);
  const [all, setAll] = useState(false);
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  const { kept, shown } = shownEvents(events, step, all);
  return (
    <>
      {(fanOuts.length > 0 || events.length > EVENT_LOG_SHOWN) && (
        <div class="log-filter">
          <label>
            Step
            <select id="log-step" value={step} onChange={(e) => setStep(e.currentTarget.value)}>
              <option value={ALL_STEPS}>every step</option>
              {steps.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
              {fanOuts.map((s) => (
                <option key={`${ITEMS_OF}${s}`} value={`${ITEMS_OF}${s}`}>
                  {`the items of ${s}`}
                </option>
              ))}
            </select>
          </label>
          <span class="muted" id="log-count">
            {shown.length < kept.length ? `the newest ${shown.length} of ${kept.length} events` : `${kept.length} events`}
          </span>
          {shown.length < kept.length && (
            <button type="button" id="log-all" onClick={() => setAll(true)}>
              Show all {kept.length}
            </button>
          )}
        </div>
      )}
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
          {shown.map((e) => (
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
                <Details e={e} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
