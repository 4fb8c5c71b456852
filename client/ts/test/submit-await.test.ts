// submitAndAwait: SubmitRun with start and awaitMs answers a run that ends
// within the wait in one call, falls back to AwaitRun for one still going,
// and sends every field of the caller's request (without modifying it).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { create, ScalarType } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import {
  createWeftClient,
  fromValue,
  newSignalId,
  RunStatus,
  SubmitRunRequestSchema,
  toValue,
  type WeftClient,
  type SubmitRunInit,
} from "../src/index.js";
import { awaitingCopy } from "../src/runs.js";
import { startWeftd } from "./support/weftd.js";

// A weftd of its own (embedded, temp dir, free port), unless WEFT_URL names one.
const own = process.env.WEFT_URL ? undefined : await startWeftd();
const baseUrl = process.env.WEFT_URL ?? own!.url;
after(async () => {
  if (own) assert.equal(await own.stop(), 0, "weftd did not exit 0 on SIGTERM");
});

const unique = (prefix: string) => `${prefix}.${newSignalId().slice(0, 8)}`;

/** A client that counts its calls by method name and resolves `submitted` once SubmitRun has answered. */
function countingClient(transport: "connect" | "grpc-web") {
  const calls = new Map<string, number>();
  let answered!: () => void;
  const submitted = new Promise<void>((res) => (answered = res));
  const count: Interceptor = (next) => async (req) => {
    calls.set(req.method.name, (calls.get(req.method.name) ?? 0) + 1);
    const res = await next(req);
    if (req.method.name === "SubmitRun") answered();
    return res;
  };
  const weft = createWeftClient({ baseUrl, transport, interceptors: [count] });
  return { weft, calls: (name: string) => calls.get(name) ?? 0, submitted };
}

/** A one-task run's request; the task is handed to whoever polls `activity`. */
function oneTask(activity: string, fields: Pick<SubmitRunInit, "runRequestId" | "input" | "awaitMs"> = {}): SubmitRunInit {
  return { definition: { planId: "tssubmitawait", planVersion: "1", actions: [{ id: "work", order: 1, activity }] }, ...fields };
}

/** Polls the task of `activity` and completes it with `output`, once `after` resolves. */
async function completeTask(weft: WeftClient, activity: string, output: string, after: Promise<void> = Promise.resolve()) {
  await after;
  const { tasks } = await weft.workers.pollTasks({ workerId: "ts-submit-await", activities: [{ name: activity }], waitMs: 5000 });
  assert.equal(tasks.length, 1, `no task of ${activity} was handed out`);
  await weft.workers.completeTask({ taskToken: tasks[0].taskToken, workerId: "ts-submit-await", output: toValue(output) });
}

test("awaitingCopy carries every field of the request", () => {
  const req = create(SubmitRunRequestSchema) as Record<string, unknown>;
  for (const field of SubmitRunRequestSchema.fields) {
    if (field.fieldKind === "message") req[field.localName] = create(field.message);
    else if (field.fieldKind === "map") req[field.localName] = { k: {} };
    else if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING) req[field.localName] = "x";
    else if (field.fieldKind === "scalar" && field.scalar === ScalarType.BOOL) req[field.localName] = true;
    else if (field.fieldKind === "scalar" && field.scalar === ScalarType.UINT32) req[field.localName] = 7;
    else assert.fail(`field ${field.name}: teach this test (and awaitingCopy) its kind`);
  }
  const copy = awaitingCopy(req as SubmitRunInit) as Record<string, unknown>;
  for (const field of SubmitRunRequestSchema.fields) {
    assert.equal(copy[field.localName], req[field.localName], `field ${field.name} is copied`);
  }
  assert.equal(awaitingCopy({}).start, true, "start is set");
  assert.equal(awaitingCopy({}).awaitMs, 20000, "SubmitRun waits 20 s unless the request says");
  assert.equal(awaitingCopy({}, 500).awaitMs, 500, "nor longer than the caller's timeout");
});

for (const transport of ["connect", "grpc-web"] as const) {
  test(`submitAndAwait answers the terminal run in one call (${transport})`, async () => {
    const { weft, calls } = countingClient(transport);
    const activity = unique("tssubmitawait");
    const req = oneTask(activity, { runRequestId: unique("one-call"), input: toValue({ n: 1 }) });
    const [done] = await Promise.all([weft.submitAndAwait(req), completeTask(weft, activity, "once")]);
    assert.equal(done.status, RunStatus.COMPLETED);
    assert.equal(fromValue(done.steps[0]?.output), "once");
    assert.deepEqual(fromValue(done.input), { n: 1 }, "the request's input was sent");
    assert.equal(req.start, undefined, "the caller's request is not modified");
    assert.equal(req.awaitMs, undefined);
    assert.equal(calls("SubmitRun"), 1);
    assert.equal(calls("AwaitRun"), 0, "no second call");
  });

  test(`submitAndAwait awaits a run still going when the submission answers (${transport})`, async () => {
    const { weft, calls, submitted } = countingClient(transport);
    const activity = unique("tssubmitawait");
    const req = oneTask(activity, { awaitMs: 1 });
    // The task is completed only after SubmitRun answered: the run is still going then.
    const [done] = await Promise.all([weft.submitAndAwait(req), completeTask(weft, activity, "later", submitted)]);
    assert.equal(done.status, RunStatus.COMPLETED);
    assert.equal(fromValue(done.steps[0]?.output), "later");
    assert.equal(calls("SubmitRun"), 1);
    assert.ok(calls("AwaitRun") > 0, "awaited after the submission answered");
  });
}

test("submitAndAwait repeated with the same runRequestId answers the same terminal run", async () => {
  const weft = createWeftClient({ baseUrl });
  const activity = unique("tssubmitawait");
  const req = oneTask(activity, { runRequestId: unique("repeat") });
  const [first] = await Promise.all([weft.submitAndAwait(req), completeTask(weft, activity, "first")]);
  const again = await weft.submitAndAwait(req);
  assert.equal(again.runId, first.runId);
  assert.equal(again.status, RunStatus.COMPLETED);
  assert.equal(fromValue(again.steps[0]?.output), "first");
});

test("submitAndAwait gives up after timeoutMs with the run still going", async () => {
  const weft = createWeftClient({ baseUrl });
  const activity = unique("tssubmitawait");
  await assert.rejects(weft.submitAndAwait(oneTask(activity), { timeoutMs: 200 }), /still (QUEUED|RUNNING) after 200 ms/);
  for await (const run of weft.listRuns({ planId: "tssubmitawait", statuses: [RunStatus.QUEUED, RunStatus.RUNNING] })) {
    await weft.runs.cancelRun({ runId: run.runId, reason: "test over" });
  }
});

// A client's defaultTimeoutMs bounds ordinary calls, not the waits weftd holds
// open: a long poll cut short would lose a submission without runRequestId
// (it is not retried) and fail an await that was going to succeed.
const sleepMs = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));
// The submitting and working side of these runs is another client, with the
// default timeouts: SubmitRun and CompleteTask are ordinary calls, and 300 ms is
// not a bound a loaded machine keeps; only the awaiting client carries the short
// defaultTimeoutMs under test.
const worker = createWeftClient({ baseUrl });

test("submitAndAwait outlasts a defaultTimeoutMs shorter than the run", async () => {
  const weft = createWeftClient({ baseUrl, defaultTimeoutMs: 300 });
  const activity = unique("tssubmitawait");
  const [done] = await Promise.all([weft.submitAndAwait(oneTask(activity)), completeTask(worker, activity, "slow", sleepMs(1200))]);
  assert.equal(done.status, RunStatus.COMPLETED);
  assert.equal(fromValue(done.steps[0]?.output), "slow");
});

test("awaitRun outlasts a defaultTimeoutMs shorter than the run", async () => {
  const weft = createWeftClient({ baseUrl, defaultTimeoutMs: 300 });
  const activity = unique("tssubmitawait");
  const { run } = await worker.runs.submitRun({ ...oneTask(activity), start: true });
  const [done] = await Promise.all([weft.awaitRun(run!.runId), completeTask(worker, activity, "slow", sleepMs(1200))]);
  assert.equal(done.status, RunStatus.COMPLETED);
});

test("watchEvents outlasts a defaultTimeoutMs shorter than the run", async () => {
  const weft = createWeftClient({ baseUrl, defaultTimeoutMs: 300 });
  const activity = unique("tssubmitawait");
  const { run } = await worker.runs.submitRun({ ...oneTask(activity), start: true });
  const types: string[] = [];
  const watched = (async () => {
    for await (const ev of weft.watchEvents(run!.runId, { retry: { maxAttempts: 1 } })) types.push(ev.eventType);
  })();
  await completeTask(worker, activity, "slow", sleepMs(1200));
  await watched;
  assert.equal(types.at(-1), "RunCompleted", "the one stream lasted until the run ended");
});
