// createWeftClient: typed clients of every weft.v1 service over one transport,
// with bearer authentication and typed errors (WeftError).
import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { RunService } from "./gen/weft/v1/run_pb.js";
import { SignalService, type SignalRunResponse } from "./gen/weft/v1/signal_pb.js";
import { EventService } from "./gen/weft/v1/event_pb.js";
import { WorkerService } from "./gen/weft/v1/worker_pb.js";
import { DefinitionService } from "./gen/weft/v1/definition_pb.js";
import { ViewService } from "./gen/weft/v1/view_pb.js";
import { bearerAuth, resolveToken, type TokenSource } from "./auth.js";
import { toWeftError } from "./errors.js";
import { activeSpanContext, injectTraceContext } from "./tracecontext.js";
import { signalRun, type SignalRunInput, type SignalRunOptions } from "./signal.js";
import type { Event } from "./gen/weft/v1/event_pb.js";
import type { Run } from "./gen/weft/v1/run_pb.js";
import type { CompleteManualActionResponse } from "./gen/weft/v1/signal_pb.js";
import {
  completeManualAction,
  listRuns,
  submit,
  submitAndAwait,
  watchEvents,
  type CompleteManualInput,
  type DefinitionSource,
  type ListRunsFilter,
  type SubmitAndAwaitOptions,
  type SubmitOptions,
  type SubmitRunInit,
  type Submitted,
  type WatchOptions,
} from "./runs.js";
import { awaitRun, type AwaitRunOptions } from "./values.js";
import type { RetryPolicy } from "./retry.js";

/** Options of {@link createWeftClient}. */
export interface WeftClientOptions {
  /** weftd's address, e.g. "http://127.0.0.1:7400" (required unless `transport` is a Transport). */
  baseUrl?: string;
  /** A bearer token (or a function answering one), sent as `Authorization: Bearer …`. */
  token?: TokenSource;
  /**
   * The protocol, over the fetch API (browsers, Node ≥ 18, Deno, Bun): "connect"
   * (default) or "grpc-web". Or a Transport you built, e.g. connect-node's
   * createGrpcTransport for gRPC over HTTP/2 in Node.
   */
  transport?: "connect" | "grpc-web" | Transport;
  /** A fetch implementation for the built-in transports (e.g. one that sets credentials). */
  fetch?: typeof globalThis.fetch;
  /** Connect protocol only: send JSON instead of the binary format (default false: binary). */
  json?: boolean;
  /** Extra interceptors for the built-in transports, run after authentication. */
  interceptors?: Interceptor[];
  /**
   * A timeout for every call, in milliseconds (overridable per call). The waits
   * weftd holds open are not cut by it: awaitRun and submitAndAwait give each
   * call its wait plus 10 s, watchEvents lasts as long as the run.
   */
  defaultTimeoutMs?: number;
}

/** Typed clients of every weft.v1 service. Every call rejects with a {@link WeftError}. */
export interface WeftClient {
  /** weft.v1.RunService: submit, read and steer runs. */
  readonly runs: Client<typeof RunService>;
  /** weft.v1.SignalService: signals and manual completions. */
  readonly signals: Client<typeof SignalService>;
  /** weft.v1.EventService: a run's event log. */
  readonly events: Client<typeof EventService>;
  /** weft.v1.WorkerService: poll and report tasks. */
  readonly workers: Client<typeof WorkerService>;
  /** weft.v1.DefinitionService: the definition registry (put, get, list stored definitions). */
  readonly definitions: Client<typeof DefinitionService>;
  /** weft.v1.ViewService: the runs list's saved views (save, list, delete). */
  readonly views: Client<typeof ViewService>;
  /** The transport every client uses (errors converted, token applied). */
  readonly transport: Transport;
  /** Sends a signal with one signal id reused across retries; see {@link signalRun}. */
  signalRun(input: SignalRunInput, options?: SignalRunOptions): Promise<SignalRunResponse>;
  /** Submits (and by default starts) a run of a definition given as YAML/JSON text or a message; see {@link submit}. */
  submit(definition: DefinitionSource, options?: SubmitOptions): Promise<Submitted>;
  /** Submits and starts a run and answers it once it is terminal, in one call when it ends within SubmitRun's wait; see {@link submitAndAwait}. */
  submitAndAwait(req: SubmitRunInit, options?: SubmitAndAwaitOptions): Promise<Run>;
  /** Answers the run once it is terminal (COMPLETED, FAILED or CANCELLED); see {@link awaitRun}. */
  awaitRun(runId: string, options?: AwaitRunOptions): Promise<Run>;
  /** Yields every run the filter matches, newest first, page after page. */
  listRuns(filter?: ListRunsFilter, options?: { signal?: AbortSignal }): AsyncGenerator<Run>;
  /** Yields a run's events as they are appended, until the run ends; see {@link watchEvents}. */
  watchEvents(runId: string, options?: WatchOptions): AsyncGenerator<Event>;
  /** Completes a step waiting for a person; see {@link completeManualAction}. */
  completeManualAction(input: CompleteManualInput, options?: { signal?: AbortSignal; retry?: RetryPolicy }): Promise<CompleteManualActionResponse>;
}

/**
 * createWeftClient answers typed clients of a weftd.
 *
 *     const weft = createWeftClient({ baseUrl: "http://127.0.0.1:7400", token });
 *     const { run } = await weft.runs.getRun({ runId });
 */
export function createWeftClient(options: WeftClientOptions): WeftClient {
  // The built-in transports authenticate with an interceptor; a Transport
  // passed in gets the token from the wrapper.
  const custom = typeof options.transport === "object";
  const transport = weftTransport(baseTransport(options), custom ? options.token : undefined);
  const signals = createClient(SignalService, transport);
  const runs = createClient(RunService, transport);
  const events = createClient(EventService, transport);
  return {
    runs,
    signals,
    events,
    workers: createClient(WorkerService, transport),
    definitions: createClient(DefinitionService, transport),
    views: createClient(ViewService, transport),
    transport,
    signalRun: (input, opts) => signalRun(signals, input, opts),
    submit: (definition, opts) => submit(runs, definition, opts),
    submitAndAwait: (req, opts) => submitAndAwait(runs, req, opts),
    awaitRun: (runId, opts) => awaitRun(runs, runId, opts),
    listRuns: (filter, opts) => listRuns(runs, filter, opts),
    watchEvents: (runId, opts) => watchEvents(events, runId, opts),
    completeManualAction: (input, opts) => completeManualAction(signals, input, opts),
  };
}

function baseTransport(options: WeftClientOptions): Transport {
  const kind = options.transport ?? "connect";
  if (typeof kind === "object") return kind;
  if (!options.baseUrl) throw new TypeError("createWeftClient: baseUrl is required");
  const interceptors = [...(options.token !== undefined ? [bearerAuth(options.token)] : []), ...(options.interceptors ?? [])];
  const common = {
    baseUrl: options.baseUrl,
    interceptors,
    fetch: options.fetch,
    defaultTimeoutMs: options.defaultTimeoutMs,
  };
  switch (kind) {
    case "connect":
      return createConnectTransport({ ...common, useBinaryFormat: !options.json });
    case "grpc-web":
      return createGrpcWebTransport({ ...common, useBinaryFormat: true });
    default:
      throw new TypeError(`createWeftClient: unknown transport ${JSON.stringify(kind)}`);
  }
}

/**
 * weftTransport wraps a transport so that every call rejects with a WeftError
 * (also mid-stream); carries the W3C traceparent of the span in the active
 * OpenTelemetry context, when there is one, so that weftd continues the
 * caller's trace; and, when a token is given, carries it on calls that have
 * no Authorization header yet (so a Transport you built gets both too).
 */
export function weftTransport(inner: Transport, token?: TokenSource): Transport {
  const withHeaders = async (header: HeadersInit | undefined): Promise<HeadersInit | undefined> => {
    const sc = activeSpanContext(); // read before any await
    if (token === undefined && !sc) return header;
    const h = new Headers(header);
    if (sc) injectTraceContext(h, sc);
    if (token === undefined) return h;
    const t = await resolveToken(token);
    if (t && !h.has("authorization")) h.set("authorization", `Bearer ${t}`);
    return h;
  };
  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      try {
        return await inner.unary(method, signal, timeoutMs, await withHeaders(header), input, contextValues);
      } catch (e) {
        throw toWeftError(e);
      }
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      let res;
      try {
        res = await inner.stream(method, signal, timeoutMs, await withHeaders(header), input, contextValues);
      } catch (e) {
        throw toWeftError(e);
      }
      const messages = res.message;
      return {
        ...res,
        message: (async function* () {
          try {
            yield* messages;
          } catch (e) {
            throw toWeftError(e);
          }
        })(),
      };
    },
  };
}
