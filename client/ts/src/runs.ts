// The client's higher-level calls: submit (also from YAML or JSON text), list
// every page, watch events as an async iterator, complete manual steps.
import type { Client } from "@connectrpc/connect";
import { create, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { parseDefinition } from "./definition.js";
import { WorkflowDefinitionSchema, type WorkflowDefinition } from "./gen/weft/v1/definition_pb.js";
import { EventService, type Event } from "./gen/weft/v1/event_pb.js";
import { RunService, type ListRunsRequestSchema, type Run, type SubmitRunRequestSchema } from "./gen/weft/v1/run_pb.js";
import { ManualOutcome, SignalService, type CompleteManualActionResponse } from "./gen/weft/v1/signal_pb.js";
import { withRetry, isTransient, retryPolicy, backoffMs, sleep, type RetryPolicy } from "./retry.js";
import { awaitRunUntil, isTerminal, longPollTimeoutMs, toValue } from "./values.js";

/** What {@link submit} takes as the definition: text (YAML or JSON), a message, or a message's fields. */
export type DefinitionSource = string | WorkflowDefinition | MessageInitShape<typeof WorkflowDefinitionSchema>;

/** Options of {@link submit}. */
export interface SubmitOptions {
  /** The run's input, any JSON value. */
  input?: JsonValue;
  /** Start the run at once (default true); false leaves it PENDING. */
  start?: boolean;
  /** Makes the submission idempotent: a repeat answers the run it made (and is then retried on transient faults). */
  runRequestId?: string;
  /** The project (default: the tenant's default). */
  projectId?: string;
  /** The environment (default: the project's default). */
  environmentId?: string;
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Retries of an idempotent submission (default: 4 attempts). */
  retry?: RetryPolicy;
}

/** The answer of {@link submit}. */
export interface Submitted {
  /** The run as persisted. */
  run: Run;
  /** True when runRequestId named a run submitted before (nothing new was made). */
  existing: boolean;
}

/**
 * submit persists a run of a definition given as YAML or JSON text (see
 * parseDefinition), a WorkflowDefinition, or its fields; it starts it unless
 * `start` is false. Only a submission with a runRequestId is retried: without
 * one a repeat would make a second run.
 */
export async function submit(runs: Client<typeof RunService>, definition: DefinitionSource, options: SubmitOptions = {}): Promise<Submitted> {
  const def = typeof definition === "string" ? parseDefinition(definition) : create(WorkflowDefinitionSchema, definition);
  const req = {
    definition: def,
    start: options.start ?? true,
    input: options.input === undefined ? undefined : toValue(options.input),
    runRequestId: options.runRequestId ?? "",
    projectId: options.projectId ?? "",
    environmentId: options.environmentId ?? "",
  };
  const call = () => runs.submitRun(req, { signal: options.signal });
  const res = options.runRequestId ? await withRetry(options.retry ?? {}, call, { signal: options.signal }) : await call();
  if (!res.run) throw new Error("submit: weftd answered no run");
  return { run: res.run, existing: res.existing };
}

/** What {@link submitAndAwait} takes: a SubmitRunRequest or its fields. */
export type SubmitRunInit = MessageInitShape<typeof SubmitRunRequestSchema>;

/** Options of {@link submitAndAwait}. */
export interface SubmitAndAwaitOptions {
  /** Gives up after this long (default: waits as long as the run runs). */
  timeoutMs?: number;
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Retries of an idempotent submission (default: 4 attempts). */
  retry?: RetryPolicy;
}

/** How long SubmitRun waits for the run when the request sets no awaitMs: as long as one AwaitRun call of awaitRun. */
const submitAwaitMs = 20000;

/**
 * submitAndAwait submits a run, starts it, waits until it is terminal and
 * answers its final snapshot. It asks SubmitRun itself to wait (awaitMs), so
 * a run that ends within that wait costs one call; a run that does not, or a
 * server that predates awaitMs, is then awaited as {@link awaitRun} does. req
 * is not modified (start and awaitMs are set on a copy); like {@link submit},
 * the call is retried only when req.runRequestId is set. With timeoutMs,
 * SubmitRun waits no longer than it, and a run still going when it passes
 * rejects as awaitRun's timeout does.
 */
export async function submitAndAwait(runs: Client<typeof RunService>, req: SubmitRunInit, options: SubmitAndAwaitOptions = {}): Promise<Run> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  const call = () => {
    const copy = awaitingCopy(req, deadline - Date.now());
    return runs.submitRun(copy, { signal: options.signal, timeoutMs: longPollTimeoutMs(copy.awaitMs ?? 0) });
  };
  const { run } = req.runRequestId ? await withRetry(options.retry ?? {}, call, { signal: options.signal }) : await call();
  if (!run) throw new Error("submitAndAwait: weftd answered no run");
  if (isTerminal(run.status)) return run;
  return awaitRunUntil(runs, run.runId, deadline, options);
}

/**
 * awaitingCopy answers req with start set and, unless req sets one, a wait of
 * 20 s (at most leftMs, the time left of the caller's timeout) as its awaitMs.
 * The copy shares req's messages (the definition and input) rather than
 * cloning them.
 */
export function awaitingCopy(req: SubmitRunInit, leftMs = Infinity): SubmitRunInit {
  const awaitMs = req.awaitMs || Math.max(0, Math.floor(Math.min(submitAwaitMs, leftMs)));
  return { ...req, start: true, awaitMs };
}

/** The filter of {@link listRuns}: ListRunsRequest's fields without the page token. */
export type ListRunsFilter = Omit<MessageInitShape<typeof ListRunsRequestSchema>, "pageToken" | "$typeName">;

/** listRuns yields every run the filter matches, newest first, fetching page after page. */
export async function* listRuns(runs: Client<typeof RunService>, filter: ListRunsFilter = {}, options: { signal?: AbortSignal } = {}): AsyncGenerator<Run> {
  let pageToken = "";
  do {
    const res = await withRetry({}, () => runs.listRuns({ ...filter, pageToken }, { signal: options.signal }), { signal: options.signal });
    yield* res.runs;
    pageToken = res.nextPageToken;
  } while (pageToken);
}

/** Options of {@link watchEvents}. */
export interface WatchOptions {
  /** Yield only events after this run sequence number (default 0: from the first). */
  afterSeq?: bigint | number;
  /** Ends the iteration. */
  signal?: AbortSignal;
  /** How a broken stream is reopened (default: 4 attempts in a row). */
  retry?: RetryPolicy;
}

/**
 * watchEvents yields a run's events after afterSeq in run_seq order, then each
 * new one as it is appended. It ends when weftd ends the stream (the run is
 * terminal and every event was sent), when the loop breaks, or when signal
 * aborts; a stream that breaks on a transient fault is reopened after the last
 * event yielded, so no event is yielded twice. Events of types this client does
 * not know are yielded like any other (see eventKind). The stream is not
 * bounded by the client's defaultTimeoutMs: it lasts as long as the run.
 */
export async function* watchEvents(events: Client<typeof EventService>, runId: string, options: WatchOptions = {}): AsyncGenerator<Event> {
  let afterSeq = BigInt(options.afterSeq ?? 0);
  const policy = retryPolicy(options.retry);
  let failures = 0;
  const ac = new AbortController();
  const onAbort = () => ac.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      try {
        for await (const res of events.watchEvents({ runId, afterSeq }, { signal: ac.signal, timeoutMs: 0 })) {
          const ev = res.event;
          if (!ev) continue;
          failures = 0;
          if (ev.runSeq <= afterSeq) continue;
          afterSeq = ev.runSeq;
          yield ev;
        }
        return;
      } catch (e) {
        if (options.signal?.aborted) return;
        failures++;
        if (!isTransient(e) || failures >= policy.maxAttempts) throw e;
        await sleep(backoffMs(policy, failures), options.signal).catch(() => undefined);
        if (options.signal?.aborted) return;
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    ac.abort(); // closes the stream when the loop broke early
  }
}

/** The input of {@link completeManualAction}. */
export interface CompleteManualInput {
  /** The run. */
  runId: string;
  /** The step waiting for a person. */
  actionId: string;
  /** The step's completion token (Run.steps[].completionToken). */
  completionToken: string;
  /** Who completed it. */
  actorUserId: string;
  /** SUCCEEDED (default), FAILED or CANCELLED. */
  outcome?: ManualOutcome;
  /** The step's output, any JSON value. */
  output?: JsonValue;
  /** Notes, without secrets. */
  notes?: string;
  /** References to evidence. */
  evidenceRefs?: string[];
  /** When the person completed it (default now). */
  completedAt?: Date;
}

/**
 * completeManualAction completes a step that waits for a person. A retry
 * after a lost answer is answered with the original result (the completion
 * token makes it idempotent), so transient faults are retried.
 */
export async function completeManualAction(
  signals: Client<typeof SignalService>,
  input: CompleteManualInput,
  options: { signal?: AbortSignal; retry?: RetryPolicy } = {},
): Promise<CompleteManualActionResponse> {
  const completedAt = input.completedAt
    ? { seconds: BigInt(Math.floor(input.completedAt.getTime() / 1000)), nanos: (input.completedAt.getTime() % 1000) * 1e6 }
    : timestampNow();
  const req = {
    schemaVersion: 1,
    runId: input.runId,
    actionId: input.actionId,
    completionToken: input.completionToken,
    actorUserId: input.actorUserId,
    outcome: input.outcome ?? ManualOutcome.SUCCEEDED,
    output: input.output === undefined ? undefined : toValue(input.output),
    notes: input.notes ?? "",
    evidenceRefs: input.evidenceRefs ?? [],
    completedAt,
  };
  return withRetry(options.retry ?? {}, () => signals.completeManualAction(req, { signal: options.signal }), { signal: options.signal });
}
