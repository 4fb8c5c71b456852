// Helpers that read API values without ever throwing on what a newer server
// may send: enum numbers this client does not
// know, event types without a typed payload, fields it cannot name.
import { fromJson, toJson, type DescEnum, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { RunService, RunStatus, RunStatusSchema, type Run } from "./gen/weft/v1/run_pb.js";
import type { Event } from "./gen/weft/v1/event_pb.js";

/** toValue converts JSON into a google.protobuf.Value (run inputs, outputs, payloads). */
export function toValue(json: JsonValue): Value {
  return fromJson(ValueSchema, json);
}

/** fromValue converts a google.protobuf.Value back into JSON; undefined stays undefined. */
export function fromValue(value: Value | undefined): JsonValue | undefined {
  return value === undefined ? undefined : toJson(ValueSchema, value);
}

/**
 * enumName answers an enum value's name without its prefix ("COMPLETED"), or
 * "UNRECOGNIZED_<n>" for a number this client does not know.
 */
export function enumName(schema: DescEnum, value: number): string {
  return schema.value[value]?.localName ?? `UNRECOGNIZED_${value}`;
}

/** runStatusName answers a run status's name, e.g. "COMPLETED" (see {@link enumName}). */
export function runStatusName(status: RunStatus): string {
  return enumName(RunStatusSchema, status);
}

/** isTerminal tells whether a run status is terminal; a status this client does not know is not. */
export function isTerminal(status: RunStatus): boolean {
  switch (status) {
    case RunStatus.COMPLETED:
    case RunStatus.FAILED:
    case RunStatus.CANCELLED:
      return true;
    default:
      return false;
  }
}

/**
 * eventKind answers an event's type and typed payload case. An event type
 * this client has no payload for (a newer server's) answers `known: false`
 * and payloadCase undefined; its envelope fields are still readable.
 */
export function eventKind(event: Event): { type: string; payloadCase: string | undefined; known: boolean } {
  const payloadCase = event.payload.case;
  return { type: event.eventType, payloadCase, known: payloadCase !== undefined };
}

/** Options of {@link awaitRun}. */
export interface AwaitRunOptions {
  /** Gives up after this long (default: waits as long as the run runs). */
  timeoutMs?: number;
  /** Aborts the wait. */
  signal?: AbortSignal;
}

/** How long one RunService.AwaitRun call waits on the server. */
const awaitRunWaitMs = 20000;

/** What a long-poll call is given beyond the time weftd waits, for the answer to arrive. */
const longPollMarginMs = 10000;

/**
 * longPollTimeoutMs answers the deadline of a call that weftd holds for up to
 * waitMs (AwaitRun's waitMs, SubmitRun's awaitMs). It overrides the client's
 * defaultTimeoutMs, which would otherwise cut the wait short: a SubmitRun
 * without runRequestId is not retried, so its caller would lose a run that
 * weftd created.
 */
export function longPollTimeoutMs(waitMs: number): number {
  return waitMs + longPollMarginMs;
}

/**
 * awaitRun answers the run once it is terminal. It long-polls
 * RunService.AwaitRun, which answers as soon as the run ends (or after up to
 * 20 s, when it calls again): no polling delay, one call per 20 s of waiting.
 */
export async function awaitRun(runs: Client<typeof RunService>, runId: string, options: AwaitRunOptions = {}): Promise<Run> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  return awaitRunUntil(runs, runId, deadline, options);
}

/**
 * awaitRunUntil is {@link awaitRun} with its deadline (a Date.now() time, or
 * Infinity) set by the caller; options.timeoutMs only names it in the error.
 */
export async function awaitRunUntil(runs: Client<typeof RunService>, runId: string, deadline: number, options: AwaitRunOptions): Promise<Run> {
  for (;;) {
    const waitMs = Math.max(0, Math.min(awaitRunWaitMs, deadline - Date.now()));
    const { run } = await runs.awaitRun({ runId, waitMs }, { signal: options.signal, timeoutMs: longPollTimeoutMs(waitMs) });
    if (run && isTerminal(run.status)) return run;
    if (Date.now() >= deadline) {
      throw new Error(`awaitRun: run ${runId} still ${run ? runStatusName(run.status) : "missing"} after ${options.timeoutMs} ms`);
    }
  }
}

/** Options of {@link waitForRun}. */
export interface WaitForRunOptions {
  /** Stops waiting when it answers true (default: the run is terminal, awaited with {@link awaitRun}). */
  until?: (run: Run) => boolean;
  /** Delay between reads when `until` is given (default 100 ms). */
  intervalMs?: number;
  /** Gives up after this long (default 30000 ms). */
  timeoutMs?: number;
  /** Aborts the wait. */
  signal?: AbortSignal;
}

/** waitForRun answers the run once `until` holds: by reading it every intervalMs, or, for a terminal run (the default), with {@link awaitRun}. */
export async function waitForRun(
  runs: Client<typeof RunService>,
  runId: string,
  options: WaitForRunOptions = {},
): Promise<Run> {
  if (!options.until) {
    return awaitRun(runs, runId, { timeoutMs: options.timeoutMs ?? 30000, signal: options.signal });
  }
  const until = options.until;
  const deadline = Date.now() + (options.timeoutMs ?? 30000);
  for (;;) {
    const { run } = await runs.getRun({ runId }, { signal: options.signal });
    if (run && until(run)) return run;
    if (Date.now() >= deadline) {
      throw new Error(`waitForRun: run ${runId} still ${run ? runStatusName(run.status) : "missing"} after ${options.timeoutMs ?? 30000} ms`);
    }
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}
