// EventFeed keeps a run's event log in run_seq order from a watermark, the
// rule of docs/semantics.md#console-event-feed: an event that is not the next
// run_seq marks the feed STALE and pauses it; a resync ends STALE only when it
// moves the watermark to or past the run_seq that revealed the gap.
import type { Event } from "../../client/ts/src/gen/weft/v1/event_pb";

/** What offer did with an event. */
export type Offered = "applied" | "old" | "gap";

/** EventFeed is the console's projection of a run's event log. */
export class EventFeed {
  /** The events applied, in run_seq order. */
  readonly events: Event[] = [];
  /** The highest run_seq applied. */
  watermark = 0n;
  /** True from a gap until a resync that advances the watermark past it. */
  stale = false;
  /** The watermark when the gap was seen. */
  staleAt = 0n;
  /** The run_seq that revealed the gap. */
  gapAt = 0n;
  /** How many resyncs have been answered. */
  resyncs = 0;

  /**
   * offer applies an event read incrementally (ListEvents, WatchEvents). An
   * event at or below the watermark is old; one that is not watermark+1 is a
   * gap, which marks the feed STALE; while STALE nothing is applied.
   */
  offer(ev: Event): Offered {
    if (ev.runSeq <= this.watermark) return "old";
    if (this.stale) return "gap";
    if (ev.runSeq !== this.watermark + 1n) {
      this.stale = true;
      this.staleAt = this.watermark;
      this.gapAt = ev.runSeq;
      return "gap";
    }
    this.apply(ev);
    return "applied";
  }

  /**
   * resynced applies what ResyncRun answered (events after the watermark, in
   * run_seq order, gaps and all: the server's log is the truth) and answers
   * whether the resync completed: the watermark reached the gap. Otherwise
   * the feed stays STALE and the caller resyncs again.
   */
  resynced(events: readonly Event[]): boolean {
    this.resyncs++;
    const after = [...events].filter((e) => e.runSeq > this.watermark).sort((a, b) => (a.runSeq < b.runSeq ? -1 : a.runSeq > b.runSeq ? 1 : 0));
    for (const ev of after) if (ev.runSeq > this.watermark) this.apply(ev);
    if (this.stale && this.watermark >= this.gapAt && this.watermark > this.staleAt) this.stale = false;
    return !this.stale;
  }

  private apply(ev: Event): void {
    this.events.push(ev);
    this.watermark = ev.runSeq;
  }
}
