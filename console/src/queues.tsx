// The queues page: each of the tenant's queues with its backlog, oldest
// ready task and pollers (WorkerService.ListWorkers), and the step
// concurrency and throttle keys of its tasks (DescribeQueue's flow_keys:
// slots in use of the limit, waiting tasks, throttle tokens and the next
// release; docs/semantics.md#flow-visibility) and the fairness keys of its
// ready tasks (fairness_keys: per priority, each key's backlog, weight and
// share; docs/semantics.md#fairness), then the tenant's run concurrency keys
// (RunService.DescribeRunConcurrency: per plan and key, runs started of the
// limit and runs queued; docs/semantics.md#run-concurrency), refreshed while
// Live is on.
import { useEffect, useState } from "preact/hooks";
import type { FairnessKeyState, FlowKeyState, QueueDescription } from "../../client/ts/src/gen/weft/v1/worker_pb";
import type { RunConcurrencyKey } from "../../client/ts/src/gen/weft/v1/run_pb";
import { api, faultOf, type Fault } from "./api";
import { FaultView } from "./ui";
import { duration, when } from "./format";

/** How often the page refreshes while Live is on. */
const REFRESH_MS = 2000;

/** inUseText is a concurrency key's slots held of its limit, e.g. "2/2". */
export function inUseText(k: FlowKeyState): string {
  return k.kind === "concurrency" ? `${k.inUse}/${k.limit}` : "—";
}

/** tokensText is a throttle's tokens of its burst and rate, e.g. "0/5 (20/1s)". */
export function tokensText(k: FlowKeyState): string {
  return k.kind === "throttle" ? `${k.tokens}/${k.burst} (${k.rate})` : "—";
}

/** FlowKeys is a queue's table of flow-control keys. */
function FlowKeys({ queue, keys }: { queue: string; keys: FlowKeyState[] }) {
  if (keys.length === 0) return <p class="muted flow-none">No flow-control key holds a task of this queue.</p>;
  return (
    <table class="flow-keys" aria-label={`Flow-control keys of queue ${queue}`}>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Kind</th>
          <th scope="col">Scope</th>
          <th scope="col">Waiting</th>
          <th scope="col">In use / limit</th>
          <th scope="col">Tokens (rate)</th>
          <th scope="col">Next release</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((k) => (
          <tr key={`${k.kind}/${k.scope}/${k.key}`} data-flow-key={k.key} data-flow-kind={k.kind}>
            <td class="mono">{k.key}</td>
            <td>{k.kind}</td>
            <td>{k.scope}</td>
            <td class="waiting">{k.waiting}</td>
            <td class="in-use">{inUseText(k)}</td>
            <td class="tokens">{tokensText(k)}</td>
            <td class="next-release">{k.kind === "throttle" ? (k.tokens > 0 ? "now" : when(k.nextRelease)) : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** weightText shows a fairness weight as given: 1, 0.5, 2.25. */
export const weightText = (w: number): string => String(Number(w.toPrecision(6)));

/**
 * shares answers each fairness key's share of its priority's claims while
 * every listed key stays backlogged: its weight over the sum of the weights
 * of the keys at that priority (docs/semantics.md#fairness), as percentages.
 */
export function shares(keys: FairnessKeyState[]): number[] {
  const sum = new Map<number, number>();
  for (const k of keys) sum.set(k.priority, (sum.get(k.priority) ?? 0) + k.weight);
  return keys.map((k) => {
    const total = sum.get(k.priority) ?? 0;
    return total > 0 ? (100 * k.weight) / total : 0;
  });
}

/** FairnessKeys is a queue's table of fairness keys, by priority. */
function FairnessKeys({ queue, keys, other }: { queue: string; keys: FairnessKeyState[]; other: number }) {
  if (keys.length === 0) return null;
  const share = shares(keys);
  return (
    <>
      <h3>Fairness keys</h3>
      <table class="fairness-keys" aria-label={`Fairness keys of queue ${queue}`}>
        <thead>
          <tr>
            <th scope="col">Priority</th>
            <th scope="col">Fairness key</th>
            <th scope="col">Backlog</th>
            <th scope="col">Weight</th>
            <th scope="col" title="Its weight over the sum of its priority's weights: its share of the claims while every key listed stays backlogged">
              Share of claims
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k, i) => (
            <tr key={`${k.priority}/${k.key}`} data-fairness-key={k.key} data-priority={k.priority}>
              <td class="priority">{k.priority}</td>
              <td class="mono">{k.key === "" ? <span class="muted">(implicit key: tasks without one)</span> : k.key}</td>
              <td class="backlog">{k.backlog}</td>
              <td class="weight">{weightText(k.weight)}</td>
              <td class="share">{`${share[i].toFixed(0)}%`}</td>
            </tr>
          ))}
          {other > 0 && (
            <tr class="fairness-other">
              <td>—</td>
              <td class="muted">other keys (beyond those listed)</td>
              <td class="backlog">{other}</td>
              <td>—</td>
              <td>—</td>
            </tr>
          )}
        </tbody>
      </table>
    </>
  );
}

/** RunKeys is the tenant's table of run concurrency keys, those with the most queued runs first. */
function RunKeys({ keys, fault }: { keys?: RunConcurrencyKey[]; fault?: Fault }) {
  return (
    <section class="run-keys" aria-labelledby="run-keys-title">
      <h2 id="run-keys-title">Run concurrency keys</h2>
      {fault && <FaultView fault={fault} />}
      {keys?.length === 0 && <p class="muted run-keys-none">No run holds or waits for a run concurrency key.</p>}
      {keys && keys.length > 0 && (
        <table class="run-concurrency-keys" aria-label="Run concurrency keys">
          <thead>
            <tr>
              <th scope="col">Plan</th>
              <th scope="col">Key</th>
              <th scope="col">Started / limit</th>
              <th scope="col">Queued runs</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={`${k.planId}/${k.key}`} data-plan={k.planId} data-run-key={k.key}>
                <td class="mono">{k.planId}</td>
                <td class="mono">{k.key}</td>
                <td class="in-use">
                  {k.inUse}/{k.limit}
                </td>
                <td class="queued">{k.waiting}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** QueuesPage lists the tenant's queues and their flow-control keys. */
export function QueuesPage() {
  const [queues, setQueues] = useState<QueueDescription[] | undefined>();
  const [fault, setFault] = useState<Fault | undefined>();
  const [runKeys, setRunKeys] = useState<{ keys?: RunConcurrencyKey[]; fault?: Fault }>({});
  const [live, setLive] = useState(true);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let gone = false;
    (async () => {
      try {
        const list = await api.workers.listWorkers({});
        const described = await Promise.all(list.queues.map((q) => api.workers.describeQueue({ queue: q.queue })));
        if (gone) return;
        setQueues(described.map((d, i) => d.queue ?? list.queues[i]));
        setFault(undefined);
      } catch (e) {
        if (!gone) setFault(faultOf(e));
      }
    })();
    (async () => {
      try {
        const res = await api.runs.describeRunConcurrency({});
        if (!gone) setRunKeys({ keys: res.keys });
      } catch (e) {
        if (!gone) setRunKeys({ fault: faultOf(e) });
      }
    })();
    return () => {
      gone = true;
    };
  }, [tick]);

  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(t);
  }, [live]);

  return (
    <main class="page">
      <h1>Queues</h1>
      <div class="filters bar">
        <p class="note">
          Each queue with a poller or a ready task, with its flow-control and fairness keys; then your runs' concurrency keys. <code>weft queue NAME</code> and <code>weft concurrency</code> show the same.
        </p>
        <label class="live">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
      </div>
      {fault && <FaultView fault={fault} />}
      {queues?.length === 0 && <p class="muted">No queue has a poller or a ready task.</p>}
      {queues?.map((q) => (
        <section key={q.queue} class="queue" data-queue={q.queue} aria-label={`Queue ${q.queue}`}>
          <h2 class="mono">{q.queue}</h2>
          <p class="queue-summary">
            backlog <strong class="backlog">{q.backlogCapped ? `${q.backlog}+` : q.backlog}</strong> · oldest ready{" "}
            {q.oldestReadyAt ? `${when(q.oldestReadyAt)} (waiting ${duration(q.oldestReadyAgeMs)})` : "none"} · pollers{" "}
            <strong class="pollers">{q.pollers.length}</strong>
          </p>
          <FlowKeys queue={q.queue} keys={q.flowKeys} />
          <FairnessKeys queue={q.queue} keys={q.fairnessKeys} other={q.fairnessOther} />
        </section>
      ))}
      <RunKeys keys={runKeys.keys} fault={runKeys.fault} />
    </main>
  );
}
