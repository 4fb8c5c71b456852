// The schedules list: each schedule's spec, next fire, last fire and its run,
// counters, and pause / resume with confirmation, all from ScheduleService.
import { can, why } from "./me";
import { useEffect, useState } from "preact/hooks";
import { OverlapPolicy, type Schedule, type ScheduleSpec } from "../../client/ts/src/gen/weft/v1/schedule_pb";
import { api, faultOf, type Fault } from "./api";
import { Badge, Dialog, FaultView } from "./ui";
import { when } from "./format";

/** The page size of the list. */
const PAGE_SIZE = 50;
/** How often the list refreshes while Live is on. */
const REFRESH_MS = 5000;

/** intervalText is an interval in whole units, e.g. "1 h", "1 min 30 s", "2 d". */
export function intervalText(ms: number): string {
  const units: [number, string][] = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "min"], [1000, "s"], [1, "ms"]];
  const parts: string[] = [];
  let left = ms;
  for (const [size, name] of units) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)} ${name}`);
      left %= size;
    }
  }
  return parts.join(" ") || "0 ms";
}

/** specText says when a spec fires, as `weft schedule describe` does. */
export function specText(spec: ScheduleSpec | undefined): string {
  if (!spec) return "—";
  if (spec.trigger.case === "intervalMs") return `every ${intervalText(Number(spec.trigger.value))}`;
  const tz = spec.timeZone || "UTC";
  return `cron ${spec.trigger.case === "cron" ? spec.trigger.value : "?"} (${tz})`;
}

/** overlapName is an overlap policy's short name, e.g. "BUFFER_ONE". */
function overlapName(p: OverlapPolicy): string {
  return p === OverlapPolicy.UNSPECIFIED ? "SKIP" : (OverlapPolicy[p] ?? String(p));
}

type Steer = { kind: "pause" | "resume"; schedule: Schedule };

/** SteerDialog confirms pausing or resuming a schedule and sends it. */
function SteerDialog({ steer, onDone, onClose }: { steer: Steer; onDone: (msg: string) => void; onClose: () => void }) {
  const [busy, setBusy] = useState(false);
  const [fault, setFault] = useState<Fault | undefined>();
  const id = steer.schedule.scheduleId;
  const send = async () => {
    setBusy(true);
    setFault(undefined);
    try {
      if (steer.kind === "pause") await api.schedules.pauseSchedule({ scheduleId: id });
      else await api.schedules.resumeSchedule({ scheduleId: id });
      onDone(`Schedule ${id} ${steer.kind === "pause" ? "paused" : "resumed"}.`);
    } catch (e) {
      setFault(faultOf(e));
    } finally {
      setBusy(false);
    }
  };
  const pause = steer.kind === "pause";
  return (
    <Dialog title={pause ? "Pause this schedule?" : "Resume this schedule?"} confirm={pause ? "Pause schedule" : "Resume schedule"} busy={busy} onConfirm={send} onClose={onClose}>
      <p class="mono">{id}</p>
      {pause ? (
        <p>It starts no runs until it is resumed; nominal times that pass while it is paused are never fired. Runs it started go on.</p>
      ) : (
        <p>It fires again from its next nominal time after now; what passed while it was paused is not caught up.</p>
      )}
      {fault && <FaultView fault={fault} />}
    </Dialog>
  );
}

/** SchedulesPage lists the tenant's schedules. */
export function SchedulesPage() {
  const [pages, setPages] = useState<string[]>([""]);
  const [list, setList] = useState<{ schedules: Schedule[]; next: string } | undefined>();
  const [fault, setFault] = useState<Fault | undefined>();
  const [live, setLive] = useState(true);
  const [tick, setTick] = useState(0);
  const [steer, setSteer] = useState<Steer | undefined>();
  const [done, setDone] = useState("");
  const page = pages[pages.length - 1];

  useEffect(() => {
    let gone = false;
    api.schedules.listSchedules({ pageSize: PAGE_SIZE, pageToken: page }).then(
      (res) => {
        if (gone) return;
        setList({ schedules: res.schedules, next: res.nextPageToken });
        setFault(undefined);
      },
      (e) => !gone && setFault(faultOf(e)),
    );
    return () => {
      gone = true;
    };
  }, [page, tick]);

  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(t);
  }, [live]);

  return (
    <main class="page">
      <h1>Schedules</h1>
      <div class="filters bar">
        <p class="note">Schedules start runs of a definition on a cron expression or an interval. Create, change and backfill them with <code>weft schedule</code>.</p>
        <label class="live">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
      </div>
      {fault && <FaultView fault={fault} />}
      {done && (
        <p class="accepted" role="status">
          {done}
        </p>
      )}
      {steer && (
        <SteerDialog
          steer={steer}
          onClose={() => setSteer(undefined)}
          onDone={(msg) => {
            setSteer(undefined);
            setDone(msg);
            setTick((n) => n + 1);
          }}
        />
      )}
      {!can("schedules.write") && (
        <p class="gated" id="schedules-gated">
          Pausing and resuming schedules {why("schedules.write")}.
        </p>
      )}
      <table class="schedules">
        <thead>
          <tr>
            <th scope="col">Schedule</th>
            <th scope="col">When</th>
            <th scope="col">Plan</th>
            <th scope="col">State</th>
            <th scope="col">Next fire</th>
            <th scope="col">Last fire</th>
            <th scope="col">Fires</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list?.schedules.map((s) => (
            <tr key={s.scheduleId} data-schedule-id={s.scheduleId}>
              <td class="mono id">{s.scheduleId}</td>
              <td>
                {specText(s.spec)}
                <div class="muted">overlap {overlapName(s.spec?.overlapPolicy ?? OverlapPolicy.UNSPECIFIED)}</div>
              </td>
              <td>
                {s.definition?.planId}
                <span class="muted">@{s.definition?.planVersion}</span>
              </td>
              <td class="state">
                <Badge status={s.paused ? "PAUSED" : "ACTIVE"} />
              </td>
              <td class="next-fire">{s.paused ? <span class="muted">paused</span> : when(s.nextFireTimes[0])}</td>
              <td class="last-fire">
                {s.lastRunId ? (
                  <>
                    {when(s.lastFireTime)}
                    <div>
                      <a href={`#/runs/${encodeURIComponent(s.lastRunId)}`} class="mono">
                        {s.lastRunId}
                      </a>
                    </div>
                  </>
                ) : (
                  "—"
                )}
              </td>
              <td class="counters" title={s.lastError ? `last error: ${s.lastError}` : undefined}>
                {String(s.fires)}
                <div class="muted">
                  skipped {String(s.skipped)} · missed {String(s.missed)} ·{" "}
                  <span class={s.failed > 0n ? "failed" : undefined}>failed {String(s.failed)}</span>
                </div>
              </td>
              <td>
                {s.paused ? (
                  <button type="button" class="resume" disabled={!can("schedules.write")} title={can("schedules.write") ? undefined : why("schedules.write")} onClick={() => setSteer({ kind: "resume", schedule: s })}>
                    Resume
                  </button>
                ) : (
                  <button type="button" class="pause" disabled={!can("schedules.write")} title={can("schedules.write") ? undefined : why("schedules.write")} onClick={() => setSteer({ kind: "pause", schedule: s })}>
                    Pause
                  </button>
                )}
              </td>
            </tr>
          ))}
          {list && list.schedules.length === 0 && (
            <tr>
              <td colSpan={8} class="empty">
                No schedules. <code>weft schedule create</code> makes one.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <div class="pager">
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          ← Previous
        </button>
        <span class="muted">page {pages.length}</span>
        <button type="button" disabled={!list?.next} onClick={() => list && setPages([...pages, list.next])}>
          Next →
        </button>
      </div>
    </main>
  );
}
