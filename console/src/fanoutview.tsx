// A forEach step as one group on the run page (docs/semantics.md#for-each):
// its progress — n of N succeeded, in flight, failed, pending, at most
// maxConcurrency at once — as numbers and a bar, and, once expanded (a group
// starts collapsed), its items in index order, 50 a page, filtered by state,
// each with its status, attempts, times, last error (or why flow control or
// fairness holds its task) and child run; opening
// one shows it below like any step.
import { useMemo, useState } from "preact/hooks";
import { StepStatus, type Run, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { Badge } from "./ui";
import { skippedByCondition, stepErrorText } from "./steps";
import { clock, stepStatusName } from "./format";
import { ITEM_STATE_NAMES, ITEM_STATES, countStates, itemsOf, pageOf, progressText, type ItemFilter } from "./fanout";

/** ProgressBar draws a fan-out's items by state, each a share of the bar. */
function ProgressBar({ step }: { step: Step }) {
  const f = step.fanOut;
  if (!f || f.items === 0) return null;
  const part = (n: number, cls: string, name: string) =>
    n > 0 ? <span class={`part ${cls}`} style={{ width: `${(100 * n) / f.items}%` }} title={`${n} ${name}`} /> : null;
  return (
    <div class="fanout-bar" role="img" aria-label={progressText(f)}>
      {part(f.succeeded, "p-succeeded", "succeeded")}
      {part(f.failed, "p-failed", "failed")}
      {part(f.cancelled, "p-cancelled", "cancelled")}
      {part(f.inFlight, "p-in-flight", "in flight")}
    </div>
  );
}

/** The line under a group's title: its progress, or why it has no items. */
function progressLine(run: Run, step: Step): string {
  if (step.fanOut) return progressText(step.fanOut);
  if (skippedByCondition(step)) return "skipped: condition — the forEach never fanned out";
  if (step.status === StepStatus.PENDING) return "not fanned out yet: the list is evaluated when the step becomes ready";
  const max = run.definition?.actions.find((a) => a.id === step.actionId)?.maxConcurrency ?? 10;
  return `${stepStatusName(step.status).toLowerCase().replaceAll("_", " ")} without items (at most ${max} at once)`;
}

/** FanOutGroup shows one forEach step and, when expanded, a page of its items. */
export function FanOutGroup({ run, step, selected, onSelect }: { run: Run; step: Step; selected?: string; onSelect: (id: string) => void }) {
  const [open, setOpen] = useState(false);
  const [filter, setFilter] = useState<ItemFilter>("all");
  const [page, setPage] = useState(0);
  const items = useMemo(() => itemsOf(run, step.actionId), [run, step.actionId]);
  const counts = useMemo(() => countStates(items), [items]);
  const shown = pageOf(items, filter, page);
  const action = run.definition?.actions.find((a) => a.id === step.actionId);
  const subWorkflow = action?.workflow !== undefined;
  const choose = (f: ItemFilter) => {
    setFilter(f);
    setPage(0);
  };
  const bodyId = `fanout-items-${step.actionId}`;
  return (
    <section class="fanout" data-fanout={step.actionId} aria-label={`Fan-out of step ${step.actionId}`}>
      <div class="fanout-head">
        <h3>
          <span class="mono">{step.actionId}</span> <Badge status={stepStatusName(step.status)} />{" "}
          <span class="muted">
            forEach <span class="mono">{action?.forEach}</span>
            {step.fanOut ? ` · ${step.fanOut.items} ${step.fanOut.items === 1 ? "item" : "items"}` : ""}
            {subWorkflow ? " · sub-workflows" : ""}
          </span>
        </h3>
        {items.length > 0 && (
          <button type="button" class="fanout-toggle" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen(!open)}>
            {open ? "Hide items" : `Show ${items.length} ${items.length === 1 ? "item" : "items"}`}
          </button>
        )}
      </div>
      <p class="fanout-progress">{progressLine(run, step)}</p>
      <ProgressBar step={step} />
      {open && (
        <div id={bodyId} class="fanout-body">
          <div class="fanout-filters" role="group" aria-label="Show the items that are">
            <button type="button" class="count" data-filter="all" aria-pressed={filter === "all"} onClick={() => choose("all")}>
              <span class="count-name">all</span>
              <span class="count-n">{items.length}</span>
            </button>
            {ITEM_STATES.map((st) => (
              <button type="button" key={st} class={`count f-${st}`} data-filter={st} aria-pressed={filter === st} disabled={counts[st] === 0 && filter !== st} onClick={() => choose(st)}>
                <span class="count-name">
                  <span class={`swatch p-${st === "inFlight" ? "in-flight" : st}`} aria-hidden="true" />
                  {ITEM_STATE_NAMES[st]}
                </span>
                <span class="count-n">{counts[st]}</span>
              </button>
            ))}
          </div>
          <table class="fanout-items" aria-label={`Items of step ${step.actionId}`}>
            <thead>
              <tr>
                <th scope="col">Item</th>
                <th scope="col">Status</th>
                <th scope="col">Attempt</th>
                <th scope="col">Attempts</th>
                <th scope="col">Started</th>
                <th scope="col">Completed</th>
                {subWorkflow && <th scope="col">Child run</th>}
                <th scope="col">Last error, or why it waits</th>
              </tr>
            </thead>
            <tbody>
              {shown.items.length === 0 && (
                <tr>
                  <td colSpan={subWorkflow ? 8 : 7} class="empty">
                    No item is {filter === "all" ? "listed" : ITEM_STATE_NAMES[filter]}.
                  </td>
                </tr>
              )}
              {shown.items.map((s) => (
                <tr key={s.actionId} data-item={s.actionId} data-status={stepStatusName(s.status)} class={selected === s.actionId ? "selected" : ""}>
                  <td>
                    <button type="button" class="link mono item-open" aria-pressed={selected === s.actionId} onClick={() => onSelect(s.actionId)}>
                      {s.actionId}
                    </button>
                  </td>
                  <td>
                    <Badge status={stepStatusName(s.status)} />
                  </td>
                  <td>{s.logicalAttemptId ? `${s.logicalAttemptId}.${s.engineAttemptId}` : "—"}</td>
                  <td class="item-attempts">{s.attempts.length}</td>
                  <td class="nowrap">{clock(s.startedAt)}</td>
                  <td class="nowrap">{clock(s.completedAt)}</td>
                  {subWorkflow && (
                    <td>
                      {s.childRunId ? (
                        <a class="mono item-child" href={`#/runs/${encodeURIComponent(s.childRunId)}`}>
                          {s.childRunId}
                        </a>
                      ) : (
                        "—"
                      )}
                    </td>
                  )}
                  <td class="item-error">
                    {s.error ? stepErrorText(s.error) : s.flowWait ? <span class="muted item-wait">{s.flowWait}</span> : "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="pager fanout-pager">
            <span class="fanout-range" aria-live="polite">
              {shown.matching === 0 ? "none" : `items ${shown.from}–${shown.to} of ${shown.matching}`}
              {filter !== "all" ? ` ${ITEM_STATE_NAMES[filter]}` : ""} · page {shown.page + 1} of {shown.pages}
            </span>
            <button type="button" class="fanout-prev" disabled={shown.page === 0} onClick={() => setPage(shown.page - 1)}>
              Previous
            </button>
            <button type="button" class="fanout-next" disabled={shown.page >= shown.pages - 1} onClick={() => setPage(shown.page + 1)}>
              Next
            </button>
          </div>
        </div>
      )}
    </section>
  );
}
