package worker

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// tracerName is the instrumentation scope of the worker's spans.
const tracerName = "github.com/weft-dev/weft/client/worker"

// SpanActivity begins the name of an activity's span: "weft.activity
// <activity>".
const SpanActivity = "weft.activity"

// activitySpan is the span of one task's execution; nil when the task is
// not traced, and then every method does nothing.
type activitySpan struct {
	span trace.Span
}

// startActivitySpan starts the activity's span as a child of the attempt's
// span the task names (Task.traceparent), in the run's trace and under its
// sampling decision. It answers ctx (the reports') and actCtx (the
// activity's) carrying the span, so that the activity's own calls and the
// worker's report of the task join the trace. A task without a traceparent
// starts nothing.
func (w *Worker) startActivitySpan(ctx, actCtx context.Context, t *weftv1.Task) (context.Context, context.Context, *activitySpan) {
	tp := t.GetTraceparent()
	if tp == "" {
		return ctx, actCtx, nil
	}
	parent := propagation.TraceContext{}.Extract(actCtx, propagation.MapCarrier{"traceparent": tp})
	if !trace.SpanContextFromContext(parent).IsValid() {
		return ctx, actCtx, nil
	}
	actCtx, span := w.opts.TracerProvider.Tracer(tracerName).Start(parent, SpanActivity+" "+t.GetActivity(),
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("weft.run_id", t.GetRunId()),
			attribute.String("weft.step", t.GetActionId()),
			attribute.String("weft.activity", t.GetActivity()),
			attribute.Int("weft.attempt", int(t.GetLogicalAttemptId())),
			attribute.Int("weft.engine_attempt", int(t.GetEngineAttemptId())),
			attribute.String("weft.task_kind", t.GetTaskType().String()),
			attribute.String("weft.worker_id", w.opts.WorkerID)))
	return trace.ContextWithSpan(ctx, span), actCtx, &activitySpan{span: span}
}

// outcome records how the task ended: completed, failed (with the error
// class, never the message) or not_reported.
func (s *activitySpan) outcome(outcome, class string) {
	if s == nil {
		return
	}
	s.span.SetAttributes(attribute.String("weft.outcome", outcome))
	if outcome == "failed" {
		s.span.SetAttributes(attribute.String("weft.error_class", class))
		s.span.SetStatus(codes.Error, class)
	}
}

// end ends the span, after the task's report.
func (s *activitySpan) end() {
	if s != nil {
		s.span.End()
	}
}
