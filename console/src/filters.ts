// The runs list's filters: as the form holds them, as ListRuns takes them,
// as a saved view stores them, and as one query of the run query language
// (for a batch over every run that matches).
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ListRunsRequestSchema } from "../../client/ts/src/gen/weft/v1/run_pb";
import type { View, ViewFiltersSchema } from "../../client/ts/src/gen/weft/v1/view_pb";
import { ms, runStatusName } from "./format";

/** The filters as the form holds them. */
export interface Filters {
  status: string; // a RunStatus number, or "" for any
  plan: string;
  after: string; // datetime-local, or ""
  before: string;
  search: string;
  query: string; // the run query language (docs/semantics.md#run-queries)
}

export const noFilters: Filters = { status: "", plan: "", after: "", before: "", search: "", query: "" };

/** request answers ListRuns' filters; withStatus false leaves the status out (for the counts). */
export function request(f: Filters, withStatus: boolean): MessageInitShape<typeof ListRunsRequestSchema> {
  const r: MessageInitShape<typeof ListRunsRequestSchema> = {};
  if (withStatus && f.status) r.statuses = [Number(f.status)];
  if (f.plan.trim()) r.planId = f.plan.trim();
  if (f.search.trim()) r.runIdContains = f.search.trim();
  if (f.after) r.createdAfter = timestampFromMs(new Date(f.after).getTime());
  if (f.before) r.createdBefore = timestampFromMs(new Date(f.before).getTime());
  if (f.query.trim()) r.query = f.query.trim();
  return r;
}

/** localInput formats a time for a datetime-local input, in the browser's time zone. */
function localInput(t: number): string {
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** viewFilters answers what a saved view keeps of the filters besides the query. */
export function viewFilters(f: Filters): MessageInitShape<typeof ViewFiltersSchema> {
  const r = request({ ...f, query: "" }, true);
  return { statuses: r.statuses ?? [], planId: r.planId ?? "", createdAfter: r.createdAfter, createdBefore: r.createdBefore, runIdContains: r.runIdContains ?? "" };
}

/** filtersOf answers the form's filters of a saved view. */
export function filtersOf(v: View): Filters {
  const f = v.filters;
  const after = ms(f?.createdAfter);
  const before = ms(f?.createdBefore);
  return {
    status: f && f.statuses.length > 0 ? String(f.statuses[0]) : "",
    plan: f?.planId ?? "",
    after: after === undefined ? "" : localInput(after),
    before: before === undefined ? "" : localInput(before),
    search: f?.runIdContains ?? "",
    query: v.query,
  };
}

/** The filters as one query of the run query language, or why they cannot be. */
export type Matching = { query: string } | { refused: string };

/**
 * matchingQuery joins the filters into one query selecting the same runs as
 * the list, for a batch over all of them: the query in parentheses, and each
 * other filter as a condition. The run id search has no such condition.
 */
export function matchingQuery(f: Filters): Matching {
  if (f.search.trim()) return { refused: "the run id search cannot be part of a query: clear it, or select the runs by hand" };
  const terms: string[] = [];
  if (f.query.trim()) terms.push(`(${f.query.trim()})`);
  if (f.status) terms.push(`status = "${runStatusName(Number(f.status))}"`);
  if (f.plan.trim()) terms.push(`plan = "${f.plan.trim()}"`);
  if (f.after) terms.push(`createdAt >= "${new Date(f.after).toISOString()}"`);
  if (f.before) terms.push(`createdAt < "${new Date(f.before).toISOString()}"`);
  if (terms.length === 0) return { refused: "set a filter or a query first: a batch over every run of the tenant is the CLI's" };
  return { query: terms.join(" AND ") };
}

/** filtersSummary says what a view keeps, in words. */
export function filtersSummary(f: Filters): string {
  const parts: string[] = [];
  if (f.query.trim()) parts.push(`query ${f.query.trim()}`);
  if (f.status) parts.push(`status ${runStatusName(Number(f.status))}`);
  if (f.plan.trim()) parts.push(`plan ${f.plan.trim()}`);
  if (f.after) parts.push(`created after ${new Date(f.after).toLocaleString()}`);
  if (f.before) parts.push(`created before ${new Date(f.before).toLocaleString()}`);
  if (f.search.trim()) parts.push(`run id contains ${f.search.trim()}`);
  return parts.length > 0 ? parts.join(" · ") : "every run (no filter)";
}
