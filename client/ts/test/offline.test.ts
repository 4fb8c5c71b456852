// The typed layer without a server: schema evolution (unknown enum numbers,
// unknown fields, unknown event types never throw), typed errors from
// details, bearer tokens, and signalRun's retries with one signal id.
import { test } from "node:test";
import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createRouterTransport, type Transport } from "@connectrpc/connect";
import {
  createWeftClient,
  eventKind,
  EventSchema,
  EventService,
  FaultCode,
  FaultSchema,
  isTerminal,
  RunSchema,
  RunService,
  RunStatus,
  runStatusName,
  SignalService,
  toWeftError,
  WeftError,
  type SignalRunRequest,
} from "../src/index.js";

/** Bytes of fields no version of weft.v1 defines (yet): a varint and a string. */
function unknownFields(...numbers: number[]): Uint8Array {
  const w = new BinaryWriter();
  for (const n of numbers) {
    w.tag(n, WireType.Varint).int32(7);
    w.tag(n + 1, WireType.LengthDelimited).string("from a newer server");
  }
  return w.finish();
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A Run from a newer server: a status number this client does not know, and unknown fields. */
function newerRunBytes(): Uint8Array {
  const known = toBinary(RunSchema, create(RunSchema, { runId: "run-1", status: 42 as RunStatus, planId: "p" }));
  return concat(known, unknownFields(900));
}

/** An Event of a type this client has no payload for: the payload sits at an unknown field number. */
function newerEventBytes(): Uint8Array {
  const known = toBinary(EventSchema, create(EventSchema, { eventType: "RunTeleported", runId: "run-1", runSeq: 5n }));
  return concat(known, unknownFields(99));
}

test("a run with an unknown status number and unknown fields decodes from binary and reads without throwing", () => {
  const run = fromBinary(RunSchema, newerRunBytes());
  assert.equal(run.runId, "run-1");
  assert.equal(run.status, 42);
  assert.equal(runStatusName(run.status), "UNRECOGNIZED_42");
  assert.equal(runStatusName(RunStatus.COMPLETED), "COMPLETED");
  assert.equal(isTerminal(run.status), false);
  assert.equal(run.$unknown?.length, 2);
  // Unknown fields survive a round trip (a proxy or cache does not drop them).
  assert.deepEqual(toBinary(RunSchema, run), newerRunBytes());

  const event = fromBinary(EventSchema, newerEventBytes());
  assert.deepEqual(eventKind(event), { type: "RunTeleported", payloadCase: undefined, known: false });
  assert.equal(event.runSeq, 5n);
});

test("the client answers unknown enum numbers, unknown fields and unknown event types without throwing", async () => {
  const transport = createRouterTransport(({ service }) => {
    service(RunService, { getRun: () => ({ run: fromBinary(RunSchema, newerRunBytes()) }) });
    service(EventService, {
      async *watchEvents() {
        yield { event: fromBinary(EventSchema, newerEventBytes()) };
        yield { event: { eventType: "RunCompleted", runSeq: 6n, payload: { case: "runCompleted", value: {} } } };
      },
    });
  });
  const weft = createWeftClient({ transport });
  const { run } = await weft.runs.getRun({ runId: "run-1" });
  assert.equal(run?.status, 42);
  assert.equal(runStatusName(run!.status), "UNRECOGNIZED_42");
  const kinds = [];
  for await (const { event } of weft.events.watchEvents({ runId: "run-1" })) kinds.push(eventKind(event!));
  assert.deepEqual(kinds, [
    { type: "RunTeleported", payloadCase: undefined, known: false },
    { type: "RunCompleted", payloadCase: "runCompleted", known: true },
  ]);
});

test("the JSON format ignores unknown fields and reads unknown enum numbers", async () => {
  const fetch: typeof globalThis.fetch = async () =>
    new Response(JSON.stringify({ run: { run_id: "run-1", status: 42, brand_new_field: { x: 1 } }, also_new: true }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  const weft = createWeftClient({ baseUrl: "http://weft.invalid", fetch, json: true });
  const { run } = await weft.runs.getRun({ runId: "run-1" });
  assert.equal(run?.runId, "run-1");
  assert.equal(run?.status, 42);
});

test("a fault with a code this client does not know takes the Connect code's name", async () => {
  const transport = createRouterTransport(({ service }) => {
    service(RunService, {
      cancelRun() {
        throw new ConnectError("something new", Code.Aborted, undefined, [
          { desc: FaultSchema, value: { code: 99 as FaultCode, correlationId: "c0ffee00-0000-4000-8000-000000000000" } },
        ]);
      },
    });
  });
  const weft = createWeftClient({ transport });
  const err = await weft.runs.cancelRun({ runId: "run-1" }).then(
    () => assert.fail("succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WeftError);
  assert.equal(err.code, "Aborted");
  assert.equal(err.faultCode, 99);
  assert.equal(err.correlationId, "c0ffee00-0000-4000-8000-000000000000");
});

test("toWeftError names every FaultCode in PascalCase and reads details", () => {
  const cases: Array<[FaultCode, Code, string]> = [
    [FaultCode.SIGNAL_ACCEPTANCE_INDETERMINATE, Code.Aborted, "SignalAcceptanceIndeterminate"],
    [FaultCode.ILLEGAL_TRANSITION, Code.Aborted, "IllegalTransition"],
    [FaultCode.INVALID_ARGUMENT, Code.InvalidArgument, "InvalidArgument"],
    [FaultCode.TASK_CLAIM_LOST, Code.Aborted, "TaskClaimLost"],
    [FaultCode.RESOURCE_EXHAUSTED, Code.ResourceExhausted, "ResourceExhausted"],
    [FaultCode.PAYLOAD_TOO_LARGE, Code.InvalidArgument, "PayloadTooLarge"],
    [FaultCode.FAILED_PRECONDITION, Code.FailedPrecondition, "FailedPrecondition"],
  ];
  for (const [fault, code, name] of cases) {
    const err = toWeftError(
      new ConnectError("m", code, { "retry-after": "2" }, [{ desc: FaultSchema, value: { code: fault, runId: "r" } }]),
    );
    assert.equal(err.code, name);
    assert.equal(err.connectCode, code);
    assert.equal(err.fault?.runId, "r");
    assert.equal(err.retryAfterMs, 2000);
    assert.equal(err.message, `${name}: m`);
  }
  // No Fault detail: the Connect code's name; a plain error: Unknown.
  assert.equal(toWeftError(new ConnectError("x", Code.Unavailable)).code, "Unavailable");
  const plain = toWeftError(new TypeError("fetch failed"));
  assert.equal(plain.code, "Unknown");
  assert.ok(plain.isNetworkError);
  assert.equal(toWeftError(plain), plain);
});

test("a token is sent as Authorization: Bearer on the built-in transports and on a transport passed in", async () => {
  const seen: Array<string | null> = [];
  const fetch: typeof globalThis.fetch = async (_url, init) => {
    seen.push(new Headers(init?.headers).get("authorization"));
    return new Response(JSON.stringify({ run: { run_id: "r" } }), { headers: { "content-type": "application/json" } });
  };
  await createWeftClient({ baseUrl: "http://weft.invalid", token: "t0k", fetch, json: true }).runs.getRun({ runId: "r" });
  let n = 0;
  await createWeftClient({ baseUrl: "http://weft.invalid", token: () => `refreshed-${++n}`, fetch, json: true }).runs.getRun({ runId: "r" });
  const transport = createRouterTransport(({ service }) => {
    service(RunService, {
      getRun(_req, ctx) {
        seen.push(ctx.requestHeader.get("authorization"));
        return {};
      },
    });
  });
  await createWeftClient({ transport, token: "t1k" }).runs.getRun({ runId: "r" });
  await createWeftClient({ transport }).runs.getRun({ runId: "r" });
  assert.deepEqual(seen, ["Bearer t0k", "Bearer refreshed-1", "Bearer t1k", null]);
});

test("signalRun reuses one signal id across its retries on unavailable and network errors", async () => {
  const requests: SignalRunRequest[] = [];
  let failures: Array<() => never> = [
    () => {
      throw new ConnectError("engine lost ownership", Code.Unavailable);
    },
  ];
  // Before the server: a failed fetch, as connect-web reports it.
  let networkFailures = 1;
  const router = createRouterTransport(({ service }) => {
    service(SignalService, {
      signalRun(req) {
        requests.push(req);
        const fail = failures.shift();
        if (fail) fail();
        return { result: { accepted: true, runId: req.runId, signalName: req.signalName, signalId: req.signalId }, duplicate: false };
      },
    });
  });
  const transport: Transport = {
    unary(...args) {
      if (requests.length === 1 && networkFailures-- > 0) {
        return Promise.reject(new ConnectError("fetch failed", Code.Unknown, undefined, undefined, new TypeError("fetch failed")));
      }
      return router.unary(...args);
    },
    stream: (...args) => router.stream(...args),
  };
  const weft = createWeftClient({ transport });
  const retries: number[] = [];
  const res = await weft.signalRun(
    { runId: "run-1", signalName: "go", payload: { a: 1 } },
    { initialBackoffMs: 1, onRetry: (attempt) => retries.push(attempt) },
  );
  assert.equal(requests.length, 2);
  assert.deepEqual(retries, [2, 3]);
  // The server saw two requests (the network failure never reached it), with one signal id.
  const ids = new Set(requests.map((r) => r.signalId));
  assert.equal(ids.size, 1);
  const [id] = ids;
  assert.match(id ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(res.result?.signalId, id);

  // Anything else is not retried.
  requests.length = 0;
  failures = [
    () => {
      throw new ConnectError("bad", Code.InvalidArgument);
    },
  ];
  const err = await weft.signalRun({ runId: "run-1", signalName: "go" }, { initialBackoffMs: 1 }).then(
    () => assert.fail("succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WeftError);
  assert.equal(err.code, "InvalidArgument");
  assert.equal(requests.length, 1);
});

test("signalRun gives up after maxAttempts against an unreachable server", async () => {
  // A port nothing listens on: fetch fails with a TypeError (a network error).
  const weft = createWeftClient({ baseUrl: "http://127.0.0.1:9" });
  const ids: string[] = [];
  const err = await weft
    .signalRun({ runId: "run-1", signalName: "go" }, { maxAttempts: 3, initialBackoffMs: 1, onRetry: (_a, _e, id) => ids.push(id) })
    .then(
      () => assert.fail("succeeded"),
      (e: unknown) => e,
    );
  assert.ok(err instanceof WeftError);
  assert.ok(err.isNetworkError, `not a network error: ${err.code} ${err.message}`);
  assert.equal(ids.length, 2);
  assert.equal(new Set(ids).size, 1);
});
