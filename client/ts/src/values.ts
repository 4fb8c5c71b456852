// Helpers that read API values without ever throwing on what a newer server
// may send (spec 004 "Schema Evolution"): enum numbers this client does not
// know, event types without a typed payload, fields it cannot name.
import { fromJson, toJson, type DescEnum, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { RunService, RunStatus, RunStatusSchema, type Run } from "./gen/weft/v1/run_pb";
import type { Event } from "./gen/weft/v1/event_pb";

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

/** Options of {@link waitForRun}. */
export interface WaitForRunOptions {
  /** Stops waiting when it answers true (default: the run is terminal). */
  until?: (run: Run) => boolean;
  /** Delay between reads (default 100 ms). */
  intervalMs?: number;
  /** Gives up after this long (default 30000 ms). */
  timeoutMs?: number;
  /** Aborts the wait. */
  signal?: AbortSignal;
}

/** waitForRun reads a run until `until` holds, and answers it. */
export async function waitForRun(
  runs: Client<typeof RunService>,
  runId: string,
  options: WaitForRunOptions = {},
): Promise<Run> {
  const until = options.until ?? ((r: Run) => isTerminal(r.status));
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
