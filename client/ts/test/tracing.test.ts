// One trace per run with the TypeScript worker: the example workflow
// (examples/workflow.yaml) submitted under a span of this process, run by the
// example TypeScript worker (examples/ts/worker.ts, with the OpenTelemetry
// Node SDK loaded by examples/ts/tracing.ts and exporting over OTLP/HTTP JSON)
// against a real weftd exporting over OTLP/HTTP protobuf, both to an
// in-process OTLP receiver. The spans nest as docs/observability.md draws
// them, and none carries a payload.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { ROOT_CONTEXT, TraceFlags, context, createTraceState, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { createWeftClient, GetRunResponseSchema, RunStatus } from "../src/index.js";
import { repoRoot, startWeftd } from "./support/weftd.js";
import { childEnv } from "./support/env.js";
import { renderTree, startOtlpReceiver, type GotSpan } from "./support/otlp.js";

const root = repoRoot();
const built = existsSync(join(root, "client/ts/dist/worker/index.js"));
if (!built && process.env.CI) throw new Error("CI is set and client/ts/dist is missing (make ts-build)");

/** Strings of the run's inputs, outputs, signal payload and manual notes: none may appear in any span. */
const payloadMarkers = ["WIDGET-1", "EUR", "rsv-", "ch-", "trk-", "PAY-7f3a9", "stock checked 7f3a9"];

test("the client sends the traceparent of the active span (and its tracestate), none without one, and never over a call's own", async () => {
  const seen: Array<string | null> = [];
  const states: Array<string | null> = [];
  const inner = {
    async unary(method: { parent: unknown; name: string }, _signal: unknown, _timeout: unknown, header: HeadersInit | undefined) {
      const h = new Headers(header);
      seen.push(h.get("traceparent"));
      states.push(h.get("tracestate"));
      return { stream: false, service: method.parent, method, header: new Headers(), trailer: new Headers(), message: create(GetRunResponseSchema) };
    },
    stream() {
      throw new Error("no streams here");
    },
  } as unknown as Transport;
  const weft = createWeftClient({ transport: inner });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  try {
    const sc = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED, traceState: createTraceState("vendor=v1") };
    await weft.runs.getRun({ runId: "r" });
    await context.with(trace.setSpanContext(ROOT_CONTEXT, sc), async () => {
      await new Promise((r) => setTimeout(r, 1)); // still active after an await
      await weft.runs.getRun({ runId: "r" });
      await weft.runs.getRun({ runId: "r" }, { headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01" } });
    });
  } finally {
    context.disable();
  }
  assert.deepEqual(seen, [null, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"]);
  assert.deepEqual(states, [null, "vendor=v1", null]);
});

test("the example run with the TypeScript worker is one trace, nested as documented, with the activity's span under its attempt and no payload", { skip: !built && "client/ts/dist is not built (make ts-build)" }, async () => {
  const recv = await startOtlpReceiver();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": "submitter" }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${recv.url}/v1/traces` }))],
  });
  provider.register();
  const weftd = await startWeftd(["--otlp-endpoint", recv.url], { OTEL_BSP_SCHEDULE_DELAY: "50" });
  const worker = spawn(process.execPath, ["--import", join(root, "examples/ts/tracing.ts"), join(root, "examples/ts/worker.ts")], {
    cwd: root,
    env: childEnv({ WEFT_URL: weftd.url, OTEL_EXPORTER_OTLP_ENDPOINT: recv.url, OTEL_SERVICE_NAME: "example-ts-worker", OTEL_BSP_SCHEDULE_DELAY: "50" }),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let logs = "";
  worker.stderr!.on("data", (b: Buffer) => (logs += b.toString()));
  const exited = new Promise<number | null>((r) => worker.once("exit", (code) => r(code)));
  let runId = "";
  let traceId = "";
  try {
    const weft = createWeftClient({ baseUrl: weftd.url });
    const quickstart = provider.getTracer("submitter").startSpan("quickstart");
    traceId = quickstart.spanContext().traceId;
    const yaml = readFileSync(join(root, "examples/workflow.yaml"), "utf8");
    ({ run: { runId } } = await context.with(trace.setSpan(context.active(), quickstart), () => weft.submit(yaml)));
    quickstart.end();
    let token = "";
    for await (const ev of weft.watchEvents(runId)) {
      if (ev.eventType === "StepWaiting" && ev.stepId === "payment-confirmed") {
        await weft.signalRun({ runId, signalName: "payment-confirmed", payload: { reference: "PAY-7f3a9" } });
      }
      if (ev.payload.case === "stepWaiting" && ev.stepId === "approve-shipment") {
        token = ev.payload.value.completionToken;
        break;
      }
    }
    await weft.completeManualAction({ runId, actionId: "approve-shipment", completionToken: token, actorUserId: "alice", notes: "stock checked 7f3a9" });
    const done = await weft.awaitRun(runId, { timeoutMs: 30000 });
    assert.equal(done.status, RunStatus.COMPLETED, `${done.message}\n${logs}`);
    worker.kill("SIGTERM");
    assert.equal(await exited, 0, `the example worker did not stop cleanly:\n${logs}`);
  } finally {
    worker.kill("SIGKILL");
    await weftd.stop(); // weftd exports what it buffered at shutdown
    await provider.shutdown();
    trace.disable();
    context.disable();
    await recv.close();
  }

  const spans = recv.spans();
  if (process.env.WEFT_TRACE_DUMP) writeFileSync(process.env.WEFT_TRACE_DUMP, renderTree(spans, traceId)); // docs/observability.md's picture
  assert.ok(recv.contentTypes().includes("application/x-protobuf"), "weftd exported nothing");
  assert.ok(recv.contentTypes().includes("application/json"), "the TypeScript worker exported nothing");
  const inTrace = spans.filter((s) => s.traceId === traceId);
  for (const s of spans) {
    if (s.attrs["weft.run_id"] === runId) assert.equal(s.traceId, traceId, `span ${s.name} of the run is in another trace`);
  }
  const only = (what: string, match: (s: GotSpan) => boolean): GotSpan => {
    const found = inTrace.filter(match);
    assert.equal(found.length, 1, `${what}: ${found.length} spans match; the trace has ${inTrace.map((s) => s.name).join(", ")}`);
    return found[0]!;
  };
  const rootSpan = only("the submitter's span", (s) => s.name === "quickstart");
  const submit = only("SubmitRun", (s) => s.name === "weft.v1.RunService/SubmitRun");
  assert.equal(submit.parent, rootSpan.spanId, "SubmitRun continues the submitter's span (the TS client sends its traceparent)");
  assert.equal(submit.service, "weftd");
  const run = only("the run", (s) => s.name === "weft.run");
  assert.equal(run.parent, submit.spanId);
  assert.equal(run.attrs["weft.run_id"], runId);
  assert.equal(run.attrs["weft.plan"], "order-fulfilment");
  for (const [step, activity] of [["reserve", "reserve-inventory"], ["charge", "charge-card"], ["ship", "ship-order"]] as const) {
    const wait = only(`${step}'s queue wait`, (s) => s.name === "weft.task.queue_wait" && s.attrs["weft.step"] === step);
    assert.equal(wait.parent, run.spanId, `${step}'s queue wait is the run's child`);
    assert.equal(wait.attrs["weft.queue"], "default");
    const attempt = only(`${step}'s attempt`, (s) => s.name === "weft.task.attempt" && s.attrs["weft.step"] === step);
    assert.equal(attempt.parent, run.spanId);
    assert.equal(attempt.attrs["weft.outcome"], "completed");
    const act = only(`${step}'s activity`, (s) => s.name === `weft.activity ${activity}`);
    assert.equal(act.service, "example-ts-worker");
    assert.equal(act.parent, attempt.spanId, `the worker's span of ${step} is its attempt's child`);
    assert.equal(act.kind, 5, "the activity's span is a consumer's (OTLP's SPAN_KIND_CONSUMER)");
    assert.equal(act.attrs["weft.run_id"], runId);
    assert.equal(act.attrs["weft.step"], step);
    assert.equal(act.attrs["weft.attempt"], "1");
    assert.equal(act.attrs["weft.task_kind"], "TASK_TYPE_ACTIVITY");
    assert.equal(act.attrs["weft.outcome"], "completed");
    const report = only(`${step}'s report`, (s) => s.name === "weft.v1.WorkerService/CompleteTask" && s.parent === act.spanId);
    const decision = only(`${step}'s report's decision`, (s) => s.name.startsWith("weft.decision") && s.parent === report.spanId);
    assert.equal(decision.attrs["weft.decided_by"], "worker");
    const commit = only(`${step}'s commit`, (s) => s.name === "weft.store.commit" && s.parent === decision.spanId);
    assert.ok(decision.startNs <= commit.startNs && commit.endNs <= decision.endNs, "the commit lies within its decision");
  }
  const signal = only("the signal's decision", (s) => s.name === "weft.decision SignalAccepted" && (s.attrs["weft.events"] ?? "").includes("SignalConsumed"));
  assert.equal(signal.parent, run.spanId, "a signal from outside the trace is decided under the run");
  assert.equal(signal.links.length, 1, "and linked to its call");
  const ids = new Set(inTrace.map((s) => s.spanId));
  for (const s of inTrace) {
    if (s !== rootSpan) assert.ok(ids.has(s.parent), `span ${s.name}'s parent is not in the trace`);
  }
  for (const s of spans) {
    const texts = [s.name, s.status.message, ...Object.entries(s.attrs).flat()];
    for (const e of s.events) texts.push(e.name, ...Object.entries(e.attrs).flat());
    for (const l of s.links) texts.push(...Object.entries(l.attrs).flat());
    for (const text of texts) {
      for (const m of payloadMarkers) assert.ok(!text.includes(m), `span ${s.name} (${s.service}) carries a payload: ${text}`);
    }
  }
});
