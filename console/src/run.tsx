// A run: its header, actions, DAG, timeline, steps, signals and event log.
import { useMemo, useState } from "preact/hooks";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { RunStatus, StepStatus, AttemptOutcome, AttemptSchema, type Attempt, type Run, type Step, type StepError } from "../../client/ts/src/gen/weft/v1/run_pb";
import { EventSchema, SignalKind, type Event } from "../../client/ts/src/gen/weft/v1/event_pb";
import { ManualOutcome } from "../../client/ts/src/gen/weft/v1/signal_pb";
import type { Action } from "../../client/ts/src/gen/weft/v1/definition_pb";
import { api, faultOf, type Fault } from "./api";
import { useRun } from "./live";
import { layoutDag } from "./dag";
import { Badge, Dialog, FaultView } from "./ui";
import {
  attemptOutcomeName, compensationOutcomeName, compensationStatusName, duration, errorClassName, isTerminal, jsonText, ms,
  prettyJson, runStatusName, stepStatusName, substatusName, when, clock,
} from "./format";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";

/** An action a person can take, and what it needs. */
type Pending =
  | { kind: "pause" | "resume" | "cancel" }
  | { kind: "retry" | "skip"; step: string }
  | { kind: "signal" }
  | { kind: "complete"; step: Step };

/** A step is in flight while a worker holds its task (docs/semantics.md: only claimed tasks count for DRAINING). */
const inFlight = (s: Step) => s.status === StepStatus.RUNNING;

/** RunPage shows one run and follows it live. */
export function RunPage({ runId }: { runId: string }) {
  const view = useRun(runId);
  const [selected, setSelected] = useState<string | undefined>();
  const [pending, setPending] = useState<Pending | undefined>();
  const [outcome, setOutcome] = useState<{ ok: string } | { fault: Fault } | undefined>();
  const run = view.run;

  if (!run) {
    return (
      <main class="page">
        <h1 class="mono">{runId}</h1>
        {view.fault ? <FaultView fault={view.fault} /> : <p>Loading…</p>}
      </main>
    );
  }
  const step = run.steps.find((s) => s.actionId === selected) ?? defaultStep(run);
  const done = (msg: string) => {
    setPending(undefined);
    setOutcome({ ok: msg });
    view.refresh();
  };
  return (
    <main class="page run">
      <RunHeader run={run} view={view} />
      <div class="actions" role="toolbar" aria-label="Run actions">
        <button type="button" id="act-pause" disabled={isTerminal(run.status) || run.status === RunStatus.PAUSED} onClick={() => setPending({ kind: "pause" })}>
          Pause
        </button>
        <button type="button" id="act-resume" disabled={run.status !== RunStatus.PAUSED} onClick={() => setPending({ kind: "resume" })}>
          Resume
        </button>
        <button type="button" id="act-signal" disabled={isTerminal(run.status)} onClick={() => setPending({ kind: "signal" })}>
          Send signal
        </button>
        <button type="button" id="act-cancel" class="danger" disabled={isTerminal(run.status)} onClick={() => setPending({ kind: "cancel" })}>
          Cancel run
        </button>
      </div>
      {outcome && ("ok" in outcome ? <p class="accepted" role="status">{outcome.ok}</p> : <FaultView fault={outcome.fault} />)}
      {pending && (
        <ActionDialog
          run={run}
          pending={pending}
          onDone={done}
          onFault={(f) => setOutcome({ fault: f })}
          onClose={() => setPending(undefined)}
        />
      )}
      <section aria-labelledby="dag-title">
        <h2 id="dag-title">Graph</h2>
        <DagView run={run} selected={step?.actionId} onSelect={setSelected} />
      </section>
      {step && (
        <StepPanel
          run={run}
          step={step}
          action={run.definition?.actions.find((a) => a.id === step.actionId)}
          onAct={setPending}
        />
      )}
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <Timeline run={run} />
      </section>
      <section aria-labelledby="signals-title">
        <h2 id="signals-title">Signals</h2>
        <Signals events={view.feed.events} />
      </section>
      <section aria-labelledby="events-title">
        <h2 id="events-title">Event log</h2>
        <EventLog events={view.feed.events} />
      </section>
    </main>
  );
}

/** The step shown first: one that needs a person, else one that failed or runs, else the first. */
function defaultStep(run: Run): Step | undefined {
  const want = [StepStatus.WAITING_FOR_MANUAL_COMPLETION, StepStatus.WAITING_FOR_SIGNAL, StepStatus.FAILED, StepStatus.RUNNING];
  for (const st of want) {
    const s = run.steps.find((x) => x.status === st);
    if (s) return s;
  }
  return run.steps[0];
}

function RunHeader({ run, view }: { run: Run; view: ReturnType<typeof useRun> }) {
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

function DagView({ run, selected, onSelect }: { run: Run; selected?: string; onSelect: (id: string) => void }) {
  const def = run.definition;
  const layout = useMemo(() => (def ? layoutDag(def) : undefined), [def]);
  if (!layout) return <p class="muted">This run has no definition to draw.</p>;
  const byId = new Map(run.steps.map((s) => [s.actionId, s]));
  return (
    <div class="dag-wrap">
      <svg class="dag" width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} role="group" aria-label="Steps and dependencies">
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((e) => (
          <polyline key={`${e.from}->${e.to}`} class="edge" points={e.points.map((p) => `${p.x},${p.y}`).join(" ")} marker-end="url(#arrow)" />
        ))}
        {layout.nodes.map((n) => {
          const s = byId.get(n.id);
          const status = s ? stepStatusName(s.status) : "PENDING";
          return (
            <g
              key={n.id}
              class={`node s-${status.toLowerCase()} ${selected === n.id ? "selected" : ""}`}
              data-step={n.id}
              data-status={status}
              transform={`translate(${n.x},${n.y})`}
              tabIndex={0}
              role="button"
              aria-label={`${n.id}: ${status}`}
              aria-pressed={selected === n.id}
              onClick={() => onSelect(n.id)}
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  onSelect(n.id);
                }
              }}
            >
              <rect width={n.width} height={n.height} rx="8" />
              <text x="12" y="22" class="node-id">
                {n.id.length > 24 ? `${n.id.slice(0, 23)}…` : n.id}
              </text>
              <text x="12" y="40" class="node-status">
                {shortStatus(status)}
                {s && s.attempts.length > 1 ? ` · ${s.attempts.length} attempts` : ""}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}

/**
 * attemptsOf answers a step's recorded attempts and, while it runs, the
 * current one (recorded only when it ends), so that running work shows.
 */
function attemptsOf(s: Step): Attempt[] {
  const running =
    s.status === StepStatus.RUNNING &&
    s.startedAt !== undefined &&
    !s.attempts.some((a) => a.logicalAttemptId === s.logicalAttemptId && a.engineAttemptId === s.engineAttemptId);
  if (!running) return s.attempts;
  return [...s.attempts, create(AttemptSchema, { logicalAttemptId: s.logicalAttemptId, engineAttemptId: s.engineAttemptId, startedAt: s.startedAt })];
}

/** stepErrorText answers an error's class, code and message, each once. */
function stepErrorText(e: StepError): string {
  const cls = errorClassName(e.errorClass);
  // weftd's messages often begin with the class and code already.
  if (e.message.startsWith(`ERROR_CLASS_${cls}`)) return e.message;
  const code = e.code && !e.message.includes(e.code) ? ` ${e.code}` : "";
  return `${cls}${code}: ${e.message}`;
}

/** shortStatus fits a step status into a graph node. */
const shortStatus = (status: string): string =>
  status === "WAITING_FOR_MANUAL_COMPLETION" ? "WAITING FOR A PERSON" : status.replaceAll("_", " ");

const outcomeClass = (o: AttemptOutcome): string => attemptOutcomeName(o).toLowerCase();

function Timeline({ run }: { run: Run }) {
  const now = Date.now();
  const rows = run.steps.map((s) => ({ id: s.actionId, attempts: attemptsOf(s) })).filter((r) => r.attempts.length > 0);
  if (rows.length === 0) return <p class="muted">No attempt has started yet.</p>;
  const all = rows.flatMap((s) => s.attempts);
  const t0 = Math.min(...all.map((a) => ms(a.startedAt) ?? now));
  const t1 = Math.max(t0 + 1, ...all.map((a) => ms(a.completedAt) ?? now));
  const labelW = 180;
  const width = 1000;
  const plotW = width - labelW - 16;
  const rowH = 28;
  const x = (t: number) => labelW + ((t - t0) / (t1 - t0)) * plotW;
  return (
    <div class="timeline-wrap">
      <svg class="timeline" viewBox={`0 0 ${width} ${rows.length * rowH + 24}`} role="img" aria-label="Attempts over time">
        <text x={labelW} y={14} class="axis">
          {when(run.startedAt ?? run.createdAt)}
        </text>
        <text x={width - 16} y={14} class="axis" text-anchor="end">
          +{duration(t1 - t0)}
        </text>
        {rows.map((s, i) => (
          <g key={s.id} transform={`translate(0,${24 + i * rowH})`} data-step={s.id}>
            <text x={0} y={18} class="lane">
              {s.id}
            </text>
            {s.attempts.map((a) => {
              const start = ms(a.startedAt) ?? now;
              const end = ms(a.completedAt) ?? now;
              const w = Math.max(3, x(end) - x(start));
              const label = `${attemptOutcomeName(a.outcome)}${a.error ? ` · ${errorClassName(a.error.errorClass)}` : ""}`;
              return (
                <g key={`${a.logicalAttemptId}.${a.engineAttemptId}`} class={`bar o-${outcomeClass(a.outcome)}`} data-outcome={attemptOutcomeName(a.outcome)}>
                  <title>
                    {`${s.id} attempt ${a.logicalAttemptId}.${a.engineAttemptId}: ${label}\n${when(a.startedAt)} → ${a.completedAt ? when(a.completedAt) : "running"} (${duration(end - start)})${a.error?.message ? `\n${a.error.message}` : ""}`}
                  </title>
                  <rect x={x(start)} y={4} width={w} height={rowH - 10} rx="3" />
                  {w > 90 && (
                    <text x={x(start) + 6} y={18} class="bar-label">
                      {label}
                    </text>
                  )}
                </g>
              );
            })}
          </g>
        ))}
      </svg>
      <p class="legend muted">
        Each bar is one attempt, from its start to its end; hover a bar for its outcome, error class and times.
      </p>
    </div>
  );
}

function StepPanel({ run, step, action, onAct }: { run: Run; step: Step; action?: Action; onAct: (p: Pending) => void }) {
  const status = stepStatusName(step.status);
  const comp = compensationStatusName(step.compensationStatus);
  const live = !isTerminal(run.status);
  return (
    <section class="step" aria-labelledby="step-title" id="step-panel" data-step={step.actionId}>
      <h2 id="step-title">
        Step <span class="mono">{step.actionId}</span> <Badge status={status} />
      </h2>
      <div class="step-actions">
        {step.status === StepStatus.WAITING_FOR_MANUAL_COMPLETION && step.completionToken && (
          <button type="button" id="act-complete" class="primary" onClick={() => onAct({ kind: "complete", step })}>
            Complete this step…
          </button>
        )}
        {live && step.status === StepStatus.FAILED && (
          <button type="button" id="act-retry" onClick={() => onAct({ kind: "retry", step: step.actionId })}>
            Retry step
          </button>
        )}
        {live && (step.status === StepStatus.PENDING || step.status === StepStatus.FAILED) && (
          <button type="button" id="act-skip" onClick={() => onAct({ kind: "skip", step: step.actionId })}>
            Skip step
          </button>
        )}
      </div>
      <dl class="facts">
        <div>
          <dt>Activity</dt>
          <dd>{action?.activity || (action?.waitForSignal ? `waits for signal ${action.waitForSignal.signalName}` : "manual")}</dd>
        </div>
        <div>
          <dt>Attempt</dt>
          <dd>
            {step.logicalAttemptId}.{step.engineAttemptId}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{when(step.startedAt)}</dd>
        </div>
        <div>
          <dt>Completed</dt>
          <dd>{when(step.completedAt)}</dd>
        </div>
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
            <dd>{step.reason}</dd>
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
          <pre class="json" id="step-input">{jsonText(action?.input) || "—"}</pre>
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

/** kindName names a signal's kind; a named user signal is "SIGNAL". */
const kindName = (k: SignalKind): string => (k === SignalKind.UNSPECIFIED ? "SIGNAL" : (SignalKind[k] ?? String(k)));

function Signals({ events }: { events: Event[] }) {
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
    case "stepCancelled":
      return p.value.reason;
    case "runPaused":
    case "runCancelled":
      return "reason" in p.value ? String((p.value as { reason?: string }).reason ?? "") : "";
    default:
      return "";
  }
}

function EventLog({ events }: { events: Event[] }) {
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
            <td>{e.emittedBy}</td>
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

/** ActionDialog confirms one action, collects what it needs and sends it. */
function ActionDialog({
  run, pending, onDone, onFault, onClose,
}: { run: Run; pending: Pending; onDone: (msg: string) => void; onFault: (f: Fault) => void; onClose: () => void }) {
  const [reason, setReason] = useState("");
  const [name, setName] = useState("");
  const [payload, setPayload] = useState("{}");
  const [signalId, setSignalId] = useState("");
  const [outcome, setOutcome] = useState(String(ManualOutcome.SUCCEEDED));
  const [actor, setActor] = useState("");
  const [notes, setNotes] = useState("");
  const [output, setOutput] = useState("");
  const [busy, setBusy] = useState(false);
  const [local, setLocal] = useState<Fault | undefined>();
  // One signal id per dialog, so that pressing the button twice is one signal.
  const [autoId] = useState(() => crypto.randomUUID());
  const runId = run.runId;

  const parse = (field: string, text: string) => {
    if (text.trim() === "") return undefined;
    try {
      return fromJson(ValueSchema, JSON.parse(text));
    } catch {
      throw { code: "INVALID_ARGUMENT", message: `${field} must be JSON`, correlationId: "", violations: [], unauthenticated: false, notFound: false } satisfies Fault;
    }
  };

  const send = async () => {
    setBusy(true);
    setLocal(undefined);
    try {
      switch (pending.kind) {
        case "pause":
          await api.runs.pauseRun({ runId, reason, signalId: autoId });
          return onDone("Pause accepted.");
        case "resume":
          await api.runs.resumeRun({ runId, reason, signalId: autoId });
          return onDone("Resume accepted.");
        case "cancel":
          await api.runs.cancelRun({ runId, reason, signalId: autoId });
          return onDone("Cancel accepted.");
        case "retry":
          await api.runs.retryStep({ runId, actionId: pending.step, reason, signalId: autoId });
          return onDone(`Retry of ${pending.step} accepted.`);
        case "skip":
          await api.runs.skipStep({ runId, actionId: pending.step, reason, signalId: autoId });
          return onDone(`Skip of ${pending.step} accepted.`);
        case "signal": {
          const res = await api.signals.signalRun({ runId, signalName: name, payload: parse("payload", payload), signalId: signalId.trim() || undefined });
          return onDone(`Signal ${name} accepted (signal id ${res.result?.signalId ?? ""}${res.duplicate ? ", a duplicate" : ""}).`);
        }
        case "complete": {
          await api.signals.completeManualAction({
            schemaVersion: 1,
            runId,
            actionId: pending.step.actionId,
            completionToken: pending.step.completionToken,
            outcome: Number(outcome),
            actorUserId: actor,
            completedAt: timestampNow(),
            notes,
            output: parse("output", output),
          });
          return onDone(`${pending.step.actionId} completed as ${ManualOutcome[Number(outcome)]}.`);
        }
      }
    } catch (e) {
      const f = typeof e === "object" && e !== null && "violations" in e ? (e as Fault) : faultOf(e);
      setLocal(f);
      onFault(f);
    } finally {
      setBusy(false);
    }
  };

  const titles: Record<Pending["kind"], [string, string]> = {
    pause: ["Pause this run?", "Pause"],
    resume: ["Resume this run?", "Resume"],
    cancel: ["Cancel this run?", "Cancel run"],
    retry: ["Retry this step?", "Retry"],
    skip: ["Skip this step?", "Skip"],
    signal: ["Send a signal", "Send"],
    complete: ["Complete the manual step", "Complete"],
  };
  const [title, confirm] = titles[pending.kind];
  return (
    <Dialog title={title} confirm={confirm} danger={pending.kind === "cancel" || pending.kind === "skip"} busy={busy} onConfirm={send} onClose={onClose}>
      <p class="muted mono">{runId}</p>
      {(pending.kind === "retry" || pending.kind === "skip") && <p>Step <span class="mono">{pending.step}</span></p>}
      {pending.kind === "pause" && <p>Running tasks finish (the run shows DRAINING); nothing new starts until it is resumed.</p>}
      {pending.kind === "cancel" && <p>Cancelling is final: the run ends CANCELLED.</p>}
      {pending.kind === "signal" && (
        <>
          <label>
            Signal name
            <input id="sig-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
          </label>
          <label>
            Payload (JSON)
            <textarea id="sig-payload" rows={5} class="mono" value={payload} onInput={(e) => setPayload(e.currentTarget.value)} />
          </label>
          <label>
            Signal id (optional: makes a retry idempotent)
            <input id="sig-id" value={signalId} onInput={(e) => setSignalId(e.currentTarget.value)} />
          </label>
        </>
      )}
      {pending.kind === "complete" && (
        <>
          <p>
            Step <span class="mono">{pending.step.actionId}</span>, completion token <span class="mono">{pending.step.completionToken}</span>
          </p>
          <label>
            Outcome
            <select id="mc-outcome" value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
              <option value={String(ManualOutcome.SUCCEEDED)}>SUCCEEDED</option>
              <option value={String(ManualOutcome.FAILED)}>FAILED</option>
              <option value={String(ManualOutcome.CANCELLED)}>CANCELLED</option>
            </select>
          </label>
          <label>
            Your user id
            <input id="mc-actor" required value={actor} onInput={(e) => setActor(e.currentTarget.value)} autofocus />
          </label>
          <label>
            Notes
            <textarea id="mc-notes" rows={3} value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
          </label>
          <label>
            Output (JSON, optional)
            <textarea id="mc-output" rows={3} class="mono" value={output} onInput={(e) => setOutput(e.currentTarget.value)} />
          </label>
        </>
      )}
      {pending.kind !== "signal" && pending.kind !== "complete" && (
        <label>
          Reason (optional)
          <input id="act-reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} autofocus />
        </label>
      )}
      {local && <FaultView fault={local} />}
    </Dialog>
  );
}
