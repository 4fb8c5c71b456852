// OpenTelemetry tracing for a TypeScript worker: load it before the worker,
//
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_SERVICE_NAME=example-ts-worker \
//     node --import ./examples/ts/tracing.ts examples/ts/worker.ts
//
// It registers the OpenTelemetry Node SDK (a tracer provider, the
// AsyncLocalStorage context manager, the W3C propagator) with a batching
// OTLP/HTTP exporter, which reads the OTEL_EXPORTER_OTLP_* variables itself.
// The worker runtime then starts each traced task's span ("weft.activity
// <name>") as a child of the attempt's span in the run's trace and runs the
// activity inside it, so the activity's instrumented calls join the trace.
// The sampler follows the run's decision (parent-based), as weftd's does.
// Spans still buffered are exported when the process is about to exit.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, detectResources, envDetector } from "@opentelemetry/resources";
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";

const provider = new NodeTracerProvider({
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the process.
  resource: defaultResource().merge(detectResources({ detectors: [envDetector] })),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();

let flushed = false;
process.on("beforeExit", () => {
  if (flushed) return;
  flushed = true;
  void provider.shutdown();
});
