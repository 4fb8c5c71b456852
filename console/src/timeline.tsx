// The timeline: one lane per step, one bar per attempt.
import { AttemptOutcome, type Run } from "../../client/ts/src/gen/weft/v1/run_pb";
import { attemptsOf } from "./steps";
import { attemptOutcomeName, duration, errorClassName, ms, when } from "./format";

const outcomeClass = (o: AttemptOutcome): string => attemptOutcomeName(o).toLowerCase();

/** Timeline draws every attempt of every step from its start to its end. */
export function Timeline({ run }: { run: Run }) {
  const now = Date.now();
  const rows = run.steps.map((s) => ({ id: s.actionId, attempts: attemptsOf(s) })).filter((r) => r.attempts.length > 0);
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
              const label = `${attemptOutcomeName(a.outcome)}${a.error ? ` · ${errorClassName(a.error.errorClass)}` : ""}`;
              return (
                <g key={`${a.logicalAttemptId}.${a.engineAttemptId}`} class={`bar o-${outcomeClass(a.outcome)}`} data-outcome={attemptOutcomeName(a.outcome)}>
                  <title>
                    {`${s.id} attempt ${a.logicalAttemptId}.${a.engineAttemptId}: ${label}\n${when(a.startedAt)} → ${a.completedAt ? when(a.completedAt) : "running"} (${duration(end - start)})${a.error?.message ? `\n${a.error.message}` : ""}`}
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
