// The activity's span: a child of the attempt's span the task names
// (Task.traceparent), so that the worker's execution of a task, the
// activity's own calls and the task's reports join the run's trace
// (docs/observability.md). Only @opentelemetry/api is used: without an
// OpenTelemetry SDK registered (or a tracerProvider given) nothing is
// recorded or exported, and a task that is not traced starts nothing at all.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import { ErrorClass } from "../gen/weft/v1/common_pb.js";
import { formatTraceparent, parseTraceparent } from "../tracecontext.js";
import { TaskType, type Task } from "../gen/weft/v1/worker_pb.js";

/** The instrumentation scope of the worker's spans. */
export const TRACER_NAME = "@weft-dev/client/worker";

/** Begins the name of an activity's span: "weft.activity <activity>", as the Go worker names it. */
export const SPAN_ACTIVITY = "weft.activity";

/** How a task ended, as its span's weft.outcome says. */
export type SpanOutcome = "completed" | "failed" | "not_reported";

/** The span of one traced task's execution. */
export class ActivitySpan {
  /** The context carrying the span: the activity runs in it and gets it as ctx.traceContext. */
  readonly context: Context;
  /** The span's traceparent, sent with the task's reports and heartbeats so weftd's spans of them nest below it. */
  readonly traceparent: string;
  private readonly span: Span;

  constructor(span: Span, parent: Context) {
    this.span = span;
    this.context = trace.setSpan(parent, span);
    this.traceparent = formatTraceparent(span.spanContext());
  }

  /** outcome records how the task ended; a failure carries its class, never its message. */
  outcome(outcome: SpanOutcome, errorClass?: ErrorClass): void {
    this.span.setAttribute("weft.outcome", outcome);
    if (outcome === "failed" && errorClass !== undefined) {
      const cls = `ERROR_CLASS_${ErrorClass[errorClass] ?? errorClass}`;
      this.span.setAttribute("weft.error_class", cls);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: cls });
    }
  }

  /** end ends the span, after the task's report. */
  end(): void {
    this.span.end();
  }
}

/** The tracer of a worker: the given provider's, else the global one's (which records nothing until an SDK is registered). */
export function workerTracer(provider: TracerProvider | undefined): Tracer {
  return (provider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
}

/**
 * startActivitySpan starts the activity's span as a child of the attempt's
 * span the task names, in the run's trace and under its sampling decision;
 * undefined for a task without a (valid) traceparent.
 */
export function startActivitySpan(tracer: Tracer, t: Task, workerId: string): ActivitySpan | undefined {
  const sc = parseTraceparent(t.traceparent);
  if (!sc) return undefined;
  const parent = trace.setSpanContext(ROOT_CONTEXT, sc);
  const span = tracer.startSpan(
    `${SPAN_ACTIVITY} ${t.activity}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        "weft.run_id": t.runId,
        "weft.step": t.actionId,
        "weft.activity": t.activity,
        "weft.attempt": t.logicalAttemptId,
        "weft.engine_attempt": t.engineAttemptId,
        "weft.task_kind": `TASK_TYPE_${TaskType[t.taskType] ?? t.taskType}`,
        "weft.worker_id": workerId,
      },
    },
    parent,
  );
  return new ActivitySpan(span, parent);
}
