// The actions a person takes on a run, each confirmed in a dialog.
import { useState } from "preact/hooks";
import { fromJson } from "@bufbuild/protobuf";
import { timestampNow, ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Run, Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { ManualOutcome } from "../../client/ts/src/gen/weft/v1/signal_pb";
import { api, faultOf, type Fault } from "./api";
import { Dialog, FaultView } from "./ui";
import { signalNames } from "./waiting";

/** An action a person can take, and what it needs. */
export type Pending =
  | { kind: "pause" | "resume" | "cancel" }
  | { kind: "retry" | "skip" | "rerun"; step: string }
  | { kind: "signal" }
  | { kind: "complete"; step: Step };

/** ActionDialog confirms one action, collects what it needs and sends it. */
export function ActionDialog({
  run, pending, onDone, onFault, onClose,
}: { run: Run; pending: Pending; onDone: (msg: string) => void; onFault: (f: Fault) => void; onClose: () => void }) {
  const [reason, setReason] = useState("");
  const names = signalNames(run);
  const [name, setName] = useState(names[0] ?? "");
  const [payload, setPayload] = useState("{}");
  const [signalId, setSignalId] = useState("");
  const [outcome, setOutcome] = useState(String(ManualOutcome.SUCCEEDED));
  const [actor, setActor] = useState("");
  const [notes, setNotes] = useState("");
  const [output, setOutput] = useState("");
  const [compensate, setCompensate] = useState(false);
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
          await api.runs.cancelRun({ runId, reason, signalId: autoId, compensate });
          return onDone(compensate ? "Cancel accepted: succeeded steps are compensated first." : "Cancel accepted.");
        case "retry":
          await api.runs.retryStep({ runId, actionId: pending.step, reason, signalId: autoId });
          return onDone(`Retry of ${pending.step} accepted.`);
        case "skip":
          await api.runs.skipStep({ runId, actionId: pending.step, reason, signalId: autoId });
          return onDone(`Skip of ${pending.step} accepted.`);
        case "rerun":
          await api.runs.rerunRun({ runId, fromStep: pending.step, reason, signalId: autoId });
          return onDone(`Rerun from ${pending.step} accepted.`);
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
    rerun: ["Rerun the run from this step?", "Rerun"],
    signal: ["Send a signal", "Send"],
    complete: ["Complete the manual step", "Complete"],
  };
  const [title, confirm] = titles[pending.kind];
  return (
    <Dialog title={title} confirm={confirm} danger={pending.kind === "cancel" || pending.kind === "skip"} busy={busy} onConfirm={send} onClose={onClose}>
      <p class="muted mono">{runId}</p>
      {(pending.kind === "retry" || pending.kind === "skip" || pending.kind === "rerun") && <p>Step <span class="mono">{pending.step}</span></p>}
      {pending.kind === "rerun" && (
        <p id="rerun-note">
          The run goes back to RUNNING, in the same run: this step and everything downstream of it run again as new logical attempts, the
          steps upstream of it keep their outputs, and the log keeps every earlier attempt. A step whose earlier attempt may have left a side
          effect is verified before it runs again.
        </p>
      )}
      {pending.kind === "pause" && <p>Running tasks finish (the run shows DRAINING); nothing new starts until it is resumed.</p>}
      {pending.kind === "cancel" && (
        <>
          <p>Cancelling is final: the run ends CANCELLED.</p>
          <label class="check">
            <input id="act-compensate" type="checkbox" checked={compensate} onChange={(e) => setCompensate(e.currentTarget.checked)} />
            Compensate succeeded steps first (their compensation hooks run in reverse completion order, as on failure)
          </label>
        </>
      )}
      {pending.kind === "signal" && (
        <>
          <label>
            Signal name
            <input id="sig-name" list="sig-names" required value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
            <datalist id="sig-names">
              {names.map((n) => (
                <option key={n} value={n} />
              ))}
            </datalist>
          </label>
          {names.length > 0 && (
            <p class="muted" id="sig-known">
              The run's steps wait for: {names.join(", ")}
            </p>
          )}
          {name.trim() !== "" && !names.includes(name.trim()) && (
            <p class="note" id="sig-unknown">
              No step of this run waits for a signal named {name.trim()}: the run would keep it and go on waiting.
            </p>
          )}
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
