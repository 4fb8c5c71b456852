// The runs list's filters as one query (a batch over every matching run),
// and a refused query placed at its column.
import { test } from "node:test";
import assert from "node:assert/strict";
import { matchingQuery, noFilters, viewFilters, filtersOf } from "../src/filters.js";
import { queryProblem } from "../src/query.js";
import type { Fault } from "../src/api.js";
import { create } from "@bufbuild/protobuf";
import { ViewSchema } from "../../client/ts/src/gen/weft/v1/view_pb.js";
import { RunStatus } from "../../client/ts/src/gen/weft/v1/run_pb.js";

test("matchingQuery joins the query and every other filter into one query, and refuses what a query cannot say", () => {
  const cases: [Partial<typeof noFilters>, string | RegExp][] = [
    [{ query: 'customer = "acme" OR customer = "beta"' }, '(customer = "acme" OR customer = "beta")'],
    [{ status: String(RunStatus.FAILED), plan: "payments" }, 'status = "FAILED" AND plan = "payments"'],
    [{ query: "failedStep = \"charge\"", status: String(RunStatus.BLOCKED) }, '(failedStep = "charge") AND status = "BLOCKED"'],
    [{ after: "2026-11-28T10:00", before: "2026-11-29T10:00" }, /^createdAt >= "2026-11-2\dT\d\d:00:00\.000Z" AND createdAt < "2026-11-2\dT\d\d:00:00\.000Z"$/],
    [{ search: "run-01", plan: "p" }, /^refused: the run id search cannot be part of a query/],
    [{}, /^refused: set a filter or a query first/],
  ];
  for (const [f, want] of cases) {
    const m = matchingQuery({ ...noFilters, ...f });
    const got = "query" in m ? m.query : `refused: ${m.refused}`;
    if (typeof want === "string") assert.equal(got, want);
    else assert.match(got, want);
  }
});

test("a view keeps the filters and gives them back", () => {
  const f = { ...noFilters, status: String(RunStatus.CANCELLED), plan: "sweep", after: "2026-11-28T10:30", search: "run-", query: 'plan = "x"' };
  const v = create(ViewSchema, { name: "v", query: f.query, filters: viewFilters(f) });
  assert.deepEqual(filtersOf(v), f);
  assert.deepEqual(filtersOf(create(ViewSchema, { name: "empty" })), noFilters);
});

const fault = (code: string, message: string, violations: string[] = []): Fault => ({ code, message, violations, correlationId: "", unauthenticated: false, notFound: false });

test("queryProblem places a refused query at the column weftd names, and leaves other faults alone", () => {
  const syntax = fault("INVALID_ARGUMENT", "invalid query: expected a value after '=' at column 29, found the end", ["query: query.syntax (expected a value after '=' at column 29, found the end)"]);
  assert.deepEqual(queryProblem(syntax, true), { column: 29, message: syntax.message });
  assert.equal(queryProblem(syntax, false), undefined, "no query was sent");
  const twice = fault("INVALID_ARGUMENT", "invalid query: unknown field 'stauts' at column 1: query: unknown field 'stauts' at column 1", ["query: query.syntax (unknown field 'stauts' at column 1)"]);
  assert.deepEqual(queryProblem(twice, true), { column: 1, message: "invalid query: unknown field 'stauts' at column 1" }, "said once");
  const unserved = fault("FAILED_PRECONDITION", "run queries and search attributes are not served by this server yet");
  assert.deepEqual(queryProblem(unserved, true), { message: unserved.message });
  assert.equal(queryProblem(fault("INVALID_ARGUMENT", "invalid request", ["plan_id: string.max_len"]), true), undefined, "another field's refusal");
  assert.equal(queryProblem(fault("UNAVAILABLE", "weftd is restarting"), true), undefined);
});
