// The typed client (createWeftClient) against a real weftd (started here, or WEFT_URL): a
// one-step workflow run through WorkerService to COMPLETED, typed faults
// (InvalidArgument, NotFound, IllegalTransition) and idempotent signals.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { Code } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  createWeftClient,
  fromValue,
  isTerminal,
  newSignalId,
  RunStatus,
  StepStatus,
  toValue,
  waitForRun,
  awaitRun,
  WeftError,
  type WeftClient,
  type WeftClientOptions,
} from "../src/index.js";
import { startWeftd } from "./support/weftd.js";

// A weftd of its own (embedded, temp dir, free port), unless WEFT_URL names one.
const own = process.env.WEFT_URL ? undefined : await startWeftd();
const baseUrl = process.env.WEFT_URL ?? own!.url;
after(async () => {
  if (own) assert.equal(await own.stop(), 0, "weftd did not exit 0 on SIGTERM");
});

const transports: Record<string, () => WeftClientOptions> = {
  connect: () => ({ baseUrl, transport: "connect" }),
  "grpc-web": () => ({ baseUrl, transport: "grpc-web" }),
  "grpc (connect-node)": () => ({ transport: createGrpcTransport({ baseUrl, idleConnectionTimeoutMs: 200 }) }),
};

const unique = (prefix: string) => `${prefix}.${newSignalId().slice(0, 8)}`;

async function rejection(p: Promise<unknown>): Promise<WeftError> {
  return p.then(
    () => assert.fail("the call succeeded"),
    (e: unknown) => {
      assert.ok(e instanceof WeftError, `not a WeftError: ${e}`);
      return e;
    },
  );
}

/** Runs a one-action workflow to COMPLETED through WorkerService and answers its run id. */
async function runToCompletion(weft: WeftClient, output = "done"): Promise<string> {
  const activity = unique("tsclient");
  const { run } = await weft.runs.submitRun({
    definition: { planId: "tsclient", planVersion: "1", actions: [{ id: "work", order: 1, activity }] },
    start: true,
    input: toValue({ hello: "world" }),
  });
  assert.ok(run?.runId, "SubmitRun answered no run id");
  const { tasks } = await weft.workers.pollTasks({ workerId: "ts-worker", activities: [{ name: activity }], waitMs: 5000 });
  assert.equal(tasks.length, 1, `no task of ${activity} was handed out`);
  const [task] = tasks;
  assert.equal(task.runId, run.runId);
  assert.equal(task.actionId, "work");
  assert.deepEqual(fromValue(task.runInput), { hello: "world" });
  const done = await weft.workers.completeTask({ taskToken: task.taskToken, workerId: "ts-worker", output: toValue(output) });
  assert.equal(done.duplicate, false);
  return run.runId;
}

for (const [name, options] of Object.entries(transports)) {
  test(`a one-step workflow submitted with start runs to COMPLETED through WorkerService (${name})`, async () => {
    const weft = createWeftClient(options());
    const runId = await runToCompletion(weft, name);
    const run = await waitForRun(weft.runs, runId, { timeoutMs: 10000 });
    assert.equal(run.status, RunStatus.COMPLETED);
    assert.ok(isTerminal(run.status));
    assert.equal(run.steps[0]?.status, StepStatus.SUCCEEDED);
    assert.equal(fromValue(run.steps[0]?.output), name);
  });

  test(`awaitRun answers the run as soon as it is terminal (${name})`, async () => {
    const weft = createWeftClient(options());
    const activity = unique("tsawait");
    const { run } = await weft.runs.submitRun({
      definition: { planId: "tsclient", planVersion: "1", actions: [{ id: "work", order: 1, activity }] },
      start: true,
    });
    assert.ok(run?.runId);
    const waiting = awaitRun(weft.runs, run.runId, { timeoutMs: 10000 });
    const { tasks } = await weft.workers.pollTasks({ workerId: "ts-worker", activities: [{ name: activity }], waitMs: 5000 });
    assert.equal(tasks.length, 1);
    await weft.workers.completeTask({ taskToken: tasks[0].taskToken, workerId: "ts-worker", output: toValue("awaited") });
    const done = await waiting;
    assert.equal(done.status, RunStatus.COMPLETED);
    assert.equal(fromValue(done.steps[0]?.output), "awaited");
    const early = await weft.runs.awaitRun({ runId: run.runId, waitMs: 0 });
    assert.equal(early.run?.status, RunStatus.COMPLETED, "a terminal run is answered at once");
  });
}

test("an invalid request rejects with WeftError InvalidArgument naming the field and rule", async () => {
  const weft = createWeftClient({ baseUrl });
  const err = await rejection(weft.runs.getRun({ runId: "" }));
  assert.equal(err.code, "InvalidArgument");
  assert.equal(err.connectCode, Code.InvalidArgument);
  assert.deepEqual(
    err.violations.map((v) => [v.field, v.ruleId]),
    [["run_id", "string.min_len"]],
  );
  assert.match(err.correlationId ?? "", /^[0-9a-f-]{36}$/);
  assert.ok(err instanceof Error);
});

test("a run that does not exist rejects with WeftError NotFound", async () => {
  const weft = createWeftClient({ baseUrl });
  const err = await rejection(weft.runs.getRun({ runId: unique("no-such-run") }));
  assert.equal(err.code, "NotFound");
  assert.equal(err.connectCode, Code.NotFound);
  assert.match(err.correlationId ?? "", /^[0-9a-f-]{36}$/);
  assert.deepEqual(err.violations, []);
});

test("cancelling a completed run rejects with WeftError IllegalTransition", async () => {
  const weft = createWeftClient({ baseUrl });
  const runId = await runToCompletion(weft);
  await waitForRun(weft.runs, runId, { timeoutMs: 10000 });
  const err = await rejection(weft.runs.cancelRun({ runId, reason: "too late" }));
  assert.equal(err.code, "IllegalTransition");
  assert.equal(err.connectCode, Code.Aborted);
  assert.equal(err.fault?.runId, runId);
  assert.equal(err.fault?.runStatus, RunStatus.COMPLETED);
});

test("a signal sent twice with the same signalId answers the same accepted result", async () => {
  const weft = createWeftClient({ baseUrl });
  const signalName = unique("approve");
  const { run } = await weft.runs.submitRun({
    definition: {
      planId: "tsclient",
      planVersion: "1",
      actions: [
        { id: "first", order: 1, waitForSignal: { signalName } },
        { id: "second", order: 2, waitForSignal: { signalName } },
      ],
    },
  });
  assert.ok(run);
  // Started separately: SubmitRun with start races the engine for a run that
  // blocks at once ("cannot go BLOCKED -> QUEUED", seen 2 in 25 at 7462a37).
  await weft.runs.startRun({ runId: run.runId });
  const signalId = newSignalId();
  const first = await weft.signalRun({ runId: run.runId, signalName, signalId, payload: { ok: true } });
  const again = await weft.signalRun({ runId: run.runId, signalName, signalId, payload: { ok: true } });
  assert.equal(first.duplicate, false);
  assert.equal(again.duplicate, true);
  assert.ok(first.result?.accepted);
  assert.equal(first.result?.signalId, signalId);
  assert.deepEqual(again.result, first.result);
  // Without a signalId the helper makes one: a second signal, for the second step.
  const other = await weft.signalRun({ runId: run.runId, signalName, payload: 1 });
  assert.notEqual(other.result?.signalId, signalId);
  assert.match(other.result?.signalId ?? "", /^[0-9a-f-]{36}$/);
  const done = await waitForRun(weft.runs, run.runId, { timeoutMs: 10000 });
  assert.equal(done.status, RunStatus.COMPLETED);
  assert.deepEqual(fromValue(done.steps[0]?.output), { ok: true });
  assert.equal(fromValue(done.steps[1]?.output), 1);
});

test("a definition stored in the registry is run by reference to COMPLETED, and another body under its version is refused", async () => {
  const weft = createWeftClient({ baseUrl });
  const planId = unique("tsregistry");
  const activity = unique("tsregistry.work");
  const definition = { planId, planVersion: "1", actions: [{ id: "work", order: 1, activity }] };
  const put = await weft.definitions.putDefinition({ definition });
  assert.equal(put.existing, false);
  assert.equal(put.version?.latest, true);
  assert.equal((await weft.definitions.putDefinition({ definition })).existing, true, "the same body again is existing");
  const conflict = await rejection(weft.definitions.putDefinition({ definition: { ...definition, actions: [{ id: "other", order: 1, activity }] } }));
  assert.match(conflict.message, new RegExp(`plan ${planId.replace(".", "\\.")} version 1 is already stored`));
  const { versions } = await weft.definitions.listDefinitions({ planId });
  assert.deepEqual(versions.map((v) => v.planVersion), ["1"]);

  const { run } = await weft.runs.submitRun({ definitionRef: { planId }, start: true });
  assert.equal(run?.planVersion, "1");
  const { tasks } = await weft.workers.pollTasks({ workerId: "ts-worker", activities: [{ name: activity }], waitMs: 5000 });
  assert.equal(tasks.length, 1);
  await weft.workers.completeTask({ taskToken: tasks[0].taskToken, workerId: "ts-worker", output: toValue("ok") });
  assert.equal((await weft.awaitRun(run!.runId)).status, RunStatus.COMPLETED);
});
