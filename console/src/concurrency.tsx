// A run's concurrency key (docs/semantics.md#run-concurrency): the key its
// definition's concurrency expression answered at submission, the runs of
// the key started of its limit when GetRun read the run, the strategy, and,
// while the run is QUEUED, why it waits. The figures change with other runs
// of the key, not with this run's events, so the page reads them again
// every few seconds while the run is not finished.
import { useEffect } from "preact/hooks";
import { RunStatus, type Run } from "../../client/ts/src/gen/weft/v1/run_pb";
import { isTerminal } from "./format";

/** How often the page reads a run with a concurrency key again while it is not finished. */
export const CONCURRENCY_REFRESH_MS = 2000;

/**
 * useConcurrencyRefresh calls refresh every few seconds while run is not
 * finished and has a concurrency key, or a step whose task flow control or
 * fairness holds (Step.flow_wait, docs/semantics.md#flow-visibility): what
 * they say changes with other runs, not with this run's events.
 */
export function useConcurrencyRefresh(run: Run | undefined, refresh: () => void): void {
  const watched = run !== undefined && !isTerminal(run.status) && (run.concurrency !== undefined || run.steps.some((s) => s.flowWait !== ""));
  useEffect(() => {
    if (!watched) return;
    const t = setInterval(refresh, CONCURRENCY_REFRESH_MS);
    return () => clearInterval(t);
  }, [watched, refresh]);
}

/** RunConcurrency shows the run's concurrency key, its runs started of the limit, the strategy and why a QUEUED run waits. */
export function RunConcurrency({ run }: { run: Run }) {
  const c = run.concurrency;
  if (!c) return null;
  const queued = run.status === RunStatus.QUEUED;
  return (
    <dl class="facts run-concurrency" id="run-concurrency" aria-label="Run concurrency">
      <div>
        <dt>Concurrency key</dt>
        <dd class="mono" id="concurrency-key">
          {c.key}
        </dd>
      </div>
      <div>
        <dt>Started / limit</dt>
        <dd id="concurrency-in-use">
          {c.inUse}/{c.limit}
        </dd>
      </div>
      <div>
        <dt>Strategy</dt>
        <dd id="concurrency-strategy">{c.strategy || "queue"}</dd>
      </div>
      {queued && (
        <div class="wide">
          <dt>Queued because</dt>
          <dd id="concurrency-wait">{c.wait || "the plan's or the tenant's concurrency limit is reached"}</dd>
        </div>
      )}
    </dl>
  );
}
