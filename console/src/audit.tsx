// The audit log (#/audit, admin only): every mutating call, allowed or
// denied — who and how they authenticated, what, on which target, when, the
// outcome and the correlation id; never a payload (ListAuditEvents).
import { useEffect, useState } from "preact/hooks";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AuditEvent, ListAuditEventsRequestSchema } from "../../client/ts/src/gen/weft/v1/audit_pb";
import { api, faultOf, type Fault } from "./api";
import { can, why } from "./me";
import { FaultView } from "./ui";
import { when } from "./format";

const PAGE = 50;

/** The outcomes offered as a filter; any Connect code may appear in the log. */
const OUTCOMES = ["ok", "permission_denied", "invalid_argument", "not_found", "failed_precondition", "already_exists", "unavailable", "resource_exhausted"];

interface Filters {
  principal: string;
  procedure: string;
  target: string;
  outcome: string;
  since: string; // datetime-local, or ""
  until: string;
}

const none: Filters = { principal: "", procedure: "", target: "", outcome: "", since: "", until: "" };

function request(f: Filters, pageToken: string): MessageInitShape<typeof ListAuditEventsRequestSchema> {
  const r: MessageInitShape<typeof ListAuditEventsRequestSchema> = {
    principal: f.principal.trim(),
    procedure: f.procedure.trim(),
    target: f.target.trim(),
    outcome: f.outcome,
    pageSize: PAGE,
    pageToken,
  };
  if (f.since) r.since = timestampFromMs(new Date(f.since).getTime());
  if (f.until) r.until = timestampFromMs(new Date(f.until).getTime());
  return r;
}

/** short names a procedure as Service.Method ("/weft.v1.RunService/CancelRun" → RunService.CancelRun). */
const short = (p: string) => p.replace(/^\/weft\.v1\./, "").replace("/", ".");

function Target({ target }: { target: string }) {
  const run = /^run:(.+)$/.exec(target);
  if (run) return <a href={`#/runs/${encodeURIComponent(run[1])}`} class="mono">{target}</a>;
  return <span class="mono">{target || "—"}</span>;
}

export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(none);
  const [filters, setFilters] = useState<Filters>(none);
  const [pages, setPages] = useState<string[]>([""]);
  const [events, setEvents] = useState<AuditEvent[] | undefined>();
  const [next, setNext] = useState("");
  const [fault, setFault] = useState<Fault | undefined>();
  const token = pages[pages.length - 1];
  useEffect(() => {
    if (!can("audit.read")) return;
    let live = true;
    api.audit.listAuditEvents(request(filters, token)).then(
      (res) => {
        if (!live) return;
        setEvents(res.events);
        setNext(res.nextPageToken);
        setFault(undefined);
      },
      (e) => live && setFault(faultOf(e)),
    );
    return () => {
      live = false;
    };
  }, [filters, token]);
  if (!can("audit.read"))
    return (
      <main class="page">
        <h1>Audit log</h1>
        <p class="gated" id="audit-gated">The audit log is for admins: it {why("audit.read")}.</p>
      </main>
    );
  const set = (k: keyof Filters) => (e: Event) => setDraft({ ...draft, [k]: (e.currentTarget as HTMLInputElement).value });
  const apply = (f: Filters) => {
    setFilters(f);
    setPages([""]);
  };
  return (
    <main class="page audit">
      <h1>Audit log</h1>
      <p class="muted">Every call that changes something, allowed or denied, newest first. Records name their target, never a payload.</p>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          Principal
          <input id="a-principal" value={draft.principal} onInput={set("principal")} placeholder="alice" />
        </label>
        <label>
          Procedure
          <input id="a-procedure" value={draft.procedure} onInput={set("procedure")} placeholder="/weft.v1.RunService/CancelRun" />
        </label>
        <label>
          Target
          <input id="a-target" value={draft.target} onInput={set("target")} placeholder="run:… or schedule:…" />
        </label>
        <label>
          Outcome
          <select id="a-outcome" value={draft.outcome} onChange={set("outcome")}>
            <option value="">any</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <label>
          Since
          <input id="a-since" type="datetime-local" value={draft.since} onInput={set("since")} />
        </label>
        <label>
          Until
          <input id="a-until" type="datetime-local" value={draft.until} onInput={set("until")} />
        </label>
        <button type="submit" class="primary" id="a-apply">
          Apply
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft(none);
            apply(none);
          }}
        >
          Clear
        </button>
      </form>
      {fault && <FaultView fault={fault} />}
      <table class="runs audit-log" id="audit-table">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Principal</th>
            <th scope="col">Signed in with</th>
            <th scope="col">Call</th>
            <th scope="col">Permission</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
            <th scope="col">Correlation id</th>
          </tr>
        </thead>
        <tbody>
          {(events ?? []).map((e) => (
            <tr key={e.id} data-procedure={e.procedure} data-outcome={e.outcome}>
              <td class="nowrap">{when(e.time)}</td>
              <td>{e.principal}</td>
              <td>{e.authMethod}</td>
              <td class="mono" title={e.procedure}>
                {short(e.procedure)}
              </td>
              <td class="mono">{e.permission}</td>
              <td>
                <Target target={e.target} />
              </td>
              <td>
                <span class={`badge ${e.outcome === "ok" ? "s-completed" : "s-failed"}`}>{e.outcome}</span>
              </td>
              <td class="mono">{e.correlationId}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {events && events.length === 0 && <p class="note">No record matches.</p>}
      <div class="pager">
        <button type="button" id="a-newer" disabled={pages.length === 1} onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
        <button type="button" id="a-older" disabled={!next} onClick={() => setPages([...pages, next])}>
          Older
        </button>
      </div>
    </main>
  );
}
