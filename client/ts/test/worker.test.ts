// The worker runtime against a real weftd (embedded store, temp dir, free
// port) started here: multi-step workflows run to completion by TS workers,
// including a retry, a signal, a heartbeat timeout (a worker frozen with
// SIGSTOP), a verify-based reconciliation after a worker is killed
// (SIGKILL), a drain on SIGTERM, a cancellation through AbortSignal, and
// reports retried with the same task token after a lost answer.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import {
  AttemptOutcome,
  createWeftClient,
  fromValue,
  newSignalId,
  RunStatus,
  StepStatus,
  toValue,
  type WeftClient,
  type Run,
} from "../src/index.js";
import { ErrorClass, fail, rateLimited, Worker, VerifyState, TaskAborted, type WorkerOptions } from "../src/worker/index.js";
import { startWeftd, until, type Weftd } from "./support/weftd.js";
import { childEnv } from "./support/env.js";

let weftd: Weftd;
let weft: WeftClient;

before(async () => {
  weftd = await startWeftd();
  weft = createWeftClient({ baseUrl: weftd.url });
});

after(async () => {
  assert.equal(await weftd.stop(), 0, "weftd did not exit 0 on SIGTERM");
});

/** A fresh activity-name prefix, so that tests never take each other's tasks. */
const unique = (prefix: string) => `${prefix}-${newSignalId().slice(0, 8)}`;

/** Starts a worker on weft and answers it with a stop function that requires a clean drain. */
function startWorker(register: (w: Worker) => void, options: WorkerOptions = {}, client: WeftClient = weft) {
  const w = new Worker(client, { pollWaitMs: 1000, heartbeatIntervalMs: 200, ...options });
  register(w);
  const running = w.run({ shutdownOn: [] });
  return {
    worker: w,
    async stop() {
      w.shutdown();
      await running;
    },
  };
}

function step(run: Run, actionId: string) {
  const s = run.steps.find((x) => x.actionId === actionId);
  assert.ok(s, `the run has no step ${actionId}`);
  return s;
}

test("a TS worker runs a multi-step YAML workflow to completion: a retried step, a signal, upstream outputs", async () => {
  const a = unique("multi");
  let reserveCalls = 0;
  const { stop } = startWorker((w) => {
    w.activity<{ sku: string; quantity: number }, { reservation: string }>(`${a}.reserve`, (input, ctx) => {
      reserveCalls++;
      if (ctx.info.engineAttempt === 1) throw fail(ErrorClass.TRANSIENT, "stock_busy", "the stock service is busy");
      return { reservation: `RES-${input.sku}-${input.quantity}` };
    });
    w.activity(`${a}.ship`, (_input: unknown, ctx) => {
      const reserve = ctx.info.upstreamOutputs["reserve"] as { reservation: string };
      const runInput = ctx.info.runInput as { customer: string };
      return { shipped: reserve.reservation, to: runInput.customer };
    });
  });
  try {
    const yaml = `
metadata: {name: ts-multi, version: "1"}
spec:
  steps:
    - name: reserve
      activity: ${a}.reserve
      input: {sku: W-1, quantity: 2}
      retryPolicy: {maxRetries: 2, backoff: constant, initialDelay: 10ms}
    - name: confirmed
      dependsOn: [reserve]
      waitForSignal: payment-confirmed
    - name: ship
      activity: ${a}.ship
      dependsOn: [reserve, confirmed]
`;
    const { run } = await weft.submit(yaml, { input: { customer: "ada" } });
    // Watch the run's events until the signal step waits, then signal it.
    const seen: string[] = [];
    for await (const ev of weft.watchEvents(run.runId)) {
      seen.push(ev.eventType);
      if (ev.eventType === "StepWaiting" && ev.stepId === "confirmed") break;
    }
    assert.equal(seen.filter((t) => t === "StepAttemptRecorded").length, 2, `not one failed and one retried attempt among ${seen}`);
    const sig = await weft.signalRun({ runId: run.runId, signalName: "payment-confirmed", payload: { reference: "PAY-42" } });
    assert.equal(sig.duplicate, false);
    const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.COMPLETED, done.message);
    assert.equal(reserveCalls, 2, "reserve ran once more after its transient failure");
    const reserve = step(done, "reserve");
    assert.deepEqual(
      reserve.attempts.map((x) => x.outcome),
      [AttemptOutcome.FAILED, AttemptOutcome.SUCCEEDED],
    );
    assert.equal(reserve.attempts[0].error?.errorClass, ErrorClass.TRANSIENT);
    assert.equal(reserve.attempts[0].error?.code, "stock_busy");
    assert.deepEqual(fromValue(step(done, "ship").output), { shipped: "RES-W-1-2", to: "ada" });
  } finally {
    await stop();
  }
});

test("a worker never runs more tasks at once than its concurrency", async () => {
  const a = unique("conc");
  let inFlight = 0;
  let most = 0;
  const gate: Array<() => void> = [];
  const { stop } = startWorker(
    (w) =>
      w.activity(a, async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise<void>((r) => gate.push(r));
        inFlight--;
        return "ok";
      }),
    { concurrency: 2 },
  );
  try {
    const runs = await Promise.all(
      Array.from({ length: 5 }, () => weft.submit({ planId: "ts-conc", planVersion: "1", actions: [{ id: "work", order: 1, activity: a }] })),
    );
    await until("two tasks in flight at once", async () => gate.length === 2);
    for (let released = 0; released < 5; released++) {
      await until("a task waiting at the gate", async () => gate.length > 0);
      assert.ok(inFlight <= 2, `${inFlight} tasks in flight with concurrency 2`);
      gate.shift()!();
    }
    for (const { run } of runs) assert.equal((await weft.awaitRun(run.runId, { timeoutMs: 30000 })).status, RunStatus.COMPLETED);
    assert.equal(most, 2, "the worker did not use both slots");
  } finally {
    await stop();
  }
});

test("cancelling a run aborts the running activity's AbortSignal and reports CANCELLED", async () => {
  const a = unique("cancel");
  let reason: unknown;
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const { stop } = startWorker((w) =>
    w.activity(a, (_in: unknown, ctx) => {
      started();
      return new Promise((_, reject) =>
        ctx.signal.addEventListener("abort", () => {
          reason = ctx.signal.reason;
          reject(ctx.signal.reason);
        }),
      );
    }),
  );
  try {
    const { run } = await weft.submit({ planId: "ts-cancel", planVersion: "1", actions: [{ id: "work", order: 1, activity: a }] });
    await running;
    await weft.runs.cancelRun({ runId: run.runId, reason: "test" });
    const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.CANCELLED);
    await until("the activity's signal to abort", async () => reason !== undefined);
    assert.ok(reason instanceof TaskAborted, `abort reason ${reason}`);
    assert.equal(reason.kind, "cancel-requested");
  } finally {
    await stop();
  }
});

test("a completion whose answer is lost is retried with the same task token and answered as a duplicate", async () => {
  const a = unique("lost");
  const completions: string[] = [];
  let dropped = false;
  // A fetch that delivers the first CompleteTask to weftd, then loses its answer.
  const lossy: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    const body = Buffer.from(await req.clone().arrayBuffer()).toString("base64");
    const res = await fetch(req);
    if (req.url.endsWith("/weft.v1.WorkerService/CompleteTask")) {
      completions.push(body);
      if (!dropped) {
        dropped = true;
        await res.arrayBuffer();
        throw new TypeError("fetch failed: the connection was reset");
      }
    }
    return res;
  };
  const client = createWeftClient({ baseUrl: weftd.url, fetch: lossy });
  const logged: Array<Record<string, unknown>> = [];
  const logger = (_level: string, msg: string, fields: Record<string, unknown>) => logged.push({ msg, ...fields });
  const { stop } = startWorker((w) => w.activity(a, () => "once"), { retry: { initialBackoffMs: 10 }, logger }, client);
  try {
    const { run } = await weft.submit({ planId: "ts-lost", planVersion: "1", actions: [{ id: "work", order: 1, activity: a }] });
    const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.COMPLETED);
    // The run completed with the first (lost) answer; the retry follows it.
    await until("the completion to be retried", async () => completions.length >= 2);
    assert.equal(completions.length, 2, "the completion was retried more than once");
    await until("the retried completion's answer", async () => logged.some((l) => l.msg === "task completed"));
    assert.deepEqual(
      logged.filter((l) => l.msg === "task completed").map((l) => l.duplicate),
      [true],
      "the retry was not answered as a duplicate",
    );
    assert.equal(completions[0], completions[1], "the retry sent a different request (task token)");
    assert.equal(step(done, "work").attempts.length, 1, "the lost answer caused a second attempt");
  } finally {
    await stop();
  }
});

// --- a worker in its own process -----------------------------------------

const here = dirname(fileURLToPath(import.meta.url));

/** A child worker process (fixtures/child-worker.ts) and the JSON lines it printed. */
interface Child {
  proc: ChildProcess;
  lines: Array<Record<string, unknown>>;
  waitFor(what: string, pred: (l: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function spawnChild(env: Record<string, string>): Child {
  const proc = spawn(process.execPath, [join(here, "fixtures", "child-worker.mjs")], {
    stdio: ["ignore", "pipe", "inherit"],
    env: childEnv({ WEFT_URL: weftd.url, ...env }),
  });
  const lines: Array<Record<string, unknown>> = [];
  createInterface({ input: proc.stdout! }).on("line", (l) => {
    try {
      lines.push(JSON.parse(l));
    } catch {
      // not ours
    }
  });
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  return {
    proc,
    lines,
    exited,
    waitFor: (what, pred) =>
      until(() => `the child worker to print ${what} (it printed ${JSON.stringify(lines)})`, async () => lines.find(pred)),
  };
}

test("a worker frozen past its heartbeat timeout loses the task: another worker's attempt completes the step from its last heartbeat details", async () => {
  const a = unique("frozen");
  const child = spawnChild({ WORKER_ID: "frozen-child", ACTIVITY: a, MODE: "hang", DETAILS: JSON.stringify({ page: 3 }) });
  try {
    const { run } = await weft.submit({
      planId: "ts-frozen",
      planVersion: "1",
      actions: [{ id: "charge", order: 1, activity: a, heartbeatTimeoutMs: 600, retry: { maxAttempts: 3, initialBackoffMs: 10 } }],
    });
    await child.waitFor("started", (l) => l.started === "charge");
    child.proc.kill("SIGSTOP"); // no more heartbeats
    const { stop } = startWorker(
      (w) => w.activity(a, (_input: unknown, ctx) => ({ receipt: "second-worker", resumedFrom: ctx.info.heartbeatDetails ?? null })),
      { workerId: "rescuer" },
    );
    try {
      const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
      assert.equal(done.status, RunStatus.COMPLETED, done.message);
      const s = step(done, "charge");
      assert.deepEqual(fromValue(s.output), { receipt: "second-worker", resumedFrom: { page: 3 } });
      assert.equal(s.attempts[0].outcome, AttemptOutcome.TIMED_OUT);
      assert.equal(s.attempts[0].workerId, "frozen-child");
      assert.equal(s.attempts.at(-1)?.workerId, "rescuer");
    } finally {
      await stop();
    }
    // Thawed, the frozen worker learns from its next heartbeat that the claim is gone.
    child.proc.kill("SIGCONT");
    const aborted = await child.waitFor("aborted", (l) => "aborted" in l);
    assert.ok(aborted.aborted === "claim-lost" || aborted.aborted === "cancel-requested", `aborted: ${aborted.aborted}`);
  } finally {
    child.proc.kill("SIGCONT");
    child.proc.kill("SIGKILL");
    await child.exited;
  }
});

test("rateLimited's retryAfterMs is the next attempt's recorded due time when longer than the backoff", async () => {
  const a = unique("limited");
  let failedAfter = 0;
  const { stop } = startWorker((w) =>
    w.activity(a, () => {
      failedAfter = Math.floor(Date.now()); // the API answers milliseconds
      throw rateLimited("the bank answered 429", 3_600_000);
    }),
  );
  try {
    const { run } = await weft.submit({
      planId: "ts-limited",
      planVersion: "1",
      actions: [{ id: "pay", order: 1, activity: a, retry: { maxAttempts: 3, initialBackoffMs: 1 } }],
    });
    const failed = await until("the first attempt to fail", async () => {
      const r = await weft.runs.getRun({ runId: run.runId });
      return r.run && step(r.run, "pay").attempts.length === 1 ? r.run : undefined;
    });
    const s = step(failed, "pay");
    assert.equal(s.attempts[0].error?.errorClass, ErrorClass.RATE_LIMIT);
    assert.ok(s.nextAttemptAt, "a retry is due");
    const due = Number(s.nextAttemptAt.seconds) * 1000 + Math.floor(s.nextAttemptAt.nanos / 1e6);
    assert.ok(due >= failedAfter + 3_600_000, `next attempt due ${due}, the failure was reported after ${failedAfter}`);
  } finally {
    await stop();
  }
});

test("after a worker is killed mid-task, verify reconciles the step from the side effect without running the activity again", async () => {
  const a = unique("killed");
  const ledger = mkdtempSync(join(tmpdir(), "ts-ledger-"));
  const orderId = unique("order");
  const child = spawnChild({ WORKER_ID: "doomed-child", ACTIVITY: a, MODE: "effect-then-hang", LEDGER: ledger });
  try {
    const { run } = await weft.submit({
      planId: "ts-killed",
      planVersion: "1",
      actions: [
        {
          id: "charge",
          order: 1,
          activity: a,
          heartbeatTimeoutMs: 600,
          retry: { maxAttempts: 3, initialBackoffMs: 10 },
          input: toValue({ orderId, cents: 4200 }),
        },
      ],
    });
    await child.waitFor("the side effect", (l) => l.effect === orderId);
    child.proc.kill("SIGKILL");
    assert.equal(await child.exited, null, "the child was not killed");
    let activityRuns = 0;
    const verified: string[] = [];
    const { stop } = startWorker(
      (w) =>
        w.activity<{ orderId: string; cents: number }, { receipt: string }>(
          a,
          () => {
            activityRuns++;
            return { receipt: "charged-twice" };
          },
          {
            idempotencyKey: (input) => input.orderId,
            verify: (key) => {
              verified.push(key);
              return { state: VerifyState.COMPLETED_WITH_RESULT, result: JSON.parse(readFileSync(join(ledger, key), "utf8")) };
            },
          },
        ),
      { workerId: "reconciler" },
    );
    try {
      const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
      assert.equal(done.status, RunStatus.COMPLETED, done.message);
      assert.deepEqual(verified, [orderId], "verify was not asked about the killed worker's key");
      assert.equal(activityRuns, 0, "the activity ran again after its side effect happened");
      const s = step(done, "charge");
      assert.equal(s.status, StepStatus.SUCCEEDED);
      assert.deepEqual(fromValue(s.output), { receipt: `R-${orderId}` });
      assert.deepEqual(
        s.attempts.map((x) => [x.workerId, x.outcome]),
        [["doomed-child", AttemptOutcome.TIMED_OUT]],
        "the step was not completed from the killed attempt's verification",
      );
      const { events } = await weft.events.listEvents({ runId: run.runId });
      assert.ok(events.some((e) => e.eventType === "StepVerified" && e.stepId === "charge"), "no StepVerified event");
    } finally {
      await stop();
    }
  } finally {
    child.proc.kill("SIGKILL");
    rmSync(ledger, { recursive: true, force: true });
  }
});

test("SIGTERM drains: the worker process finishes its in-flight task, reports it, and exits 0", async () => {
  const a = unique("drain");
  const child = spawnChild({ WORKER_ID: "draining-child", ACTIVITY: a, MODE: "finish-on-sigterm" });
  try {
    const { run } = await weft.submit({ planId: "ts-drain", planVersion: "1", actions: [{ id: "work", order: 1, activity: a }] });
    await child.waitFor("started", (l) => l.started === "work");
    child.proc.kill("SIGTERM");
    assert.equal(await child.exited, 0, `child output: ${JSON.stringify(child.lines)}`);
    assert.ok(child.lines.some((l) => l.stopped === "clean"));
    const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.COMPLETED, done.message);
    assert.deepEqual(fromValue(step(done, "work").output), { receipt: "drained" });
    assert.equal(step(done, "work").attempts.length, 1);
  } finally {
    child.proc.kill("SIGKILL");
  }
});

test("an activity run for an item of a fan-out reads its item and index from ctx.info (docs/semantics.md#for-each)", async () => {
  const a = unique("fan");
  const seen: Record<string, { item: unknown; index: number; isItem: boolean }> = {};
  const { stop } = startWorker((w) =>
    w.activity(a, (_input: unknown, ctx) => {
      seen[ctx.info.actionId] = { item: ctx.info.item, index: ctx.info.index, isItem: ctx.info.isItem };
      return ctx.info.index * 10;
    }),
  );
  try {
    const { run } = await weft.submit({
      planId: "ts-fan",
      planVersion: "1",
      actions: [
        { id: "first", order: 1, activity: a },
        { id: "lines", order: 2, activity: a, forEach: `["a", {"sku": "b"}]`, maxConcurrency: 1 },
      ],
    });
    const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.COMPLETED);
    assert.deepEqual(seen["first"], { item: undefined, index: 0, isItem: false });
    assert.deepEqual(seen["lines[0]"], { item: "a", index: 0, isItem: true });
    assert.deepEqual(seen["lines[1]"], { item: { sku: "b" }, index: 1, isItem: true });
    assert.equal(step(done, "lines[1]").parentStep, "lines");
    assert.equal(step(done, "lines").fanOut?.succeeded, 2);
  } finally {
    await stop();
  }
});
