package server

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/telemetry"
)

// tracerName is the instrumentation scope of the engine's spans.
const tracerName = "github.com/weft-dev/weft/engine"

// Span names and attribute keys of a run's trace (docs/observability.md).
// No span or attribute carries an input, an output or an error's message.
const (
	SpanRun         = "weft.run"
	SpanDecision    = "weft.decision"
	SpanStoreCommit = "weft.store.commit"
	SpanQueueWait   = "weft.task.queue_wait"
	SpanAttempt     = "weft.task.attempt"

	AttrRunID          = attribute.Key("weft.run_id")
	AttrPlan           = attribute.Key("weft.plan")
	AttrPlanVersion    = attribute.Key("weft.plan_version")
	AttrStep           = attribute.Key("weft.step")
	AttrAttempt        = attribute.Key("weft.attempt")
	AttrEngineAttempt  = attribute.Key("weft.engine_attempt")
	AttrQueue          = attribute.Key("weft.queue")
	AttrActivity       = attribute.Key("weft.activity")
	AttrTaskKind       = attribute.Key("weft.task_kind")
	AttrOutcome        = attribute.Key("weft.outcome")
	AttrEvents         = attribute.Key("weft.events")
	AttrDecidedBy      = attribute.Key("weft.decided_by")
	AttrCommitted      = attribute.Key("weft.committed")
	AttrExisting       = attribute.Key("weft.existing")
	AttrStoreOps       = attribute.Key("weft.store.ops")
	AttrDecisionSource = attribute.Key("weft.source")
)

// Observer is the engine's Observer (engine.Config.Observer) over
// OpenTelemetry: the spans of every run's trace when tracing is on, and the
// per-plan and per-queue metrics (observe_metrics.go) when metrics are.
type Observer struct {
	tracer  trace.Tracer // nil: tracing off
	metrics *runMetrics  // nil: metrics off
}

// NewObserver answers the engine's observer recording into tracing and
// metrics; either may be nil (off). Both nil: nil, and the engine observes
// nothing.
func NewObserver(tracing *telemetry.Tracing, metrics *telemetry.Metrics) (*Observer, error) {
	o := &Observer{}
	if tracing != nil {
		o.tracer = tracing.Provider.Tracer(tracerName)
	}
	if metrics != nil {
		m, err := newRunMetrics(metrics.Provider.Meter(meterName))
		if err != nil {
			return nil, err
		}
		o.metrics = m
	}
	if o.tracer == nil && o.metrics == nil {
		return nil, nil
	}
	return o, nil
}

// SubmitStarting starts the run's span under the caller's (the SubmitRun
// call's, which continues the submitter's traceparent): every later span of
// the run descends from it, through the traceparent kept with the run.
func (o *Observer) SubmitStarting(ctx context.Context, planID string) (context.Context, string) {
	if o.tracer == nil {
		return ctx, ""
	}
	ctx, span := o.tracer.Start(ctx, SpanRun, trace.WithAttributes(AttrPlan.String(planID)))
	return ctx, telemetry.FormatTraceparent(span.SpanContext())
}

// SubmitEnded ends the run's span.
func (o *Observer) SubmitEnded(ctx context.Context, runID string, existing bool, err error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(AttrRunID.String(runID), AttrExisting.Bool(existing))
	endWith(span, err)
}

// DecisionStarting starts the decision's span in the run's trace: under the
// call's span when the call belongs to that trace (a worker's report), else
// under the run's span with a link to the call's (a poll, an operator's
// signal, a timer). A run kept without a sampled traceparent has no spans.
func (o *Observer) DecisionStarting(ctx context.Context, run engine.ObservedRun, actor string) context.Context {
	if o.tracer == nil || run.TraceParent == "" {
		return ctx
	}
	runSC, err := telemetry.ParseTraceparent(run.TraceParent)
	if err != nil || !runSC.IsSampled() {
		return ctx
	}
	parent := ctx
	var opts []trace.SpanStartOption
	if call := trace.SpanContextFromContext(ctx); call.TraceID() != runSC.TraceID() {
		parent = trace.ContextWithRemoteSpanContext(ctx, runSC)
		if call.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: call}))
		}
	}
	opts = append(opts, trace.WithAttributes(AttrRunID.String(run.RunID), AttrPlan.String(run.PlanID),
		AttrDecidedBy.String(actorKind(actor))))
	ctx, _ = o.tracer.Start(parent, SpanDecision, opts...)
	return ctx
}

// actorKind answers who decided, without naming them: a worker's report,
// the engine's own background work, or a caller of the API.
func actorKind(actor string) string {
	switch {
	case strings.HasPrefix(actor, "activity-worker:"):
		return "worker"
	case strings.HasPrefix(actor, "engine:"):
		return "engine"
	}
	return "api"
}

// StoreCommitted records the commit's span, with the store's time.
func (o *Observer) StoreCommitted(ctx context.Context, start time.Time, ops int, err error) {
	if o.tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	_, span := o.tracer.Start(ctx, SpanStoreCommit, trace.WithTimestamp(start), trace.WithAttributes(AttrStoreOps.Int(ops)))
	endWith(span, err)
}

// TaskClaimed answers the attempt's traceparent: the run's trace, the span
// the attempt's claim token names (telemetry.AttemptSpanID) and the run's
// sampling decision.
func (o *Observer) TaskClaimed(_ context.Context, run engine.ObservedRun, task engine.ObservedTask) string {
	if o.tracer == nil || run.TraceParent == "" {
		return ""
	}
	runSC, err := telemetry.ParseTraceparent(run.TraceParent)
	if err != nil {
		return ""
	}
	return telemetry.FormatTraceparent(runSC.WithSpanID(telemetry.AttemptSpanID(runSC.TraceID(), task.Token)))
}

// DecisionEnded ends the decision's span, named by the events it appended,
// and, once it committed, records the queue waits of its claims and the
// spans of the attempts it ended, then its metrics.
func (o *Observer) DecisionEnded(ctx context.Context, d engine.ObservedDecision) {
	if d.Committed && o.metrics != nil {
		o.metrics.decided(d)
	}
	span := trace.SpanFromContext(ctx)
	if o.tracer == nil || !span.IsRecording() {
		return
	}
	if len(d.Events) > 0 {
		span.SetName(SpanDecision + " " + d.Events[0].Type)
		span.SetAttributes(AttrEvents.StringSlice(eventTypes(d.Events)))
	}
	span.SetAttributes(AttrCommitted.Bool(d.Committed))
	if d.Committed {
		o.taskSpans(d)
	}
	endWith(span, d.Err)
}

// taskSpans records the queue wait of each task the decision claimed and
// the span of each attempt it ended, under the run's span.
func (o *Observer) taskSpans(d engine.ObservedDecision) {
	runSC, err := telemetry.ParseTraceparent(d.Run.TraceParent)
	if err != nil {
		return
	}
	runCtx := trace.ContextWithRemoteSpanContext(context.Background(), runSC)
	for _, t := range d.Claimed {
		ready := t.ReadyAt
		if ready.IsZero() || ready.After(t.ClaimedAt) {
			ready = t.ClaimedAt
		}
		_, span := o.tracer.Start(runCtx, SpanQueueWait, trace.WithTimestamp(ready), trace.WithAttributes(taskAttrs(d.Run, t)...))
		span.End(trace.WithTimestamp(t.ClaimedAt))
	}
	for _, t := range d.Ended {
		ctx := telemetry.WithSpanID(runCtx, telemetry.AttemptSpanID(runSC.TraceID(), t.Token))
		_, span := o.tracer.Start(ctx, SpanAttempt, trace.WithTimestamp(t.ClaimedAt),
			trace.WithAttributes(append(taskAttrs(d.Run, t), AttrOutcome.String(t.Outcome))...))
		if t.Outcome != "completed" {
			span.SetStatus(codes.Error, t.Outcome)
		}
		span.End(trace.WithTimestamp(t.EndedAt))
	}
}

// taskAttrs are a task's span attributes: identifiers and names only.
func taskAttrs(run engine.ObservedRun, t engine.ObservedTask) []attribute.KeyValue {
	return []attribute.KeyValue{AttrRunID.String(run.RunID), AttrPlan.String(run.PlanID), AttrStep.String(t.ActionID),
		AttrAttempt.Int(t.LogicalAttempt), AttrEngineAttempt.Int(t.EngineAttempt), AttrQueue.String(t.Queue),
		AttrActivity.String(t.Activity), AttrTaskKind.String(string(t.Kind))}
}

func eventTypes(events []runstate.Event) []string {
	out := make([]string, len(events))
	for i := range events {
		out[i] = events[i].Type
	}
	return out
}

// endWith ends span, marking it failed by err's code (never its message,
// which may quote what a caller sent).
func endWith(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, string(engine.CodeOf(err)))
	}
	span.End()
}
