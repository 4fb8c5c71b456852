// useRun follows one run: its snapshot (GetRun, and ResyncRun's snapshot) and
// its event log through an EventFeed, read with ListEvents and then followed
// with WatchEvents. A gap marks the view STALE and resyncs (FROM_SNAPSHOT at
// the watermark) until the watermark passes the gap.
import { useEffect, useReducer, useRef } from "preact/hooks";
import type { Run } from "../../client/ts/src/gen/weft/v1/run_pb";
import { ResyncMode } from "../../client/ts/src/gen/weft/v1/event_pb";
import { api, faultOf, type Fault } from "./api";
import { EventFeed } from "./feed";
import { isTerminal } from "./format";

/** What the run page shows of a run. */
export interface RunView {
  run?: Run;
  feed: EventFeed;
  /** The last fault reading the run, cleared by the next good read. */
  fault?: Fault;
  /** True while WatchEvents is open. */
  watching: boolean;
  /** Re-reads the snapshot now (after an action). */
  refresh: () => void;
}

const RETRY_MS = 1000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** useRun follows runId until the page leaves it. */
export function useRun(runId: string): RunView {
  const [, render] = useReducer((n: number) => n + 1, 0);
  const state = useRef<{ run?: Run; fault?: Fault; watching: boolean; feed: EventFeed; refresh: () => void }>({
    feed: new EventFeed(),
    watching: false,
    refresh: () => {},
  });

  useEffect(() => {
    const abort = new AbortController();
    const signal = abort.signal;
    const s = state.current;
    let snapshotWanted = false;
    let snapshotRunning = false;

    // Snapshot reads are coalesced: at most one in flight, one more queued.
    const readSnapshot = async () => {
      snapshotWanted = true;
      if (snapshotRunning) return;
      snapshotRunning = true;
      while (snapshotWanted && !signal.aborted) {
        snapshotWanted = false;
        try {
          const { run } = await api.runs.getRun({ runId }, { signal });
          s.run = run;
          s.fault = undefined;
        } catch (e) {
          if (!signal.aborted) s.fault = faultOf(e);
        }
        render(0);
      }
      snapshotRunning = false;
    };
    // wake, while set, resumes following an ended run (see follow).
    let wake: (() => void) | undefined;
    s.refresh = () => {
      void readSnapshot();
      wake?.();
    };

    // resync repeats ResyncRun until the feed is no longer STALE.
    const resync = async () => {
      while (s.feed.stale && !signal.aborted) {
        try {
          const res = await api.events.resyncRun(
            { runId, mode: ResyncMode.FROM_SNAPSHOT, snapshotSeq: s.feed.watermark },
            { signal },
          );
          if (res.snapshot) s.run = res.snapshot;
          if (!s.feed.resynced(res.events)) await sleep(RETRY_MS, signal);
        } catch (e) {
          if (signal.aborted) return;
          s.fault = faultOf(e);
          render(0);
          await sleep(RETRY_MS, signal);
        }
        render(0);
      }
    };

    const follow = async () => {
      await readSnapshot();
      // The log so far, page by page.
      for (;;) {
        if (signal.aborted) return;
        try {
          const page = await api.events.listEvents({ runId, afterSeq: s.feed.watermark, pageSize: 1000 }, { signal });
          for (const ev of page.events) if (s.feed.offer(ev) === "gap") break;
          render(0);
          if (s.feed.stale) {
            void readSnapshot();
            await resync();
          } else if (!page.hasMore) break;
        } catch (e) {
          if (signal.aborted) return;
          s.fault = faultOf(e);
          render(0);
          await sleep(RETRY_MS, signal);
        }
      }
      // Then each new event as it is appended, until the run is over.
      while (!signal.aborted) {
        const watch = new AbortController();
        const stop = () => watch.abort();
        signal.addEventListener("abort", stop);
        s.watching = true;
        render(0);
        try {
          for await (const res of api.events.watchEvents({ runId, afterSeq: s.feed.watermark }, { signal: watch.signal })) {
            if (!res.event) continue;
            const offered = s.feed.offer(res.event);
            if (offered === "gap") {
              // STALE: the snapshot still shows the run as it is now.
              void readSnapshot();
              watch.abort();
              break;
            }
            if (offered === "applied") void readSnapshot();
            render(0);
          }
        } catch (e) {
          if (!signal.aborted && !watch.signal.aborted) {
            s.fault = faultOf(e);
            await sleep(RETRY_MS, signal);
          }
        } finally {
          signal.removeEventListener("abort", stop);
          s.watching = false;
        }
        if (s.feed.stale) {
          render(0);
          await resync();
          void readSnapshot();
          continue;
        }
        // The watch ended without a gap: the run is terminal and drained,
        // or the connection dropped. Read the snapshot and decide.
        await readSnapshot();
        if (s.run && isTerminal(s.run.status) && s.feed.watermark >= s.run.lastEventSeq) {
          // An ended run changes again only by an action on it (a rerun
          // takes it back to RUNNING): follow it again after the next one.
          render(0);
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener("abort", () => resolve());
          });
          wake = undefined;
          await readSnapshot();
          continue;
        }
        await sleep(RETRY_MS, signal);
      }
      render(0);
    };
    void follow();
    return () => abort.abort();
  }, [runId]);

  const s = state.current;
  return { run: s.run, feed: s.feed, fault: s.fault, watching: s.watching, refresh: s.refresh };
}
