// The worker runtime's rules, offline: a scripted WorkerService stands in for
// weftd, so each rule is checked exactly (what is reported, with which class
// and code, what a poll asks for) with no clock in the assertions.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import {
  TaskSchema,
  toValue,
  fromValue,
  backoffMs,
  retryPolicy,
  withRetry,
  parseTraceparent,
  type CompleteTaskRequest,
  type FailTaskRequest,
  type PollTasksRequest,
  type ReportVerificationRequest,
  type Task,
  type WeftClient,
} from "../src/index.js";
import {
  ActivityFailure,
  ErrorClass,
  ShutdownTimeoutError,
  Slots,
  TaskAborted,
  TaskType,
  VerifyState,
  SPAN_ACTIVITY,
  Worker,
  classify,
  fail,
  heartbeatEvery,
  atTime,
  sideEffectPossible,
} from "../src/worker/index.js";

type Init = Partial<Omit<Task, "$typeName">>;
const task = (init: Init): Task => create(TaskSchema, { taskType: TaskType.ACTIVITY, taskToken: `tok-${init.taskId ?? "1"}`, ...init });

/** A scripted WorkerService: polls hand out the queued tasks; every report is recorded. */
class FakeWorkers {
  queue: Task[] = [];
  polls: PollTasksRequest[] = [];
  completes: CompleteTaskRequest[] = [];
  /** The traceparent header each report carried ("" when none), in report order. */
  traceparents: string[] = [];
  fails: FailTaskRequest[] = [];
  verifications: ReportVerificationRequest[] = [];
  /** Tasks eager dispatch hands out with the next completion. */
  eager: Task[] = [];
  private waiters: Array<() => void> = [];

  client(): WeftClient {
    const workers = {
      pollTasks: async (req: PollTasksRequest, opts?: { signal?: AbortSignal }) => {
        this.polls.push(req);
        while (this.queue.length === 0) {
          if (opts?.signal?.aborted) throw new ConnectError("canceled", Code.Canceled);
          await new Promise<void>((r) => {
            this.waiters.push(r);
            opts?.signal?.addEventListener("abort", () => r(), { once: true });
          });
        }
        return { tasks: this.queue.splice(0, Math.max(1, req.maxTasks)) };
      },
      completeTask: async (req: CompleteTaskRequest, opts?: { headers?: Record<string, string> }) => {
        this.completes.push(req);
        this.traceparents.push(opts?.headers?.traceparent ?? "");
        this.notify();
        return { duplicate: false, tasks: req.nextTasks ? this.eager.splice(0, 1) : [] };
      },
      failTask: async (req: FailTaskRequest, opts?: { headers?: Record<string, string> }) => {
        this.fails.push(req);
        this.traceparents.push(opts?.headers?.traceparent ?? "");
        this.notify();
        return { duplicate: false, willRetry: false };
      },
      heartbeatTask: async () => ({ cancelRequested: false }),
      reportVerification: async (req: ReportVerificationRequest) => {
        this.verifications.push(req);
        this.notify();
        return { duplicate: false };
      },
    };
    return { workers } as unknown as WeftClient;
  }

  give(...tasks: Task[]): void {
    this.queue.push(...tasks);
    for (const w of this.waiters.splice(0)) w();
  }

  private reported: Array<() => void> = [];
  private notify(): void {
    for (const r of this.reported.splice(0)) r();
  }

  /** Resolves once n reports (of any kind) have been made. */
  async reports(n: number): Promise<void> {
    while (this.completes.length + this.fails.length + this.verifications.length < n) {
      await new Promise<void>((r) => this.reported.push(r));
    }
  }
}

function running(fake: FakeWorkers, register: (w: Worker) => void, opts: ConstructorParameters<typeof Worker>[1] = {}) {
  const w = new Worker(fake.client(), { workerId: "unit", heartbeatIntervalMs: -1, ...opts });
  register(w);
  const done = w.run({ shutdownOn: [] });
  return { w, done };
}

test("classify: an explicit failure wins; else a cancel request is CANCELLED, the deadline TIMEOUT, anything else UNKNOWN", () => {
  const table: Array<[string, unknown, TaskAborted["kind"] | undefined, ErrorClass, string, boolean]> = [
    ["explicit", fail(ErrorClass.VALIDATION, "bad", "bad input"), "deadline", ErrorClass.VALIDATION, "bad", false],
    ["unspecified class", new ActivityFailure(ErrorClass.UNSPECIFIED, "x", "m"), undefined, ErrorClass.UNKNOWN, "x", false],
    ["side effect", sideEffectPossible(new Error("lost")), undefined, ErrorClass.UNKNOWN, "", true],
    ["side effect keeps class", sideEffectPossible(fail(ErrorClass.EXTERNAL, "gw", "gateway")), undefined, ErrorClass.EXTERNAL, "gw", true],
    ["cancel requested", new Error("stopped"), "cancel-requested", ErrorClass.CANCELLED, "cancel_requested", false],
    ["deadline", new Error("slow"), "deadline", ErrorClass.TIMEOUT, "deadline_exceeded", false],
    ["plain error", new Error("boom"), undefined, ErrorClass.UNKNOWN, "", false],
    ["thrown string", "boom", undefined, ErrorClass.UNKNOWN, "", false],
  ];
  for (const [name, err, aborted, cls, code, side] of table) {
    const c = classify(err, aborted);
    assert.deepEqual([c.errorClass, c.code, c.sideEffectPossible], [cls, code, side], name);
  }
});

test("heartbeatEvery: a third of the heartbeat timeout, or the interval when shorter; the interval without one", () => {
  const table: Array<[number, number, number]> = [
    [0, 10000, 10000],
    [0, -1, -1],
    [900, 10000, 300],
    [900, 100, 100],
    [900, -1, 300],
    [30000, 10000, 10000],
  ];
  for (const [hb, interval, want] of table) assert.equal(heartbeatEvery(hb, interval), want, `${hb}/${interval}`);
});

test("backoffMs grows by the multiplier up to the cap, with at most 20% jitter", () => {
  const p = retryPolicy({ initialBackoffMs: 100, maxBackoffMs: 1000, multiplier: 2 });
  assert.deepEqual([1, 2, 3, 4, 5, 9].map((a) => backoffMs(p, a, () => 0)), [100, 200, 400, 800, 1000, 1000]);
  assert.equal(backoffMs(p, 1, () => 0.999999), 100 * (1 + 0.2 * 0.999999));
  assert.deepEqual(retryPolicy({ maxAttempts: 0, multiplier: 0.5 }), { maxAttempts: 4, initialBackoffMs: 100, maxBackoffMs: 2000, multiplier: 2 });
});

test("withRetry repeats the same call on transient faults only, up to maxAttempts", async () => {
  const noSleep = async () => {};
  const faults = [new ConnectError("down", Code.Unavailable), new ConnectError("late", Code.DeadlineExceeded), new TypeError("fetch failed")];
  let calls = 0;
  const answer = await withRetry({ maxAttempts: 4 }, async () => {
    if (calls < faults.length) throw faults[calls++];
    calls++;
    return "ok";
  }, { sleep: noSleep });
  assert.deepEqual([answer, calls], ["ok", 4]);

  calls = 0;
  await assert.rejects(withRetry({}, async () => {
    calls++;
    throw new ConnectError("bad", Code.InvalidArgument);
  }, { sleep: noSleep }));
  assert.equal(calls, 1, "an invalid argument was retried");

  calls = 0;
  await assert.rejects(withRetry({ maxAttempts: 3 }, async () => {
    calls++;
    throw new ConnectError("down", Code.Unavailable);
  }, { sleep: noSleep }));
  assert.equal(calls, 3);
});

test("Slots never hands out more than its capacity, and acquireFree takes every free slot", async () => {
  // A property over random schedules: held ≤ capacity, and an acquisition takes all that is free.
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 200; round++) {
    const cap = 1 + Math.floor(random() * 5);
    const s = new Slots(cap);
    let held = 0;
    const never = new AbortController().signal;
    for (let step = 0; step < 30; step++) {
      if (held < cap && random() < 0.6) {
        const free = cap - held;
        const n = await s.acquireFree(never);
        assert.equal(n, free);
        held += n;
      } else if (held > 0) {
        const n = 1 + Math.floor(random() * held);
        s.release(n);
        held -= n;
      }
      assert.ok(held <= cap && s.available === cap - held);
    }
  }
  const s = new Slots(1);
  await s.acquireFree(new AbortController().signal);
  const ac = new AbortController();
  const waiting = s.acquireFree(ac.signal);
  ac.abort();
  assert.equal(await waiting, 0, "an aborted wait took a slot");
});

test("registration refuses an empty or repeated name, verify without idempotencyKey, and registering after run", async () => {
  const fake = new FakeWorkers();
  const w = new Worker(fake.client(), { workerId: "unit" });
  assert.throws(() => w.activity("", () => 1), /name is empty/);
  w.activity("a", () => 1);
  assert.throws(() => w.activity("a", () => 1), /registered twice/);
  assert.throws(() => w.activity("b", () => 1, { verify: () => ({ state: VerifyState.NOT_COMPLETED }) }), /verify needs idempotencyKey/);
  await assert.rejects(new Worker(fake.client()).run({ shutdownOn: [] }), /nothing registered/);
  const done = w.run({ shutdownOn: [] });
  assert.throws(() => w.activity("c", () => 1), /after run/);
  w.shutdown();
  await done;
  assert.deepEqual(
    fake.polls[0].activities.map((a) => [a.name, a.verifiable]),
    [["a", false]],
  );
});

test("each outcome is reported with its class and code: output, refused input, unrepresentable output, unknown task, verify", async () => {
  const fake = new FakeWorkers();
  const { w, done } = running(fake, (w) => {
    w.activity<{ n: number }, number>("double", (input) => input.n * 2, {
      decode: (v) => {
        if (typeof (v as { n?: unknown })?.n !== "number") throw new Error("n must be a number");
        return v as { n: number };
      },
    });
    w.activity("bigint", () => ({ big: 1n }));
    w.activity<{ order: string }, string>("charge", () => "charged", {
      idempotencyKey: (i) => `key-${i.order}`,
      verify: (key) => ({ state: VerifyState.COMPLETED_WITH_RESULT, result: { verified: key } }),
    });
  });
  fake.give(
    task({ taskId: "ok", activity: "double", input: toValue({ n: 21 }) }),
    task({ taskId: "bad", activity: "double", input: toValue({ n: "x" }) }),
    task({ taskId: "big", activity: "bigint" }),
    task({ taskId: "nope", activity: "unregistered" }),
    task({ taskId: "keyed", activity: "charge", input: toValue({ order: "o1" }) }),
    task({ taskId: "verify", activity: "charge", taskType: TaskType.VERIFY, input: toValue({ order: "o2" }) }),
  );
  await fake.reports(6);
  w.shutdown();
  await done;
  const byToken = (t: string) => [...fake.completes, ...fake.fails, ...fake.verifications].find((r) => r.taskToken === t)!;
  const ok = byToken("tok-ok") as CompleteTaskRequest;
  assert.equal(fromValue(ok.output), 42);
  const bad = byToken("tok-bad") as FailTaskRequest;
  assert.deepEqual([bad.errorClass, bad.code], [ErrorClass.VALIDATION, "invalid_input"]);
  assert.ok(!bad.message.includes('"x"'), "the failure quotes the input");
  const big = byToken("tok-big") as FailTaskRequest;
  assert.deepEqual([big.errorClass, big.code], [ErrorClass.AGENT_ERROR, "invalid_output"]);
  const nope = byToken("tok-nope") as FailTaskRequest;
  assert.deepEqual([nope.errorClass, nope.code], [ErrorClass.AGENT_ERROR, "unsupported_task"]);
  assert.equal((byToken("tok-keyed") as CompleteTaskRequest).reconciliationKey, "key-o1");
  const v = byToken("tok-verify") as ReportVerificationRequest;
  assert.equal(v.state, VerifyState.COMPLETED_WITH_RESULT);
  assert.deepEqual(fromValue(v.result), { verified: "key-o2" }, "verify was not given the key derived from the task's input");
  for (const p of fake.polls) assert.ok(p.maxTasks >= 1 && p.maxTasks <= 4, `a poll asked for ${p.maxTasks}`);
});

test("eager dispatch: a completion asks for one next task and runs it in the same slot; after shutdown it asks for none", async () => {
  const fake = new FakeWorkers();
  const seen: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let lastStarted!: () => void;
  const last = new Promise<void>((r) => (lastStarted = r));
  const { w, done } = running(
    fake,
    (w) =>
      w.activity("step", async (_in: unknown, ctx) => {
        seen.push(ctx.info.taskId);
        if (ctx.info.taskId === "last") {
          lastStarted();
          await gate;
        }
        return ctx.info.taskId;
      }),
    { concurrency: 1 },
  );
  fake.eager.push(task({ taskId: "next", activity: "step" }), task({ taskId: "last", activity: "step" }));
  fake.give(task({ taskId: "first", activity: "step" }));
  await last;
  assert.deepEqual(seen, ["first", "next", "last"]);
  assert.equal(fake.polls.length, 1, "a task handed with a completion was polled for");
  assert.deepEqual([fake.completes[0].nextTasks?.maxTasks, fake.completes[0].nextTasks?.waitMs], [1, 0]);
  w.shutdown();
  release();
  await done;
  assert.equal(fake.completes.length, 3);
  assert.equal(fake.completes[2].nextTasks, undefined, "a completion after shutdown asked for a next task");
});

test("at the shutdown timeout an unfinished task is aborted as abandoned and not reported; run rejects", async () => {
  const fake = new FakeWorkers();
  let reason: unknown;
  let started!: () => void;
  const running_ = new Promise<void>((r) => (started = r));
  const { w, done } = running(
    fake,
    (w) =>
      w.activity("stuck", (_in: unknown, ctx) => {
        started();
        return new Promise((_, reject) =>
          ctx.signal.addEventListener("abort", () => {
            reason = ctx.signal.reason;
            reject(ctx.signal.reason);
          }),
        );
      }),
    { shutdownTimeoutMs: 1 },
  );
  fake.give(task({ taskId: "s", activity: "stuck" }));
  await running_;
  w.shutdown();
  await assert.rejects(done, (e: unknown) => e instanceof ShutdownTimeoutError && e.abandoned === 1);
  assert.ok(reason instanceof TaskAborted && reason.kind === "abandoned");
  assert.equal(fake.completes.length + fake.fails.length, 0, "an abandoned task was reported");
});

test("atTime fires a deadline 30 days ahead at that time, not at once (setTimeout's limit is about 24.8 days)", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  const day = 24 * 3600 * 1000;
  let fired = 0;
  atTime(new Date(30 * day), () => fired++);
  t.mock.timers.tick(1);
  assert.equal(fired, 0, "fired at once");
  t.mock.timers.tick(25 * day);
  assert.equal(fired, 0, "fired at the timer's limit");
  t.mock.timers.tick(5 * day - 2);
  assert.equal(fired, 0, "fired early");
  t.mock.timers.tick(1);
  assert.equal(fired, 1);
  const cancel = atTime(new Date(Date.now() + day), () => fired++);
  cancel();
  t.mock.timers.tick(2 * day);
  assert.equal(fired, 1, "a cancelled deadline fired");
});

test("a traced task's reports carry its traceparent, and its activity sees it; an untraced task's carry none", async () => {
  const fake = new FakeWorkers();
  const seen: string[] = [];
  const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  const { w, done } = running(fake, (w) => {
    w.activity("ok", (_in: unknown, ctx) => {
      seen.push(ctx.info.traceparent);
      return 1;
    });
    w.activity("bad", () => {
      throw fail(ErrorClass.VALIDATION, "no", "refused");
    });
  });
  fake.give(task({ taskId: "1", activity: "ok", traceparent: tp }));
  await fake.reports(1);
  fake.give(task({ taskId: "2", activity: "bad", traceparent: tp }));
  await fake.reports(2);
  fake.give(task({ taskId: "3", activity: "ok" }));
  await fake.reports(3);
  w.shutdown();
  await done;
  assert.deepEqual(seen, [tp, ""]);
  assert.deepEqual(fake.traceparents, [tp, tp, ""]);
});

test("a traced task's activity runs in its own span, the attempt's child: the activity's spans nest below it, its reports carry it, a failure records its class and never its message", async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const fake = new FakeWorkers();
  const traceId = "0af7651916cd43dd8448eb211c80319c";
  const attempt = "b7ad6b7169203331";
  const tp = `00-${traceId}-${attempt}-01`;
  const given: string[] = [];
  try {
    const { w, done } = running(
      fake,
      (w) => {
        w.activity("ok", async (_in: unknown, ctx) => {
          given.push(trace.getSpanContext(ctx.traceContext)?.spanId ?? "");
          await new Promise((r) => setTimeout(r, 1));
          // The activity's own instrumented call: a span under the active context.
          provider.getTracer("app").startSpan("own-call").end();
          return 1;
        });
        w.activity("bad", () => {
          throw fail(ErrorClass.VALIDATION, "no", "refused card 4111-SECRET");
        });
      },
      { tracerProvider: provider },
    );
    fake.give(task({ taskId: "1", runId: "run-1", actionId: "step-a", activity: "ok", logicalAttemptId: 2, engineAttemptId: 3, traceparent: tp }));
    await fake.reports(1);
    fake.give(task({ taskId: "2", runId: "run-1", actionId: "step-b", activity: "bad", traceparent: tp }));
    await fake.reports(2);
    fake.give(task({ taskId: "3", activity: "ok" }));
    await fake.reports(3);
    w.shutdown();
    await done;
  } finally {
    context.disable();
  }
  const spans = exporter.getFinishedSpans();
  const ok = spans.find((s) => s.name === `${SPAN_ACTIVITY} ok`);
  const bad = spans.find((s) => s.name === `${SPAN_ACTIVITY} bad`);
  const own = spans.find((s) => s.name === "own-call" && s.parentSpanContext);
  assert.ok(ok && bad && own, `spans: ${spans.map((s) => s.name).join(", ")}`);
  assert.equal(spans.filter((s) => s.name.startsWith(SPAN_ACTIVITY)).length, 2, "the untraced task started a span");
  for (const s of [ok, bad]) {
    assert.equal(s.spanContext().traceId, traceId);
    assert.equal(s.parentSpanContext?.spanId, attempt, "the activity's span is the attempt's child");
    assert.equal(s.kind, SpanKind.CONSUMER);
  }
  assert.deepEqual(ok.attributes, {
    "weft.run_id": "run-1",
    "weft.step": "step-a",
    "weft.activity": "ok",
    "weft.attempt": 2,
    "weft.engine_attempt": 3,
    "weft.task_kind": "TASK_TYPE_ACTIVITY",
    "weft.worker_id": "unit",
    "weft.outcome": "completed",
  });
  assert.equal(own.parentSpanContext?.spanId, ok.spanContext().spanId, "the activity's own call is not under its span");
  assert.deepEqual(given, [ok.spanContext().spanId, ""], "ctx.traceContext carries the activity's span (none for the untraced task)");
  assert.equal(bad.attributes["weft.outcome"], "failed");
  assert.equal(bad.attributes["weft.error_class"], "ERROR_CLASS_VALIDATION");
  assert.deepEqual(bad.status, { code: SpanStatusCode.ERROR, message: "ERROR_CLASS_VALIDATION" });
  assert.ok(!JSON.stringify([bad.attributes, bad.status, bad.events]).includes("SECRET"), "the failure's message is in its span");
  // Reports go under the activity's span, so weftd's spans of them nest below it.
  assert.deepEqual(fake.traceparents, [`00-${traceId}-${ok.spanContext().spanId}-01`, `00-${traceId}-${bad.spanContext().spanId}-01`, ""]);
});

test("parseTraceparent takes W3C's form only", () => {
  const sc = parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  assert.deepEqual(sc, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1, isRemote: true });
  assert.equal(parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00")?.traceFlags, 0);
  for (const bad of [
    "",
    "00-00000000000000000000000000000000-b7ad6b7169203331-01", // zero trace id
    "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", // zero span id
    "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", // version ff
    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x", // version 00 has four fields
    "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", // upper case
    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01",
  ]) {
    assert.equal(parseTraceparent(bad), undefined, bad);
  }
});
