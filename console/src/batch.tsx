// Batch operations (docs/semantics.md#batches): the dialog that starts one over
// the runs selected in the list (StartBatch, with a batch id chosen when the
// dialog opens, so a retried click answers the same batch), and the batch's
// page (#/batches/<id>), which follows DescribeBatch until the batch ends.
import { useEffect, useState } from "preact/hooks";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { BatchOperation, BatchRunOutcome, BatchState, type DescribeBatchResponse, type ListBatchesResponse } from "../../client/ts/src/gen/weft/v1/run_pb";
import { api, faultOf, localFault, type Fault } from "./api";
import { can, why } from "./me";
import { Badge, Dialog, FaultView } from "./ui";
import { checkJson } from "./jsoncheck";
import { enumName, ms, when } from "./format";

/** The operations a batch applies, as the list offers them: the verb, and the permission beyond runs.operate. */
export const BATCH_OPERATIONS: { op: BatchOperation; verb: string; does: string; extra?: string }[] = [
  { op: BatchOperation.CANCEL, verb: "Cancel", does: "cancels each run (CancelRun); a cancelled run is final" },
  { op: BatchOperation.PAUSE, verb: "Pause", does: "pauses each run (PauseRun): running tasks finish, nothing new starts" },
  { op: BatchOperation.RESUME, verb: "Resume", does: "resumes each paused run (ResumeRun)" },
  { op: BatchOperation.RERUN_FROM, verb: "Rerun", does: "reruns each ended run from the step below (RerunRun), in the same run" },
  { op: BatchOperation.RETRY_STEP, verb: "Retry step of", does: "retries the step below of each run held on it (RetryStep)" },
  { op: BatchOperation.SIGNAL, verb: "Signal", does: "sends the signal below to each run (SignalRun)" },
  { op: BatchOperation.DELETE, verb: "Delete", does: "deletes each finished run and every record it owns (DeleteRun); this cannot be undone", extra: "runs.delete" },
];

export const operationName = (op: BatchOperation): string => enumName(BatchOperation, op);

/** The default rate: as many runs a second as weftd's default. */
const DEFAULT_RATE = 10;

/** The runs a batch acts on: chosen by id, or every run a query matches (count of them when the dialog opened). */
export type Selection = { runIds: string[] } | { query: string; count: number };

/** BatchDialog confirms a batch over a selection, collects what the operation needs, starts it and hands its id to onStarted. */
export function BatchDialog({ op, selection, onStarted, onClose }: { op: BatchOperation; selection: Selection; onStarted: (batchId: string) => void; onClose: () => void }) {
  const spec = BATCH_OPERATIONS.find((o) => o.op === op)!;
  // Chosen once per dialog: pressing the button again, after an answer was
  // lost, answers the batch the first press started.
  const [batchId] = useState(() => `console-${crypto.randomUUID()}`);
  const [reason, setReason] = useState("");
  const [step, setStep] = useState("");
  const [signalName, setSignalName] = useState("");
  const [payload, setPayload] = useState("");
  const [compensate, setCompensate] = useState(false);
  const [rate, setRate] = useState(String(DEFAULT_RATE));
  const [busy, setBusy] = useState(false);
  const [fault, setFault] = useState<Fault | undefined>();
  const n = "runIds" in selection ? selection.runIds.length : selection.count;
  const runs = `${n} run${n === 1 ? "" : "s"}`;

  const send = async () => {
    const payloadProblem = payload.trim() === "" ? undefined : checkJson(payload);
    if (payloadProblem) return setFault(localFault(`payload is not JSON: line ${payloadProblem.line}, column ${payloadProblem.column}: ${payloadProblem.message}`));
    setBusy(true);
    setFault(undefined);
    try {
      await api.runs.startBatch({
        batchId,
        ...("runIds" in selection ? { runIds: selection.runIds } : { query: selection.query }),
        operation: op,
        rate: Number(rate) || 0,
        reason,
        compensate: op === BatchOperation.CANCEL && compensate,
        fromStep: op === BatchOperation.RERUN_FROM ? step.trim() : "",
        actionId: op === BatchOperation.RETRY_STEP ? step.trim() : "",
        signalName: op === BatchOperation.SIGNAL ? signalName.trim() : "",
        payload: op === BatchOperation.SIGNAL && payload.trim() !== "" ? fromJson(ValueSchema, JSON.parse(payload)) : undefined,
      });
      onStarted(batchId);
    } catch (e) {
      setFault(faultOf(e));
    } finally {
      setBusy(false);
    }
  };

  const needsStep = op === BatchOperation.RERUN_FROM || op === BatchOperation.RETRY_STEP;
  return (
    <Dialog
      title={`${spec.verb} ${runs}?`}
      confirm={`${spec.verb} ${runs}`}
      danger={op === BatchOperation.CANCEL || op === BatchOperation.DELETE}
      busy={busy}
      onConfirm={send}
      onClose={onClose}
    >
      <p id="batch-count">
        This batch touches <strong>{runs}</strong>
        {"query" in selection ? " (every run matching the filters when it starts)" : ""}: it {spec.does}.
      </p>
      {"query" in selection && (
        <p class="mono" id="batch-query">
          {selection.query}
        </p>
      )}
      <p class="muted">
        It runs in weftd, at most the rate below, and goes on if you close this page; a run it cannot act on (its status does not allow it) is
        recorded as failed with the reason, the others go on. Batch id <span class="mono">{batchId}</span>.
      </p>
      {needsStep && (
        <label>
          Step
          <input id="batch-step" required value={step} onInput={(e) => setStep(e.currentTarget.value)} autofocus />
        </label>
      )}
      {op === BatchOperation.SIGNAL && (
        <>
          <label>
            Signal name
            <input id="batch-signal" required value={signalName} onInput={(e) => setSignalName(e.currentTarget.value)} autofocus />
          </label>
          <label>
            Payload (JSON, optional)
            <textarea id="batch-payload" rows={3} class="mono" value={payload} onInput={(e) => setPayload(e.currentTarget.value)} />
          </label>
        </>
      )}
      {op === BatchOperation.CANCEL && (
        <label class="check">
          <input id="batch-compensate" type="checkbox" checked={compensate} onChange={(e) => setCompensate(e.currentTarget.checked)} />
          Compensate succeeded steps first
        </label>
      )}
      <label>
        Runs a second at most
        <input id="batch-rate" type="number" min="0.1" max="1000" step="any" value={rate} onInput={(e) => setRate(e.currentTarget.value)} />
      </label>
      <label>
        Reason (optional, recorded with each run's signal)
        <input id="batch-reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>
      {fault && <FaultView fault={fault} />}
    </Dialog>
  );
}

/** batchAllowed says why the signed-in caller may not start a batch of op, or undefined. */
export function batchRefusal(op: BatchOperation): string | undefined {
  if (!can("runs.operate")) return why("runs.operate");
  if (op === BatchOperation.DELETE && !can("runs.delete")) return why("runs.delete");
  return undefined;
}

/** How often a running batch is read again. */
const POLL_MS = 1000;
/** How many of its runs the page shows. */
const RUNS_PAGE = 1000;

const outcomeName = (o: BatchRunOutcome): string => (o === BatchRunOutcome.UNSPECIFIED ? "PENDING" : enumName(BatchRunOutcome, o));
const stateName = (s: BatchState): string => enumName(BatchState, s);

/** BatchPage follows one batch until it ends: its progress, and each run's outcome. */
export function BatchPage({ batchId }: { batchId: string }) {
  const [res, setRes] = useState<DescribeBatchResponse | undefined>();
  const [fault, setFault] = useState<Fault | undefined>();
  const [tick, setTick] = useState(0);
  const [cancelling, setCancelling] = useState(false);
  const running = !res || res.batch?.state === BatchState.RUNNING;

  useEffect(() => {
    let gone = false;
    api.runs.describeBatch({ batchId, pageSize: RUNS_PAGE }).then(
      (r) => {
        if (gone) return;
        setRes(r);
        setFault(undefined);
      },
      (e) => !gone && setFault(faultOf(e)),
    );
    return () => {
      gone = true;
    };
  }, [batchId, tick]);

  useEffect(() => {
    if (!running) return;
    const t = setTimeout(() => setTick((n) => n + 1), POLL_MS);
    return () => clearTimeout(t);
  }, [running, tick]);

  const b = res?.batch;
  const cancel = async () => {
    setCancelling(true);
    try {
      await api.runs.cancelBatch({ batchId });
      setTick((n) => n + 1);
    } catch (e) {
      setFault(faultOf(e));
    } finally {
      setCancelling(false);
    }
  };
  const spec = b && BATCH_OPERATIONS.find((o) => o.op === b.operation);
  return (
    <main class="page batch">
      <p>
        <a href="#/batches">← Batches</a>
      </p>
      <div class="run-header">
        <div class="run-title">
          <h1>
            Batch <span class="mono">{batchId}</span>
          </h1>
          {b && (
            <span id="batch-state">
              <Badge status={stateName(b.state)} />
            </span>
          )}
        </div>
        {b && (
          <>
            <p class="run-message" id="batch-what">
              {spec ? `${spec.verb} ${b.total} run${b.total === 1 ? "" : "s"}` : operationName(b.operation)}
              {b.fromStep && ` from step ${b.fromStep}`}
              {b.actionId && ` ${b.actionId}`}
              {b.signalName && ` with signal ${b.signalName}`}
              {b.query && ` matching ${b.query}`}
            </p>
            <div class="batch-progress">
              <progress id="batch-progress" value={b.done + b.skipped} max={Math.max(b.total, 1)} />
              <span id="batch-counts">
                {b.done} of {b.total} done · {b.succeeded} succeeded · {b.failed} failed · {b.skipped} skipped
              </span>
            </div>
            <dl class="facts">
              <div>
                <dt>Started by</dt>
                <dd>{b.createdBy}</dd>
              </div>
              <div>
                <dt>Started</dt>
                <dd>{when(b.createdAt)}</dd>
              </div>
              <div>
                <dt>Ended</dt>
                <dd>{b.endedAt ? when(b.endedAt) : "—"}</dd>
              </div>
              <div>
                <dt>Rate</dt>
                <dd>{b.rate} runs/s</dd>
              </div>
              <div>
                <dt>Driven by</dt>
                <dd class="mono">{b.owner || "—"}</dd>
              </div>
            </dl>
            {b.state === BatchState.RUNNING && (
              <div class="actions">
                <button type="button" class="danger" id="batch-cancel" disabled={cancelling || !can("runs.operate")} title={can("runs.operate") ? undefined : why("runs.operate")} onClick={cancel}>
                  Stop the batch
                </button>
                <span class="muted">the runs not yet acted on are left alone</span>
              </div>
            )}
          </>
        )}
      </div>
      {fault && <FaultView fault={fault} />}
      {res && (
        <>
          <h2>Runs</h2>
          <table class="batch-runs">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Outcome</th>
                <th scope="col">Why</th>
                <th scope="col">At</th>
              </tr>
            </thead>
            <tbody>
              {res.runs.map((r) => (
                <tr key={r.runId} data-run-id={r.runId} data-outcome={outcomeName(r.outcome)}>
                  <td>
                    <a class="mono" href={`#/runs/${encodeURIComponent(r.runId)}`}>
                      {r.runId}
                    </a>
                  </td>
                  <td>
                    <Badge status={outcomeName(r.outcome)} />
                  </td>
                  <td>
                    {r.code && <span class="mono">{r.code}</span>} {r.message}
                  </td>
                  <td>{r.at ? when(r.at) : "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {res.nextPageToken && <p class="note">The first {RUNS_PAGE} of its runs are shown; weft batch describe pages through the rest.</p>}
        </>
      )}
    </main>
  );
}

/** How many batches the list reads (ListBatches' largest page); they come by id, and are shown newest first. */
const BATCHES = 1000;

/** BatchesPage lists the tenant's batches, newest first, each with its progress and a link to its page. */
export function BatchesPage() {
  const [res, setRes] = useState<ListBatchesResponse | undefined>();
  const [fault, setFault] = useState<Fault | undefined>();
  useEffect(() => {
    api.runs.listBatches({ pageSize: BATCHES }).then(setRes, (e) => setFault(faultOf(e)));
  }, []);
  const batches = [...(res?.batches ?? [])].sort((a, b) => (ms(b.createdAt) ?? 0) - (ms(a.createdAt) ?? 0));
  return (
    <main class="page batches">
      <h1>Batches</h1>
      <p class="muted">Batches are started from the runs list (select runs, then an operation) or with weft batch start.</p>
      {fault && <FaultView fault={fault} />}
      <table class="batches">
        <thead>
          <tr>
            <th scope="col">Batch</th>
            <th scope="col">Operation</th>
            <th scope="col">State</th>
            <th scope="col">Progress</th>
            <th scope="col">Started by</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {batches.map((b) => (
            <tr key={b.batchId} data-batch-id={b.batchId}>
              <td>
                <a class="mono" href={`#/batches/${encodeURIComponent(b.batchId)}`}>
                  {b.batchId}
                </a>
              </td>
              <td>
                {BATCH_OPERATIONS.find((o) => o.op === b.operation)?.verb.toLowerCase() ?? operationName(b.operation)}
                {b.query && <div class="muted mono">{b.query}</div>}
              </td>
              <td>
                <Badge status={stateName(b.state)} />
              </td>
              <td class="nowrap">
                {b.done} of {b.total} · {b.failed} failed{b.skipped > 0 ? ` · ${b.skipped} skipped` : ""}
              </td>
              <td>{b.createdBy}</td>
              <td>{when(b.createdAt)}</td>
            </tr>
          ))}
          {res && batches.length === 0 && (
            <tr>
              <td colSpan={6} class="empty">
                No batches yet.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {res?.nextPageToken && <p class="note">The first {BATCHES} batches by id are shown; weft batch list pages through the rest.</p>}
    </main>
  );
}
