// The run's graph: the layout from dag.ts drawn as SVG, each step coloured by status.
import { useMemo } from "preact/hooks";
import type { Run, Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { layoutDag } from "./dag";
import { skippedByCondition, sleeping } from "./steps";
import { stepStatusName } from "./format";
import { progressText } from "./fanout";

/** fanOutShort fits a fan-out's progress into a node: "16/30 · 1 failed" (succeeded of all, and the failed ones); hover for the rest. */
const fanOutShort = (s: Step): string => {
  const f = s.fanOut;
  if (!f) return "";
  return ` · ${f.succeeded}/${f.items}${f.failed ? ` · ${f.failed} failed` : ""}`;
};

/** shortStatus fits a step's status into a graph node: a condition's skip and a sleep say so. */
const shortStatus = (status: string, s?: Step): string => {
  if (s && skippedByCondition(s)) return "SKIPPED · CONDITION";
  if (s && sleeping(s)) return "SLEEPING";
  return status === "WAITING_FOR_MANUAL_COMPLETION" ? "WAITING FOR A PERSON" : status.replaceAll("_", " ");
};

/**
 * DagView draws the run's actions and dependencies; clicking or Enter on a
 * step selects it. A forEach step is one node whatever its items
 * (docs/semantics.md#for-each), with their progress and a bar of it.
 */
export function DagView({ run, selected, onSelect }: { run: Run; selected?: string; onSelect: (id: string) => void }) {
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
              data-reason={s?.reason || undefined}
              data-progress={s?.fanOut ? `${s.fanOut.succeeded}/${s.fanOut.items}` : undefined}
              transform={`translate(${n.x},${n.y})`}
              tabIndex={0}
              role="button"
              aria-label={`${n.id}: ${status}${s?.fanOut ? `, ${progressText(s.fanOut)}` : ""}`}
              aria-pressed={selected === n.id}
              onClick={() => onSelect(n.id)}
              onKeyDown={(e) => {
                if (e.key === "Enter" || e.key === " ") {
                  e.preventDefault();
                  onSelect(n.id);
                }
              }}
            >
              {s?.fanOut && <title>{`${n.id}: ${progressText(s.fanOut)}`}</title>}
              <rect width={n.width} height={n.height} rx="8" />
              <text x="12" y="22" class="node-id">
                {n.id.length > 24 ? `${n.id.slice(0, 23)}…` : n.id}
              </text>
              <text x="12" y="40" class="node-status">
                {shortStatus(status, s)}
                {s && s.attempts.length > 1 ? ` · ${s.attempts.length} attempts` : ""}
                {s ? fanOutShort(s) : ""}
              </text>
              {s?.fanOut && s.fanOut.items > 0 && <NodeProgress width={n.width} step={s} />}
            </g>
          );
        })}
      </svg>
    </div>
  );
}

/** NodeProgress is a thin bar along a forEach node's bottom: its items succeeded, failed and in flight. */
function NodeProgress({ width, step }: { width: number; step: Step }) {
  const f = step.fanOut;
  if (!f) return null;
  const w = width - 24;
  let x = 12;
  const seg = (n: number, cls: string) => {
    if (n === 0) return null;
    const len = (w * n) / f.items;
    const r = <rect key={cls} class={`prog ${cls}`} x={x} y={46} width={len} height={4} />;
    x += len;
    return r;
  };
  return (
    <g class="node-progress" aria-hidden="true">
      <rect class="prog track" x={12} y={46} width={w} height={4} />
      {seg(f.succeeded, "p-succeeded")}
      {seg(f.failed, "p-failed")}
      {seg(f.cancelled, "p-cancelled")}
      {seg(f.inFlight, "p-in-flight")}
    </g>
  );
}
