// A forEach step's group (console/src/fanout.ts), as node:test cases: the
// items of its current list in index order, each counted in the state
// FanOutProgress counts it in, and pages of a filter; the event log's step
// filter and its newest 500 (console/src/logfilter.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { FanOutProgressSchema, RunSchema, StepStatus, type Step } from "../../client/ts/src/gen/weft/v1/run_pb";
import { EventSchema } from "../../client/ts/src/gen/weft/v1/event_pb";
import { countStates, itemState, itemsOf, pageOf, progressText, topSteps } from "../src/fanout";
import { ALL_STEPS, EVENT_LOG_SHOWN, ITEMS_OF, shownEvents } from "../src/logfilter";

const item = (parent: string, i: number, status = StepStatus.PENDING) => ({ actionId: `${parent}[${i}]`, parentStep: parent, itemIndex: i, status });

test("a fan-out's items are its current list's, in index order, whatever GetRun's order", () => {
  const run = create(RunSchema, {
    steps: [
      { actionId: "ship", status: StepStatus.RUNNING, fanOut: { items: 3 } },
      item("ship", 2), item("ship", 0), item("ship", 3), item("ship", 1), item("other", 0),
      { actionId: "after" },
    ],
  });
  assert.deepEqual(itemsOf(run, "ship").map((s) => s.actionId), ["ship[0]", "ship[1]", "ship[2]"], "ship[3] is of an earlier, longer list");
  assert.deepEqual(topSteps(run).map((s) => s.actionId), ["ship", "after"]);
});

test("an item is counted as FanOutProgress counts it: skipped as cancelled, anything dispatched and not ended in flight", () => {
  const cases: [StepStatus, string][] = [
    [StepStatus.PENDING, "pending"], [StepStatus.SCHEDULED, "inFlight"], [StepStatus.RUNNING, "inFlight"],
    [StepStatus.SUCCEEDED, "succeeded"], [StepStatus.FAILED, "failed"], [StepStatus.CANCELLED, "cancelled"], [StepStatus.SKIPPED, "cancelled"],
  ];
  for (const [status, want] of cases) assert.equal(itemState(create(RunSchema, { steps: [item("s", 0, status)] }).steps[0]), want, StepStatus[status]);
});

test("a filter's pages hold 50 items each, the last page the rest, a page past the end the last one", () => {
  const steps = create(RunSchema, {
    steps: Array.from({ length: 1000 }, (_, i) => item("s", i, i < 10 ? StepStatus.SCHEDULED : i === 500 ? StepStatus.FAILED : StepStatus.PENDING)),
  }).steps as Step[];
  assert.deepEqual(countStates(steps), { succeeded: 0, inFlight: 10, failed: 1, pending: 989, cancelled: 0 });
  const p = pageOf(steps, "all", 1);
  assert.deepEqual([p.items[0].actionId, p.items.length, p.from, p.to, p.pages], ["s[50]", 50, 51, 100, 20]);
  const last = pageOf(steps, "pending", 99);
  assert.deepEqual([last.page, last.pages, last.from, last.to, last.items.at(-1)?.actionId], [19, 20, 951, 989, "s[999]"]);
  assert.deepEqual(pageOf(steps, "failed", 0).items.map((s) => s.actionId), ["s[500]"]);
  const none = pageOf(steps, "cancelled", 3);
  assert.deepEqual([none.items.length, none.page, none.pages, none.from, none.to], [0, 0, 1, 0, 0]);
});

test("the progress line says each count and the limit, cancelled only when some are", () => {
  const f = create(FanOutProgressSchema, { items: 30, maxConcurrency: 5, succeeded: 16, inFlight: 0, failed: 1, pending: 13 });
  assert.equal(progressText(f), "16 of 30 succeeded · 0 in flight · 1 failed · 13 pending · at most 5 at once");
  f.cancelled = 2;
  assert.match(progressText(f), /13 pending · 2 cancelled · at most 5 at once$/);
});

test("the event log keeps one step's events, or a forEach step's items', and shows the newest 500 unless all", () => {
  const events = Array.from({ length: 1200 }, (_, i) =>
    create(EventSchema, { runSeq: BigInt(i + 1), stepId: i === 0 ? "ship" : i % 3 === 0 ? "after" : `ship[${i}]` }),
  );
  const items = shownEvents(events, `${ITEMS_OF}ship`, false);
  assert.equal(items.kept.length, 800);
  assert.equal(items.shown.length, EVENT_LOG_SHOWN);
  assert.equal(items.shown.at(-1)?.runSeq, 1200n, "the newest");
  assert.ok(items.shown.every((e) => e.stepId.startsWith("ship[")));
  assert.deepEqual(shownEvents(events, "ship", false).shown.map((e) => e.runSeq), [1n], "the step, not its items");
  assert.equal(shownEvents(events, ALL_STEPS, true).shown.length, 1200);
  assert.equal(shownEvents(events, ALL_STEPS, false).shown[0].runSeq, 701n);
});
