// A run: its header, actions, graph, selected step, timeline, signals and event log.
import { can, why } from "./me";
import { useState } from "preact/hooks";
import { RunStatus, StepStatus, type Run, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import type { Fault } from "./api";
import { useRun } from "./live";
import { FaultView } from "./ui";
import { RunHeader } from "./header";
import { DagView } from "./graph";
import { StepPanel } from "./step";
import { Timeline } from "./timeline";
import { EventLog, Signals } from "./log";
import { ActionDialog, type Pending } from "./actions";
import { isTerminal } from "./format";
import { isForEach, isItem, topSteps } from "./fanout";
import { FanOutGroup } from "./fanoutview";
import { useConcurrencyRefresh } from "./concurrency";

/** RunPage shows one run and follows it live. */
export function RunPage({ runId }: { runId: string }) {
  const view = useRun(runId);
  const [selected, setSelected] = useState<string | undefined>();
  const [pending, setPending] = useState<Pending | undefined>();
  const [outcome, setOutcome] = useState<{ ok: string } | { fault: Fault } | undefined>();
  const run = view.run;
  useConcurrencyRefresh(run, view.refresh);

  if (!run) {
    return (
      <main class="page">
        <h1 class="mono">{runId}</h1>
        {view.fault ? <FaultView fault={view.fault} /> : <p>Loading…</p>}
      </main>
    );
  }
  const step = run.steps.find((s) => s.actionId === selected) ?? defaultStep(run);
  const fanOuts = topSteps(run).filter((s) => isForEach(run, s.actionId));
  const done = (msg: string) => {
    setPending(undefined);
    setOutcome({ ok: msg });
    view.refresh();
  };
  const operate = can("runs.operate");
  return (
    <main class="page run">
      <RunHeader run={run} view={view} />
      <RunLinks run={run} />
      <div class="actions" role="toolbar" aria-label="Run actions">
        <button type="button" id="act-pause" disabled={!operate || isTerminal(run.status) || run.status === RunStatus.PAUSED} title={operate ? undefined : why("runs.operate")} onClick={() => setPending({ kind: "pause" })}>
          Pause
        </button>
        <button type="button" id="act-resume" disabled={!operate || run.status !== RunStatus.PAUSED} title={operate ? undefined : why("runs.operate")} onClick={() => setPending({ kind: "resume" })}>
          Resume
        </button>
        <button type="button" id="act-signal" disabled={!operate || isTerminal(run.status)} title={operate ? undefined : why("runs.operate")} onClick={() => setPending({ kind: "signal" })}>
          Send signal
        </button>
        <button type="button" id="act-cancel" class="danger" disabled={!operate || isTerminal(run.status)} title={operate ? undefined : why("runs.operate")} onClick={() => setPending({ kind: "cancel" })}>
          Cancel run
        </button>
      </div>
      {!operate && (
        <p class="gated" id="run-gated">
          Pause, resume, signal, cancel, retry and skip are off: each {why("runs.operate")}.
        </p>
      )}
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
      {fanOuts.length > 0 && (
        <section aria-labelledby="fanouts-title" id="fanouts">
          <h2 id="fanouts-title">Fan-outs</h2>
          {fanOuts.map((s) => (
            <FanOutGroup key={s.actionId} run={run} step={s} selected={step?.actionId} onSelect={setSelected} />
          ))}
        </section>
      )}
      {step && (
        <StepPanel
          run={run}
          step={step}
          action={run.definition?.actions.find((a) => a.id === (isItem(step) ? step.parentStep : step.actionId))}
          onAct={setPending}
          onSelect={setSelected}
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
        <EventLog events={view.feed.events} steps={topSteps(run).map((s) => s.actionId)} fanOuts={fanOuts.map((s) => s.actionId)} />
      </section>
    </main>
  );
}

/**
 * RunLinks links a child run to the run and step that started it, and a run
 * to the child runs its sub-workflow steps started (docs/semantics.md#sub-workflows).
 */
function RunLinks({ run }: { run: Run }) {
  const children = topSteps(run).filter((s) => s.childRunId !== "");
  // An item's child is linked from its row in the fan-out's group: a
  // fan-out of 1,000 sub-workflows would otherwise be 1,000 links here.
  const itemChildren = new Map<string, number>();
  for (const s of run.steps) if (isItem(s) && s.childRunId !== "") itemChildren.set(s.parentStep, (itemChildren.get(s.parentStep) ?? 0) + 1);
  if (!run.parentRunId && children.length === 0 && itemChildren.size === 0) return null;
  const link = (id: string, elemId?: string) => (
    <a class="mono" id={elemId} href={`#/runs/${encodeURIComponent(id)}`}>
      {id}
    </a>
  );
  return (
    <nav class="run-links" aria-label="Related runs">
      {run.parentRunId && (
        <p id="run-parent">
          Child run of {link(run.parentRunId, "run-parent-link")}, started by its step <span class="mono">{run.parentStep}</span>
        </p>
      )}
      {(children.length > 0 || itemChildren.size > 0) && (
        <ul id="run-children">
          {children.map((s) => (
            <li key={s.actionId}>
              Step <span class="mono">{s.actionId}</span> runs child run {link(s.childRunId, `run-child-${s.actionId}`)}
            </li>
          ))}
          {[...itemChildren].map(([step, n]) => (
            <li key={step} id={`run-item-children-${step}`}>
              Step <span class="mono">{step}</span> runs {n} child {n === 1 ? "run" : "runs"}, one per item: each is linked from its item under <em>Fan-outs</em>
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}

/**
 * The step shown first: one that needs a person, else one that failed or
 * runs, else the first; never an item (its forEach step stands for it).
 */
function defaultStep(run: Run): Step | undefined {
  const steps = topSteps(run);
  const want = [StepStatus.WAITING_FOR_MANUAL_COMPLETION, StepStatus.WAITING_FOR_SIGNAL, StepStatus.FAILED, StepStatus.RUNNING];
  for (const st of want) {
    const s = steps.find((x) => x.status === st);
    if (s) return s;
  }
  return steps[0];
}
