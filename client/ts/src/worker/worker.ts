// The worker runtime: registered activities and compensations, a long poll
// with a concurrency limit, heartbeats, reports retried on transient faults,
// verify tasks, eager dispatch and graceful shutdown.
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ROOT_CONTEXT, context, type Context, type Tracer, type TracerProvider } from "@opentelemetry/api";
import { ValueSchema, timestampDate, type Value } from "@bufbuild/protobuf/wkt";
import type { WeftClient } from "../client.js";
import { ErrorClass, type SecretRef } from "../gen/weft/v1/common_pb.js";
import { VerifyState } from "../gen/weft/v1/event_pb.js";
import {
  PollTasksRequestSchema,
  TaskType,
  type PollTasksRequest,
  type Task,
} from "../gen/weft/v1/worker_pb.js";
import { toWeftError } from "../errors.js";
import { withRetry, sleep, type RetryPolicy } from "../retry.js";
import { fromValue } from "../values.js";
import {
  ActivityFailure,
  MAX_CODE_CHARS,
  MAX_MESSAGE_CHARS,
  TaskAborted,
  classify,
  messageOf,
  truncate,
  retryAfterMs,
  type AbortKind,
  type Classified,
} from "./failure.js";
import { Slots } from "./slots.js";
import { startActivitySpan, workerTracer, type ActivitySpan } from "./tracing.js";

/** A log sink; lines never carry payloads. */
export interface WorkerLogger {
  (level: "debug" | "info" | "warn" | "error", msg: string, fields: Record<string, unknown>): void;
}

/** Options of a {@link Worker}. Unset fields take the defaults below. */
export interface WorkerOptions {
  /** The queue polled (default "default"). */
  queue?: string;
  /** Identifies this process in attempt evidence (default host-pid). */
  workerId?: string;
  /** The most tasks in flight at once (default 4). */
  concurrency?: number;
  /** How long one long poll waits for a task, in ms (default 20000, at most 60000). */
  pollWaitMs?: number;
  /**
   * How often a task without a heartbeat timeout heartbeats, which is how it
   * learns of a cancellation (default 10000; negative: never). Tasks with a
   * heartbeat timeout heartbeat at a third of it, or at this interval when
   * that is shorter.
   */
  heartbeatIntervalMs?: number;
  /** How long in-flight tasks may finish after shutdown begins before they are abandoned (default 30000). */
  shutdownTimeoutMs?: number;
  /** How reports (complete, fail, verification) are retried on transient faults, always with the same task token. */
  retry?: RetryPolicy;
  /** Receives the worker's log lines (default: none). */
  logger?: WorkerLogger;
  /**
   * Makes the span of each traced task's activity, a child of the attempt's
   * span in the run's trace (docs/observability.md). Default: the global
   * provider of @opentelemetry/api, which records nothing until an
   * OpenTelemetry SDK is registered.
   */
  tracerProvider?: TracerProvider;
}

/** The defaults of {@link WorkerOptions}, as the Go worker's. */
export const WORKER_DEFAULTS = Object.freeze({
  queue: "default",
  concurrency: 4,
  pollWaitMs: 20000,
  maxPollWaitMs: 60000,
  heartbeatIntervalMs: 10000,
  shutdownTimeoutMs: 30000,
  maxPollBackoffMs: 5000,
});

/** What an activity knows about the task it runs. */
export interface ActivityInfo {
  /** ACTIVITY, COMPENSATION or VERIFY. */
  readonly taskType: TaskType;
  /** The task's id (stable across the claims of one attempt). */
  readonly taskId: string;
  /** The run. */
  readonly runId: string;
  /** The action. */
  readonly actionId: string;
  /** The tenant. */
  readonly tenantId: string;
  /** The activity or compensation operation name. */
  readonly activity: string;
  /** The scheduled operation's id, stable for the logical attempt. */
  readonly operationId: string;
  /** Weft's idempotency key for the action, stable across retries: pass it to external systems. */
  readonly idempotencyKey: string;
  /** Starts at 1 and grows on RetryStep. */
  readonly logicalAttempt: number;
  /** Starts at 1 within the logical attempt and grows on every automatic retry. */
  readonly engineAttempt: number;
  /** When the attempt times out, if weftd gave a deadline. */
  readonly deadline: Date | undefined;
  /** The run's input as JSON (undefined when none). */
  readonly runInput: JsonValue | undefined;
  /** The outputs of the actions this one depends on, by action id, as JSON. */
  readonly upstreamOutputs: Readonly<Record<string, JsonValue | undefined>>;
  /** The secret references the worker resolves. */
  readonly secrets: readonly SecretRef[];
  /** This worker's id. */
  readonly workerId: string;
  /**
   * The W3C traceparent of the attempt's span in the run's trace ("" when
   * the run is not traced); the worker starts the activity's span as its
   * child (ActivityContext.traceContext).
   */
  readonly traceparent: string;
  /**
   * The details of the last heartbeat an earlier engine attempt of this
   * logical attempt sent (undefined: none did), so a retried activity can
   * resume (docs/semantics.md#heartbeat-details).
   */
  readonly heartbeatDetails: JsonValue | undefined;
  /**
   * For an item of a fan-out (docs/semantics.md#for-each): the list's
   * element the item runs with, as JSON (undefined for any other task);
   * `actionId` is then the step's id and `[index]`.
   */
  readonly item: JsonValue | undefined;
  /** For an item of a fan-out: its position in the list, from 0. */
  readonly index: number;
  /** Whether the task is an item of a fan-out. */
  readonly isItem: boolean;
}

/** The second argument of every activity, compensation and verify function. */
export interface ActivityContext {
  /** The task. */
  readonly info: ActivityInfo;
  /**
   * Sends a heartbeat now with `details` as the activity's progress (JSON;
   * undefined sends none and keeps those sent before). weftd keeps the
   * latest; when the attempt fails or times out, the next attempt reads them
   * as `info.heartbeatDetails`. The worker's periodic heartbeats go on
   * meanwhile. It rejects when the heartbeat was not delivered (the details
   * go again with the next periodic one).
   */
  heartbeat(details?: JsonValue): Promise<void>;
  /**
   * Aborted when the task must stop: its deadline passed, weftd asked (the run
   * was cancelled), the claim was lost, or the worker abandoned it at the
   * shutdown timeout. Its `reason` is a {@link TaskAborted}. Pass it to fetch
   * and other cancellable calls.
   */
  readonly signal: AbortSignal;
  /**
   * The OpenTelemetry context carrying the activity's span ("weft.activity
   * <name>", in the run's trace; ROOT_CONTEXT when the run is not traced).
   * The activity also runs inside it, so with an SDK's context manager
   * registered its instrumented HTTP and database calls join the trace on
   * their own; pass it where a call takes a context explicitly.
   */
  readonly traceContext: Context;
}

/** An activity: takes the task's input (decoded JSON) and answers its output (encoded as JSON). */
export type ActivityFn<In, Out> = (input: In, ctx: ActivityContext) => Out | Promise<Out>;

/** What a verify function found. */
export interface VerifyResult {
  /** NOT_COMPLETED, COMPLETED_WITH_RESULT, COMPLETED_RESULT_UNAVAILABLE or INDETERMINATE. */
  state: VerifyState;
  /** The activity's output, for COMPLETED_WITH_RESULT (encoded as JSON). */
  result?: unknown;
  /** Explains the state, without payloads. */
  diagnostic?: string;
}

/** Options of one activity. */
export interface ActivityOptions<In> {
  /**
   * Checks and converts the input (decoded JSON) into In; a throw fails the
   * task with class VALIDATION (code "invalid_input"). Default: the JSON as is.
   */
  decode?: (input: unknown) => In;
  /**
   * Derives the activity's own idempotency key from its input. Together with
   * `verify` it makes the activity verifiable: the key is reported with every
   * result as reconciliation_key, and handed back to `verify` (derived again
   * from the verify task's input when the attempt's worker died before reporting).
   */
  idempotencyKey?: (input: In) => string;
  /**
   * Tells whether the side effect identified by an idempotency key happened.
   * When an attempt may have left one behind (it timed out, its worker died,
   * or it failed with sideEffectPossible), weftd sends a verify task before
   * any retry, and what this answers decides: COMPLETED_WITH_RESULT completes
   * the step with `result` without running the activity again. Needs
   * `idempotencyKey`.
   */
  verify?: (key: string, ctx: ActivityContext) => VerifyResult | Promise<VerifyResult>;
}

/** Options of {@link Worker.run}. */
export interface RunOptions {
  /** Shuts the worker down gracefully when it aborts. */
  signal?: AbortSignal;
  /**
   * Process signals that shut the worker down gracefully while it runs
   * (default SIGTERM and SIGINT in Node; [] for none).
   */
  shutdownOn?: readonly string[];
}

/** ShutdownTimeoutError: tasks were still running at the shutdown timeout and were abandoned unreported. */
export class ShutdownTimeoutError extends Error {
  override readonly name = "ShutdownTimeoutError";
  /** How many tasks were abandoned. */
  readonly abandoned: number;
  constructor(abandoned: number) {
    super(`worker: ${abandoned} task(s) still running at the shutdown timeout were abandoned; their claims will time out`);
    this.abandoned = abandoned;
  }
}

interface Handler {
  name: string;
  verifiable: boolean;
  /** Runs the function; answers the JSON output (undefined: none) and the reconciliation key. */
  run(input: Value | undefined, ctx: ActivityContext): Promise<{ output: JsonValue | undefined; key: string }>;
  verify?: (key: string, ctx: ActivityContext) => VerifyResult | Promise<VerifyResult>;
  /** Derives the reconciliation key from a task's input (verifiable activities). */
  keyOf?: (input: Value | undefined) => string;
}

/** The outcome of running a handler. */
type Outcome = { ok: true; output: JsonValue | undefined; key: string } | { ok: false; err: unknown; key: string };

/**
 * Worker runs registered activities and compensations for a weftd. Register
 * everything, then call {@link run}; it polls until {@link shutdown} (or a
 * SIGTERM), then drains. The behaviour matches the Go worker (client/worker):
 * polls ask for at most as many tasks as there are free slots; a completion
 * also asks for the next task (eager dispatch) and runs it in the same slot;
 * an activity's AbortSignal ends at the task's deadline and when a heartbeat
 * answers cancel_requested or the claim is lost; reports are retried on
 * transient faults with the same task token; at shutdown nothing is reported
 * as failed: tasks still running at the shutdown timeout are abandoned and
 * their claims time out on the server.
 */
export class Worker {
  private readonly client: WeftClient;
  private readonly opts: Required<Omit<WorkerOptions, "logger" | "retry" | "tracerProvider">> & { retry: RetryPolicy };
  private readonly tracer: Tracer;
  private readonly log: WorkerLogger;
  private readonly activities = new Map<string, Handler>();
  private readonly compensations = new Map<string, Handler>();
  private started = false;
  private stopping = false;
  private readonly stop = new AbortController();
  private readonly abandon = new AbortController();

  constructor(client: WeftClient, options: WorkerOptions = {}) {
    this.client = client;
    this.opts = {
      queue: options.queue || WORKER_DEFAULTS.queue,
      workerId: options.workerId || defaultWorkerId(),
      concurrency: options.concurrency && options.concurrency > 0 ? Math.floor(options.concurrency) : WORKER_DEFAULTS.concurrency,
      pollWaitMs: Math.min(options.pollWaitMs && options.pollWaitMs > 0 ? options.pollWaitMs : WORKER_DEFAULTS.pollWaitMs, WORKER_DEFAULTS.maxPollWaitMs),
      heartbeatIntervalMs: options.heartbeatIntervalMs || WORKER_DEFAULTS.heartbeatIntervalMs,
      shutdownTimeoutMs: options.shutdownTimeoutMs && options.shutdownTimeoutMs > 0 ? options.shutdownTimeoutMs : WORKER_DEFAULTS.shutdownTimeoutMs,
      retry: options.retry ?? {},
    };
    this.tracer = workerTracer(options.tracerProvider);
    const logger = options.logger;
    this.log = (level, msg, fields) => logger?.(level, msg, { worker_id: this.opts.workerId, ...fields });
  }

  /** The worker's id. */
  get id(): string {
    return this.opts.workerId;
  }

  /**
   * activity registers an activity by name. It throws when the name is empty
   * or taken, when called after run, or when `verify` comes without
   * `idempotencyKey` (programming errors).
   */
  activity<In = unknown, Out = unknown>(name: string, fn: ActivityFn<In, Out>, options: ActivityOptions<In> = {}): this {
    if (options.verify && !options.idempotencyKey) {
      throw new TypeError(`worker: activity ${JSON.stringify(name)}: verify needs idempotencyKey`);
    }
    const decode = options.decode ?? ((v: unknown) => v as In);
    this.add(this.activities, "activity", {
      name,
      verifiable: options.verify !== undefined,
      verify: options.verify,
      keyOf: options.idempotencyKey ? (input) => options.idempotencyKey!(decodeInput(input, decode)) : undefined,
      async run(input, ctx) {
        const value = decodeInput(input, decode);
        const key = options.idempotencyKey ? options.idempotencyKey(value) : "";
        try {
          return { output: encodeOutput(await fn(value, ctx)), key };
        } catch (e) {
          throw new KeyedError(e, key);
        }
      },
    });
    return this;
  }

  /**
   * compensation registers a compensation operation by name (the operation of
   * an action's compensation hook); `ctx.info.actionId` names the action being
   * rolled back.
   */
  compensation<In = unknown>(operation: string, fn: (input: In, ctx: ActivityContext) => void | Promise<void>, options: { decode?: (input: unknown) => In } = {}): this {
    const decode = options.decode ?? ((v: unknown) => v as In);
    this.add(this.compensations, "compensation", {
      name: operation,
      verifiable: false,
      async run(input, ctx) {
        await fn(decodeInput(input, decode), ctx);
        return { output: undefined, key: "" };
      },
    });
    return this;
  }

  private add(into: Map<string, Handler>, kind: string, h: Handler): void {
    if (this.started) throw new Error(`worker: ${kind} ${JSON.stringify(h.name)} registered after run`);
    if (!h.name) throw new TypeError(`worker: ${kind} name is empty`);
    if (into.has(h.name)) throw new Error(`worker: ${kind} ${JSON.stringify(h.name)} registered twice`);
    into.set(h.name, h);
  }

  /**
   * shutdown begins a graceful shutdown: polling stops (a poll in flight is
   * cancelled) and run resolves once in-flight tasks have finished and
   * reported, or rejects with ShutdownTimeoutError after shutdownTimeoutMs.
   */
  shutdown(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.log("info", "worker shutting down", {});
    this.stop.abort(new Error("worker shutting down"));
  }

  /** The PollTasks request with the registrations, sorted by name. */
  private pollRequest(maxTasks: number, waitMs: number): PollTasksRequest {
    const activities = [...this.activities.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((h) => ({ name: h.name, verifiable: h.verifiable }));
    return create(PollTasksRequestSchema, {
      workerId: this.opts.workerId,
      queue: this.opts.queue,
      activities,
      compensations: [...this.compensations.keys()].sort(),
      maxTasks,
      waitMs,
    });
  }

  /**
   * run polls and runs tasks until shutdown (by {@link shutdown}, its signal,
   * or a process signal), then drains in-flight tasks. It resolves after a
   * clean shutdown and rejects with ShutdownTimeoutError when tasks had to be
   * abandoned.
   */
  async run(options: RunOptions = {}): Promise<void> {
    if (this.started) throw new Error("worker: run called twice");
    if (this.activities.size === 0 && this.compensations.size === 0) throw new Error("worker: nothing registered");
    this.started = true;
    const detach = this.attachShutdown(options);
    const slots = new Slots(this.opts.concurrency);
    const inflight = new Set<Promise<void>>();
    this.log("info", "worker started", { queue: this.opts.queue, concurrency: this.opts.concurrency });
    let failures = 0;
    try {
      while (!this.stopping) {
        const n = await slots.acquireFree(this.stop.signal);
        if (n === 0) break;
        let tasks: Task[];
        try {
          const req = this.pollRequest(n, this.opts.pollWaitMs);
          ({ tasks } = await this.client.workers.pollTasks(req, { signal: this.stop.signal, timeoutMs: this.opts.pollWaitMs + 15000 }));
        } catch (e) {
          slots.release(n);
          if (this.stopping) break;
          failures++;
          this.log("warn", "poll failed", { code: toWeftError(e).code });
          const wait = Math.min(failures * 200, WORKER_DEFAULTS.maxPollBackoffMs);
          await sleep(wait, this.stop.signal).catch(() => undefined);
          continue;
        }
        failures = 0;
        slots.release(n - tasks.length);
        for (const t of tasks) {
          const p = this.runSlot(t).finally(() => {
            slots.release(1);
            inflight.delete(p);
          });
          inflight.add(p);
        }
      }
      return await this.drain(inflight);
    } finally {
      detach();
    }
  }

  private attachShutdown(options: RunOptions): () => void {
    const onAbort = () => this.shutdown();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) this.shutdown();
    const proc = (globalThis as { process?: SignalSource }).process;
    const signals = options.shutdownOn ?? (proc?.once ? ["SIGTERM", "SIGINT"] : []);
    const onSignal = (sig: string) => {
      this.log("info", "signal received; draining", { signal: sig });
      this.shutdown();
    };
    for (const s of signals) proc?.once(s, onSignal);
    return () => {
      options.signal?.removeEventListener("abort", onAbort);
      for (const s of signals) proc?.removeListener(s, onSignal);
    };
  }

  /** drain waits for in-flight tasks up to the shutdown timeout, then abandons them. */
  private async drain(inflight: Set<Promise<void>>): Promise<void> {
    if (inflight.size > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), this.opts.shutdownTimeoutMs);
      });
      const outcome = await Promise.race([Promise.allSettled([...inflight]).then(() => "done" as const), timedOut]);
      clearTimeout(timer);
      if (outcome === "timeout") {
        const n = inflight.size;
        this.abandon.abort(new TaskAborted("abandoned"));
        await Promise.allSettled([...inflight]);
        this.log("warn", "worker stopped; abandoned tasks still running: their claims will time out", { abandoned: n });
        throw new ShutdownTimeoutError(n);
      }
    }
    this.log("info", "worker stopped", {});
  }

  /**
   * runSlot runs a task in one slot, then each task eager dispatch hands the
   * slot with its completion, until one comes without a next task. Once
   * shutdown has begun, completions ask for none.
   */
  private async runSlot(first: Task): Promise<void> {
    const queue = [first];
    for (let t = queue.shift(); t; t = queue.shift()) {
      try {
        queue.push(...(await this.handle(t)));
      } catch (e) {
        // handle reports every outcome itself; this is a bug guard.
        this.log("error", "task handling failed", { task_id: t.taskId, error: messageOf(e) });
      }
    }
  }

  private handlerFor(t: Task): Handler | undefined {
    switch (t.taskType) {
      case TaskType.ACTIVITY:
        return this.activities.get(t.activity);
      case TaskType.VERIFY: {
        const h = this.activities.get(t.activity);
        return h?.verify ? h : undefined;
      }
      case TaskType.COMPENSATION:
        return this.compensations.get(t.activity);
      default:
        return undefined;
    }
  }

  /** handle runs one claimed task and reports its outcome; it answers the tasks eager dispatch claimed with the completion. */
  private async handle(t: Task): Promise<Task[]> {
    const fields = { task_id: t.taskId, run_id: t.runId, action_id: t.actionId, activity: t.activity };
    const h = this.handlerFor(t);
    if (!h) {
      this.log("warn", "task of a type or name this worker does not run; failing it back", { ...fields, task_type: t.taskType });
      await this.reportFailure(t, {
        errorClass: ErrorClass.AGENT_ERROR,
        code: "unsupported_task",
        message: `worker ${this.opts.workerId} does not run ${TaskType[t.taskType] ?? t.taskType} ${JSON.stringify(t.activity)}`,
        sideEffectPossible: false,
      }, "", fields);
      return [];
    }
    const ac = new AbortController();
    const abort = (kind: AbortKind) => {
      if (!ac.signal.aborted) ac.abort(new TaskAborted(kind));
    };
    const onAbandon = () => abort("abandoned");
    this.abandon.signal.addEventListener("abort", onAbandon, { once: true });
    const deadline = t.deadline ? timestampDate(t.deadline) : undefined;
    const clearDeadline = deadline ? atTime(deadline, () => abort("deadline")) : () => {};
    const span = startActivitySpan(this.tracer, t, this.opts.workerId);
    const traceparent = span?.traceparent ?? "";
    const beats = this.heartbeat(t, ac.signal, abort, fields, traceparent);
    const ctx: ActivityContext = {
      info: this.info(t, deadline),
      signal: ac.signal,
      traceContext: span?.context ?? ROOT_CONTEXT,
      heartbeat: beats.now,
    };
    try {
      if (t.taskType === TaskType.VERIFY) {
        await this.runVerify(t, h, ctx, fields, traceparent);
        return [];
      }
      const outcome = await (span ? context.with(span.context, () => runGuarded(h, t.input, ctx)) : runGuarded(h, t.input, ctx));
      const aborted = ac.signal.aborted ? (ac.signal.reason as TaskAborted).kind : undefined;
      if (aborted === "claim-lost" || aborted === "abandoned") {
        this.log("info", "task not reported", { ...fields, reason: aborted });
        span?.outcome("not_reported");
        return [];
      }
      if (!outcome.ok) {
        const failure = classify(outcome.err, aborted);
        span?.outcome("failed", failure.errorClass === ErrorClass.UNSPECIFIED ? ErrorClass.UNKNOWN : failure.errorClass);
        await this.reportFailure(t, failure, outcome.key, fields, traceparent);
        return [];
      }
      span?.outcome("completed");
      return await this.reportCompletion(t, outcome.output, outcome.key, fields, traceparent);
    } finally {
      clearDeadline();
      await beats.stop();
      this.abandon.signal.removeEventListener("abort", onAbandon);
      span?.end();
    }
  }

  private info(t: Task, deadline: Date | undefined): ActivityInfo {
    const upstream: Record<string, JsonValue | undefined> = {};
    for (const [id, v] of Object.entries(t.upstreamOutputs)) upstream[id] = fromValue(v);
    return Object.freeze({
      taskType: t.taskType,
      taskId: t.taskId,
      runId: t.runId,
      actionId: t.actionId,
      tenantId: t.tenantId,
      activity: t.activity,
      operationId: t.operationId,
      idempotencyKey: t.idempotencyKey,
      logicalAttempt: t.logicalAttemptId,
      engineAttempt: t.engineAttemptId,
      deadline,
      runInput: fromValue(t.runInput),
      upstreamOutputs: Object.freeze(upstream),
      secrets: t.secrets,
      workerId: this.opts.workerId,
      traceparent: t.traceparent,
      heartbeatDetails: t.heartbeatDetails ? fromValue(t.heartbeatDetails) : undefined,
      item: t.item ? fromValue(t.item) : undefined,
      index: t.index,
      isItem: t.item !== undefined,
    });
  }

  /**
   * heartbeat sends heartbeats until the answered stop function is called,
   * aborting the task when weftd asks or the claim is gone, and answers
   * `now`, the activity's own heartbeat (ActivityContext.heartbeat), which
   * carries its details; a periodic heartbeat carries details not yet
   * delivered. A failed periodic heartbeat is not retried: the next one is
   * the retry.
   */
  private heartbeat(
    t: Task,
    signal: AbortSignal,
    abort: (k: AbortKind) => void,
    fields: Record<string, unknown>,
    traceparent: string,
  ): { now: (details?: JsonValue) => Promise<void>; stop: () => Promise<void> } {
    const every = heartbeatEvery(t.heartbeatTimeoutMs, this.opts.heartbeatIntervalMs);
    let pending: Value | undefined; // details not yet delivered
    const send = async () => {
      const sent = pending;
      try {
        const res = await this.client.workers.heartbeatTask(
          { taskToken: t.taskToken, workerId: this.opts.workerId, details: sent },
          { signal, timeoutMs: Math.max(every, 1000), ...traceHeaders(traceparent) },
        );
        if (pending === sent) pending = undefined;
        if (res.cancelRequested) {
          this.log("info", "cancel requested; stopping the task", fields);
          abort("cancel-requested");
        }
      } catch (e) {
        if (signal.aborted) throw e;
        const code = toWeftError(e).code;
        if (code === "TaskClaimLost" || code === "NotFound") {
          this.log("info", "claim lost; stopping the task", fields);
          abort("claim-lost");
        } else {
          this.log("warn", "heartbeat failed", { ...fields, code });
        }
        throw e;
      }
    };
    let inFlight: Promise<void> = Promise.resolve();
    const now = (details?: JsonValue) => {
      if (details !== undefined) pending = fromJson(ValueSchema, details);
      const beat = inFlight.then(send);
      inFlight = beat.catch(() => {});
      return beat;
    };
    const timer = every > 0 ? setInterval(() => {
      if (!signal.aborted) inFlight = inFlight.then(send).catch(() => {});
    }, every) : undefined;
    return {
      now,
      stop: async () => {
        if (timer) clearInterval(timer);
        await inFlight;
      },
    };
  }

  /** A report retried on transient faults: the same request, so the same task token, each time. */
  private report<T>(call: () => Promise<T>, fields: Record<string, unknown>, what: string): Promise<T> {
    return withRetry(this.opts.retry, call, {
      signal: this.abandon.signal,
      onRetry: (attempt, e) => this.log("warn", `${what} failed; retrying with the same task token`, { ...fields, attempt, code: toWeftError(e).code }),
    });
  }

  /** reportCompletion reports a result, asking for the next task unless shutting down. */
  private async reportCompletion(t: Task, output: JsonValue | undefined, key: string, fields: Record<string, unknown>, traceparent: string): Promise<Task[]> {
    let value: Value | undefined;
    try {
      value = output === undefined ? undefined : fromJson(ValueSchema, output);
    } catch {
      await this.reportFailure(t, { errorClass: ErrorClass.AGENT_ERROR, code: "invalid_output", message: "the output is not representable as JSON", sideEffectPossible: false }, key, fields, traceparent);
      return [];
    }
    const next = this.stopping ? undefined : this.pollRequest(1, 0);
    try {
      const res = await this.report(
        () => this.client.workers.completeTask({ taskToken: t.taskToken, workerId: this.opts.workerId, output: value, reconciliationKey: key, nextTasks: next }, traceHeaders(traceparent)),
        fields,
        "completion",
      );
      this.log("debug", "task completed", { ...fields, duplicate: res.duplicate, next_tasks: res.tasks.length });
      return res.tasks;
    } catch (e) {
      const code = toWeftError(e).code;
      switch (code) {
        case "TaskClaimLost":
          this.log("info", "completion not applied: the claim was lost", fields);
          break;
        case "PayloadTooLarge":
        case "InvalidArgument":
          this.log("warn", "completion refused; failing the task", { ...fields, code });
          await this.reportFailure(t, { errorClass: ErrorClass.AGENT_ERROR, code: "output_rejected", message: `weftd refused the output: ${code}`, sideEffectPossible: false }, key, fields, traceparent);
          break;
        default:
          this.log("warn", "completion not reported; the claim will time out", { ...fields, code });
      }
      return [];
    }
  }

  private async reportFailure(t: Task, f: Classified, key: string, fields: Record<string, unknown>, traceparent = t.traceparent): Promise<void> {
    const errorClass = f.errorClass === ErrorClass.UNSPECIFIED ? ErrorClass.UNKNOWN : f.errorClass;
    try {
      const res = await this.report(
        () =>
          this.client.workers.failTask({
            taskToken: t.taskToken,
            workerId: this.opts.workerId,
            errorClass,
            code: truncate(f.code, MAX_CODE_CHARS),
            message: truncate(f.message || "failed", MAX_MESSAGE_CHARS),
            sideEffectPossible: f.sideEffectPossible,
            reconciliationKey: key,
            retryAfterMs: retryAfterMs(f.retryAfterMs),
          }, traceHeaders(traceparent)),
        fields,
        "failure report",
      );
      this.log("debug", "task failed", { ...fields, class: ErrorClass[errorClass], will_retry: res.willRetry });
    } catch (e) {
      const code = toWeftError(e).code;
      this.log(code === "TaskClaimLost" ? "info" : "warn", code === "TaskClaimLost" ? "failure not applied: the claim was lost" : "failure not reported; the claim will time out", { ...fields, code });
    }
  }

  /** runVerify answers a verify task through the activity's verify function. */
  private async runVerify(t: Task, h: Handler, ctx: ActivityContext, fields: Record<string, unknown>, traceparent: string): Promise<void> {
    let state = VerifyState.INDETERMINATE;
    let diagnostic = "";
    let result: Value | undefined;
    try {
      // The key the worker reported; when the attempt's worker died before
      // reporting, the key derived from the task's input, as that worker did.
      const key = t.reconciliationKey || h.keyOf?.(t.input) || "";
      const res = await context.with(ctx.traceContext, () => h.verify!(key, ctx));
      state = res.state === VerifyState.UNSPECIFIED ? VerifyState.INDETERMINATE : res.state;
      diagnostic = res.diagnostic ?? "";
      if (state === VerifyState.COMPLETED_WITH_RESULT) {
        try {
          const json = encodeOutput(res.result);
          result = json === undefined ? undefined : fromJson(ValueSchema, json);
        } catch {
          state = VerifyState.INDETERMINATE;
          diagnostic = "verify's result is not representable as JSON";
        }
      }
    } catch (e) {
      state = VerifyState.INDETERMINATE;
      diagnostic = `verify failed: ${messageOf(e)}`;
    }
    try {
      await this.report(
        () =>
          this.client.workers.reportVerification({
            taskToken: t.taskToken,
            workerId: this.opts.workerId,
            state,
            result,
            diagnostic: truncate(diagnostic, MAX_MESSAGE_CHARS),
          }, traceHeaders(traceparent)),
        fields,
        "verification report",
      );
      this.log("debug", "verification reported", { ...fields, state: VerifyState[state] });
    } catch (e) {
      this.log("warn", "verification not reported", { ...fields, code: toWeftError(e).code });
    }
  }
}

/** KeyedError carries the reconciliation key derived before an activity failed. */
class KeyedError extends Error {
  readonly err: unknown;
  readonly key: string;
  constructor(err: unknown, key: string) {
    super("keyed");
    this.err = err;
    this.key = key;
  }
}

/** runGuarded runs a handler; every throw (also a synchronous one) becomes a failed outcome. */
async function runGuarded(h: Handler, input: Value | undefined, ctx: ActivityContext): Promise<Outcome> {
  try {
    const { output, key } = await h.run(input, ctx);
    return { ok: true, output, key };
  } catch (e) {
    return e instanceof KeyedError ? { ok: false, err: e.err, key: e.key } : { ok: false, err: e, key: "" };
  }
}

/** decodeInput answers a task's input as JSON through decode; a throw is a VALIDATION failure. */
function decodeInput<In>(input: Value | undefined, decode: (v: unknown) => In): In {
  const json = fromValue(input);
  try {
    return decode(json === null ? undefined : json);
  } catch (e) {
    throw new ActivityFailure(ErrorClass.VALIDATION, "invalid_input", `the input was refused: ${messageOf(e)}`, { cause: e });
  }
}

/**
 * encodeOutput answers an activity's output as JSON (as JSON.stringify
 * would: Dates become strings, undefined fields vanish); undefined for none.
 * A value JSON cannot hold (a BigInt, a cycle) is an AGENT_ERROR failure.
 */
function encodeOutput(out: unknown): JsonValue | undefined {
  if (out === undefined) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(out);
  } catch {
    throw new ActivityFailure(ErrorClass.AGENT_ERROR, "invalid_output", "the output is not representable as JSON");
  }
  return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
}

/** The longest delay setTimeout takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 0x7fffffff;

/** atTime calls fn at the given time (also months ahead); the answered function cancels it. */
export function atTime(when: Date, fn: () => void, now: () => number = Date.now): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    const left = when.getTime() - now();
    if (left <= 0) {
      timer = undefined;
      fn();
      return;
    }
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * heartbeatEvery answers how often a task heartbeats: a third of its
 * heartbeat timeout (or the interval, when that is shorter and positive), else
 * the interval; 0 or less: never.
 */
export function heartbeatEvery(heartbeatTimeoutMs: number, intervalMs: number): number {
  if (heartbeatTimeoutMs > 0) {
    const third = Math.floor(heartbeatTimeoutMs / 3);
    return intervalMs > 0 ? Math.min(third, intervalMs) : third;
  }
  return intervalMs;
}

/** What the worker uses of Node's process object (absent elsewhere). */
interface SignalSource {
  once(signal: string, listener: (signal: string) => void): unknown;
  removeListener(signal: string, listener: (signal: string) => void): unknown;
  env?: Record<string, string | undefined>;
  pid?: number;
}

function defaultWorkerId(): string {
  const proc = (globalThis as { process?: SignalSource }).process;
  const host = proc?.env?.HOSTNAME || "worker";
  return `${host}-${proc?.pid ?? Math.floor(Math.random() * 1e6)}`;
}

/**
 * traceHeaders answers the call options that carry a traced task's
 * traceparent (its activity span's) on its reports and heartbeats, so that
 * weftd's spans of them join the run's trace under the activity's span
 * (docs/observability.md); none for a task that is not traced.
 */
export function traceHeaders(traceparent: string): { headers?: Record<string, string> } {
  return traceparent ? { headers: { traceparent } } : {};
}
