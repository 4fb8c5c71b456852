// Small shared pieces: faults, status badges, the confirmation dialog.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { Fault } from "./api";

/** FaultView shows a fault's code, message, field violations and correlation id. */
export function FaultView({ fault }: { fault: Fault }) {
  return (
    <div class="fault" role="alert">
      <div>
        <span class="fault-code">{fault.code}</span> <span class="fault-message">{fault.message}</span>
      </div>
      {fault.violations.length > 0 && (
        <ul class="violations">
          {fault.violations.map((v) => (
            <li key={v}>{v}</li>
          ))}
        </ul>
      )}
      {fault.correlationId && (
        <div class="fault-correlation">
          correlation id <code>{fault.correlationId}</code>
        </div>
      )}
    </div>
  );
}

/** Badge shows a status name, coloured by the status. */
export function Badge({ status, extra }: { status: string; extra?: string }) {
  return (
    <span class={`badge s-${status.toLowerCase()}`}>
      {status}
      {extra ? ` · ${extra}` : ""}
    </span>
  );
}

/**
 * Dialog is a modal confirmation: the browser's <dialog> traps focus and
 * closes on Escape. onConfirm runs when the form is submitted.
 */
export function Dialog(props: {
  title: string;
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onClose: () => void;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onClose={props.onClose} onCancel={props.onClose}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          props.onConfirm();
        }}
      >
        <h2 id="dialog-title">{props.title}</h2>
        {props.children}
        <div class="dialog-buttons">
          <button type="button" onClick={props.onClose}>
            Close
          </button>
          <button type="submit" class={props.danger ? "danger" : "primary"} disabled={props.busy}>
            {props.confirm}
          </button>
        </div>
      </form>
    </dialog>
  );
}
