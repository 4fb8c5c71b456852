// The timeline: one lane per step, one bar per attempt.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { AttemptOutcome, AttemptSchema, StepStatus, type Attempt, type Run, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { isItem } from "./fanout";
import { attemptsOf } from "./steps";
import { attemptOutcomeName, duration, errorClassName, ms, when } from "./format";

const outcomeClass = (o: AttemptOutcome): string => attemptOutcomeName(o).toLowerCase();

/**
 * fanOutSpan answers a forEach step's lane: one bar from its first item's
 * start to its last item's end (unended while an item runs), its outcome the
 * step's, so that a fan-out of 1,000 items is one lane, not 1,000
 * (docs/semantics.md#for-each); each item's own attempts show on its page.
 */
function fanOutSpan(step: Step, items: Step[]): Attempt[] {
  const all = items.flatMap(attemptsOf);
  if (all.length === 0) return [];
  const starts = all.map((a) => ms(a.startedAt)).filter((t): t is number => t !== undefined);
  const ends = all.map((a) => ms(a.completedAt));
  const open = ends.some((t) => t === undefined);
  const outcome =
    step.status === StepStatus.SUCCEEDED ? AttemptOutcome.SUCCEEDED : step.status === StepStatus.FAILED ? AttemptOutcome.FAILED : open ? AttemptOutcome.UNSPECIFIED : AttemptOutcome.CANCELLED;
  const end = open ? undefined : Math.max(...(ends as number[]));
  return [create(AttemptSchema, { logicalAttemptId: step.logicalAttemptId, engineAttemptId: 0, outcome, startedAt: starts.length ? timestampFromMs(Math.min(...starts)) : undefined, completedAt: end !== undefined ? timestampFromMs(end) : undefined })];
}

/** Timeline draws every attempt of every step from its start to its end; a forEach step's items as one bar. */
export function Timeline({ run }: { run: Run }) {
  const now = Date.now();
  const items = new Map<string, Step[]>();
  for (const s of run.steps) {
    if (!isItem(s)) continue;
    const list = items.get(s.parentStep);
    if (list) list.push(s);
    else items.set(s.parentStep, [s]);
  }
  const rows = run.steps
    .filter((s) => !isItem(s))
    .map((s) => ({ id: s.actionId, attempts: items.has(s.actionId) ? fanOutSpan(s, items.get(s.actionId) ?? []) : attemptsOf(s), items: items.get(s.actionId)?.length ?? 0 }))
    .filter((r) => r.attempts.length > 0);
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
              const label = s.items ? `${s.items} items · ${attemptOutcomeName(a.outcome)}` : `${attemptOutcomeName(a.outcome)}${a.error ? ` · ${errorClassName(a.error.errorClass)}` : ""}`;
              return (
                <g key={`${a.logicalAttemptId}.${a.engineAttemptId}`} class={`bar o-${outcomeClass(a.outcome)}`} data-outcome={attemptOutcomeName(a.outcome)}>
                  <title>
                    {`${s.id} ${s.items ? "items" : `attempt ${a.logicalAttemptId}.${a.engineAttemptId}`}: ${label}\n${when(a.startedAt)} → ${a.completedAt ? when(a.completedAt) : "running"} (${duration(end - start)})${a.error?.message ? `\n${a.error.message}` : ""}`}
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
