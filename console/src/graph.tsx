// The run's graph: the layout from dag.ts drawn as SVG, each step coloured by status.
import { useMemo } from "preact/hooks";
import type { Run, Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { layoutDag } from "./dag";
import { skippedByCondition, sleeping } from "./steps";
import { stepStatusName } from "./format";

/** shortStatus fits a step's status into a graph node: a condition's skip and a sleep say so. */
const shortStatus = (status: string, s?: Step): string => {
  if (s && skippedByCondition(s)) return "SKIPPED · CONDITION";
  if (s && sleeping(s)) return "SLEEPING";
  return status === "WAITING_FOR_MANUAL_COMPLETION" ? "WAITING FOR A PERSON" : status.replaceAll("_", " ");
};

/** DagView draws the run's actions and dependencies; clicking or Enter on a step selects it. */
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
                {shortStatus(status, s)}
                {s && s.attempts.length > 1 ? ` · ${s.attempts.length} attempts` : ""}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
