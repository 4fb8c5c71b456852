// Which events the run page's event log shows (log.tsx): those its step
// filter keeps — every step, one step, or the items of a forEach step
// (docs/semantics.md#for-each) — and of those the newest EVENT_LOG_SHOWN
// unless all are asked for, so that a fan-out's thousands of events do not
// all become rows.
import type { Event } from "../../client/ts/src/gen/weft/v1/event_pb";

/** How many events the log shows before Show all. */
export const EVENT_LOG_SHOWN = 500;

/** The step filter's value for "every step", and the prefix of "the items of a forEach step". */
export const ALL_STEPS = "";
export const ITEMS_OF = "items:";

/** keeps reports whether the step filter f keeps event e. */
export function keeps(f: string, e: Event): boolean {
  if (f === ALL_STEPS) return true;
  if (f.startsWith(ITEMS_OF)) return e.stepId.startsWith(`${f.slice(ITEMS_OF.length)}[`);
  return e.stepId === f;
}

/** shownEvents answers the events the filter keeps (kept) and those the log shows (shown): the newest limit of them unless all. */
export function shownEvents(events: Event[], f: string, all: boolean, limit = EVENT_LOG_SHOWN): { kept: Event[]; shown: Event[] } {
  const kept = f === ALL_STEPS ? events : events.filter((e) => keeps(f, e));
  return { kept, shown: all || kept.length <= limit ? kept : kept.slice(kept.length - limit) };
}
