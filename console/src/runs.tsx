// The runs list: filters (status, plan, creation time, run id text), paging,
// live refresh and counts by status, all from ListRuns; runs selected by
// their checkboxes are acted on together by a batch (batch.tsx).
import { useEffect, useRef, useState } from "preact/hooks";
import type { Run, ListRunsResponse } from "../../client/ts/src/gen/weft/v1/run_pb";
import { api, faultOf, type Fault } from "./api";
import { Badge, FaultView } from "./ui";
import { RUN_STATUSES, duration, ms, runStatusName, substatusName, when } from "./format";
import { waitingText } from "./waiting";
import { BATCH_OPERATIONS, BatchDialog, batchRefusal } from "./batch";
import type { BatchOperation } from "../../client/ts/src/gen/weft/v1/run_pb";
import { can, why } from "./me";
import { matchingQuery, noFilters, request, type Filters } from "./filters";
import { SavedViews, viewInLink } from "./views";
import { QueryProblem, queryProblem } from "./query";

/** The page size of the list. */
const PAGE_SIZE = 25;
/** How many runs the counts look at. */
const WINDOW = 1000;
/** How often the list refreshes while Live is on. */
const REFRESH_MS = 2000;
/** Every how many refreshes the counts' window is read again (10 s). */
const WINDOW_EVERY = 5;

interface Listing {
  runs: Run[];
  next: string;
  counts: Map<number, number>;
  countedAll: boolean;
}

/** The counts' window as last read, and what it was read for. */
type WindowCache = { current?: { key: string; window: ListRunsResponse } };

async function load(f: Filters, pageToken: string, cache: WindowCache, key: string): Promise<Listing> {
  // The window: up to WINDOW runs under every filter but status, for the
  // counts; read again only when its filters change or every WINDOW_EVERY
  // refreshes, so a tab left open costs one page read per refresh.
  let window = cache.current?.key === key ? cache.current.window : undefined;
  if (!window) {
    window = await api.runs.listRuns({ ...request(f, false), pageSize: WINDOW });
    cache.current = { key, window };
  }
  const counts = new Map<number, number>();
  for (const r of window.runs) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  const countedAll = window.nextPageToken === "";
  const page = await api.runs.listRuns({ ...request(f, true), pageSize: PAGE_SIZE, pageToken });
  return { runs: page.runs, next: page.nextPageToken, counts, countedAll };
}

function runDuration(r: Run, now: number): string {
  const start = ms(r.startedAt);
  if (start === undefined) return "—";
  return duration((ms(r.completedAt) ?? now) - start);
}

/** RunsPage lists the tenant's runs. */
export function RunsPage() {
  const [draft, setDraft] = useState<Filters>(noFilters);
  const [filters, setFilters] = useState<Filters>(noFilters);
  const [pages, setPages] = useState<string[]>([""]); // page tokens; the last is the current page
  const [listing, setListing] = useState<Listing | undefined>();
  const [fault, setFault] = useState<Fault | undefined>();
  const [live, setLive] = useState(true);
  const [tick, setTick] = useState(0);
  const page = pages[pages.length - 1];
  const windowCache = useRef<{ key: string; window: ListRunsResponse } | undefined>(undefined);
  // The runs selected for a batch, by id: kept across pages, refreshes and filters.
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [op, setOp] = useState<BatchOperation>(BATCH_OPERATIONS[0].op);
  const [confirming, setConfirming] = useState<{ runIds: string[] } | { query: string; count: number } | undefined>();
  // "All matching": every run the filters select, as one query, and how many CountRuns counted.
  const [matching, setMatching] = useState<{ query: string; count: number } | undefined>();
  const [matchingNote, setMatchingNote] = useState<string | undefined>();
  const [matchingFault, setMatchingFault] = useState<Fault | undefined>();

  useEffect(() => {
    let gone = false;
    const key = JSON.stringify([filters.plan, filters.after, filters.before, filters.search, filters.query, Math.floor(tick / WINDOW_EVERY)]);
    load(filters, page, windowCache, key).then(
      (l) => {
        if (gone) return;
        setListing(l);
        setFault(undefined);
      },
      (e) => {
        if (gone) return;
        setFault(faultOf(e));
        // A refused query selects nothing: the runs listed before it would read as its answer.
        if (filters.query.trim()) setListing(undefined);
      },
    );
    return () => {
      gone = true;
    };
  }, [filters, page, tick]);

  // A refused query is refused again until it changes: Live waits for the next Apply.
  const queryRefused = !!fault && !!queryProblem(fault, filters.query.trim() !== "");
  useEffect(() => {
    if (!live || queryRefused) return;
    const t = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(t);
  }, [live, queryRefused]);

  const apply = (f: Filters) => {
    setFilters(f);
    setPages([""]);
    setMatching(undefined);
    setMatchingNote(undefined);
    setMatchingFault(undefined);
  };
  const selectMatching = async () => {
    setMatchingNote(undefined);
    setMatchingFault(undefined);
    const m = matchingQuery(filters);
    if ("refused" in m) return setMatchingNote(m.refused);
    try {
      const res = await api.runs.countRuns({ query: m.query });
      setSelected(new Set());
      setMatching({ query: m.query, count: Number(res.count) });
    } catch (e) {
      setMatchingFault(faultOf(e));
    }
  };
  const filtered = JSON.stringify(filters) !== JSON.stringify(noFilters);
  const set = (k: keyof Filters) => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [k]: e.currentTarget.value });
  const now = Date.now();
  const total = listing ? [...listing.counts.values()].reduce((a, b) => a + b, 0) : 0;
  const onPage = listing?.runs.map((r) => r.runId) ?? [];
  const pageSelected = onPage.length > 0 && onPage.every((id) => selected.has(id));
  const toggle = (ids: string[], on: boolean) => {
    const next = new Set(selected);
    for (const id of ids) {
      if (on) next.add(id);
      else next.delete(id);
    }
    setSelected(next);
  };
  const refusal = batchRefusal(op);
  const queryFault = fault ? queryProblem(fault, filters.query.trim() !== "") : undefined;

  return (
    <main class="page">
      <div class="page-title">
        <h1>Runs</h1>
        {can("runs.submit") ? (
          <a class="button primary" id="start-run" href="#/start">
            Start a run
          </a>
        ) : (
          <span class="gated" title={why("runs.submit")}>
            Starting a run {why("runs.submit")}
          </span>
        )}
      </div>
      <div class="counts" aria-label="Runs by status">
        <button type="button" class={`count ${filters.status === "" ? "active" : ""}`} onClick={() => apply({ ...filters, status: "" })}>
          <span class="count-name">ALL</span>
          <span class="count-n">
            {total}
            {listing && !listing.countedAll ? "+" : ""}
          </span>
        </button>
        {RUN_STATUSES.map((s) => (
          <button
            type="button"
            key={s}
            data-status={runStatusName(s)}
            class={`count s-${runStatusName(s).toLowerCase()} ${filters.status === String(s) ? "active" : ""}`}
            onClick={() => {
              setDraft({ ...draft, status: String(s) });
              apply({ ...filters, status: String(s) });
            }}
          >
            <span class="count-name">{runStatusName(s)}</span>
            <span class="count-n">{listing?.counts.get(s) ?? 0}</span>
          </button>
        ))}
      </div>
      <SavedViews
        current={filters}
        onOpen={(f) => {
          setDraft(f);
          apply(f);
        }}
      />
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label class="query">
          Query
          <input
            id="f-query"
            class="mono"
            spellcheck={false}
            value={draft.query}
            onInput={set("query")}
            aria-invalid={queryFault ? "true" : undefined}
            aria-describedby={queryFault ? "query-error" : undefined}
            placeholder={'status = "FAILED" AND plan = "order-fulfilment" AND createdAt > "2026-11-28T10:00:00Z"'}
          />
        </label>
        {queryFault && fault && <QueryProblem query={filters.query} problem={queryFault} fault={fault} />}
        <label>
          Status
          <select id="f-status" value={draft.status} onChange={set("status")}>
            <option value="">any</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={String(s)}>
                {runStatusName(s)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Plan
          <input id="f-plan" value={draft.plan} onInput={set("plan")} placeholder="plan id" />
        </label>
        <label>
          Created after
          <input id="f-after" type="datetime-local" value={draft.after} onInput={set("after")} />
        </label>
        <label>
          Created before
          <input id="f-before" type="datetime-local" value={draft.before} onInput={set("before")} />
        </label>
        <label>
          Run id
          <input id="f-search" type="search" value={draft.search} onInput={set("search")} placeholder="part of a run id" />
        </label>
        <button type="submit" class="primary">
          Apply
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft(noFilters);
            apply(noFilters);
          }}
        >
          Clear
        </button>
        <label class="live">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
      </form>
      {fault && !queryFault && <FaultView fault={fault} />}
      {filtered && !matching && (
        <p class="matching">
          <button type="button" class="link" id="select-matching" disabled={!!batchRefusal(op)} onClick={selectMatching}>
            Select every run matching these filters
          </button>
          {matchingNote && <span class="note" id="matching-note">{matchingNote}</span>}
        </p>
      )}
      {matchingFault && <FaultView fault={matchingFault} />}
      {(selected.size > 0 || matching) && (
        <div class="batch-bar" id="batch-bar" role="region" aria-label="Batch">
          <strong id="selected-count">
            {matching
              ? `All ${matching.count} run${matching.count === 1 ? "" : "s"} matching the filters`
              : `${selected.size} run${selected.size === 1 ? "" : "s"} selected`}
          </strong>
          <label>
            Operation
            <select id="batch-op" value={String(op)} onChange={(e) => setOp(Number(e.currentTarget.value) as BatchOperation)}>
              {BATCH_OPERATIONS.map((o) => (
                <option key={o.op} value={String(o.op)}>
                  {o.verb.toLowerCase()}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            class="primary"
            id="batch-apply"
            disabled={!!refusal || matching?.count === 0}
            title={refusal}
            onClick={() => setConfirming(matching ? { ...matching } : { runIds: [...selected] })}
          >
            Apply to {matching ? matching.count : selected.size} run{(matching ? matching.count : selected.size) === 1 ? "" : "s"}…
          </button>
          <button
            type="button"
            id="batch-clear"
            onClick={() => {
              setSelected(new Set());
              setMatching(undefined);
            }}
          >
            Clear selection
          </button>
          {refusal && <span class="gated">{refusal}</span>}
        </div>
      )}
      {confirming && (
        <BatchDialog
          op={op}
          selection={confirming}
          onClose={() => setConfirming(undefined)}
          onStarted={(id) => {
            setConfirming(undefined);
            setSelected(new Set());
            setMatching(undefined);
            location.hash = `#/batches/${encodeURIComponent(id)}`;
          }}
        />
      )}
      {listing && !listing.countedAll && <p class="note">Counts cover the newest {WINDOW} runs.</p>}
      <table class="runs">
        <thead>
          <tr>
            <th scope="col" class="select">
              <input
                type="checkbox"
                id="select-page"
                aria-label="Select every run on this page"
                checked={pageSelected}
                disabled={onPage.length === 0}
                onChange={(e) => toggle(onPage, e.currentTarget.checked)}
              />
            </th>
            <th scope="col">Run</th>
            <th scope="col">Plan</th>
            <th scope="col">Status</th>
            <th scope="col">Waiting on</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
            <th scope="col">Submitted by</th>
          </tr>
        </thead>
        <tbody>
          {listing?.runs.map((r) => (
            <tr key={r.runId} data-run-id={r.runId} class={selected.has(r.runId) ? "selected" : undefined}>
              <td class="select">
                <input
                  type="checkbox"
                  class="select-run"
                  aria-label={`Select run ${r.runId}`}
                  checked={selected.has(r.runId)}
                  onChange={(e) => toggle([r.runId], e.currentTarget.checked)}
                />
              </td>
              <td>
                <a href={`#/runs/${encodeURIComponent(r.runId)}`} class="mono">
                  {r.runId}
                </a>
              </td>
              <td>
                {r.planId}
                <span class="muted">@{r.planVersion}</span>
              </td>
              <td>
                <Badge status={runStatusName(r.status)} extra={substatusName(r.substatus)} />
              </td>
              <td class="waiting">{waitingText(r)}</td>
              <td>{when(r.createdAt)}</td>
              <td>{runDuration(r, now)}</td>
              <td>{r.submittedBy}</td>
            </tr>
          ))}
          {listing && listing.runs.length === 0 && (
            <tr>
              <td colSpan={8} class="empty">
                No runs match.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      <div class="pager">
        <button type="button" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          ← Newer
        </button>
        <span class="muted">page {pages.length}</span>
        <button type="button" disabled={!listing?.next} onClick={() => listing && setPages([...pages, listing.next])}>
          Older →
        </button>
      </div>
    </main>
  );
}
