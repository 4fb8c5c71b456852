package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
)

// The bounds on the metrics' label values (docs/observability.md#cardinality):
// the first MaxPlanLabels plans and MaxQueueLabels queues a weftd sees get a
// series of their own, any later one is counted under OtherLabel. Error
// classes and outcomes are closed sets.
const (
	MaxPlanLabels  = 100
	MaxQueueLabels = 200
	OtherLabel     = "_other"
)

// durationBuckets span a quick step (5 ms) to a long run (an hour).
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}

// runMetrics are the per-plan and per-queue instruments the engine's
// decisions feed once they commit.
type runMetrics struct {
	runDuration, stepDuration, queueWait metric.Float64Histogram
	failures                             metric.Int64Counter
	plans, queues                        *boundedLabels
	// sets are the attribute sets by series, built once (seriesKey): a
	// map under a lock rather than a sync.Map, whose keys are interfaces
	// (a struct key would be allocated on every look-up).
	mu   sync.RWMutex
	sets map[seriesKey]*seriesOpts
}

// seriesOpts are one series' attributes as the options the instruments
// take, kept as slices so that recording allocates none.
type seriesOpts struct {
	rec []metric.RecordOption
	add []metric.AddOption
}

func newRunMetrics(meter metric.Meter) (*runMetrics, error) {
	hist := func(name, help string) (metric.Float64Histogram, error) {
		return meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(help),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
	}
	runDuration, err1 := hist("weft.run.duration", "Runs from submission to their end, by plan and final status (completed, failed, cancelled).")
	stepDuration, err2 := hist("weft.step.duration", "Attempts of steps from their claim to their end, by plan, queue and outcome (completed, failed, timed_out).")
	queueWait, err3 := hist("weft.queue.wait", "How long tasks waited in their queue, from ready to claimed, by plan and queue.")
	failures, err4 := meter.Int64Counter("weft.step.failures", metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts of steps that did not succeed, by plan and error class (the class that decides the retry; timed_out for a timeout)."))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return nil, fmt.Errorf("server: run metrics: %w", err)
	}
	return &runMetrics{runDuration: runDuration, stepDuration: stepDuration, queueWait: queueWait, failures: failures,
		plans: newBoundedLabels(MaxPlanLabels), queues: newBoundedLabels(MaxQueueLabels),
		sets: map[seriesKey]*seriesOpts{}}, nil
}

// decided records what a committed decision says: its claims' queue waits,
// its attempts' durations, its failures and the run's end.
func (m *runMetrics) decided(d engine.ObservedDecision) {
	ctx := context.Background()
	plan := m.plans.of(d.Run.PlanID)
	for i := range d.Claimed {
		t := &d.Claimed[i]
		if wait := t.ClaimedAt.Sub(t.ReadyAt); !t.ReadyAt.IsZero() && wait >= 0 {
			m.queueWait.Record(ctx, wait.Seconds(), m.set(seriesKey{"wait", plan, m.queues.of(t.Queue), ""}).rec...)
		}
	}
	for i := range d.Ended {
		t := &d.Ended[i]
		m.stepDuration.Record(ctx, t.EndedAt.Sub(t.ClaimedAt).Seconds(), m.set(seriesKey{"step", plan, m.queues.of(t.Queue), t.Outcome}).rec...)
	}
	for i := range d.Events {
		ev := &d.Events[i]
		switch ev.Type {
		case runstate.EvStepAttemptRecorded:
			if a := ev.Data.Attempt; a != nil && a.Outcome != runstate.AttemptSucceeded {
				m.failures.Add(ctx, 1, m.set(seriesKey{"fail", plan, "", failureClass(a)}).add...)
			}
		case runstate.EvRunCompleted, runstate.EvRunFailed, runstate.EvRunCancelled:
			m.runDuration.Record(ctx, ev.EmittedAt.Sub(d.Run.CreatedAt).Seconds(), m.set(seriesKey{"run", plan, "", runStatusLabel(ev.Type)}).rec...)
		}
	}
}

// failureClass is an attempt's error class, or its outcome when it has none.
func failureClass(a *runstate.Attempt) string {
	if a.Error != nil && a.Error.Class != "" {
		return string(a.Error.Class)
	}
	return string(a.Outcome)
}

func runStatusLabel(eventType string) string {
	switch eventType {
	case runstate.EvRunCompleted:
		return "completed"
	case runstate.EvRunFailed:
		return "failed"
	}
	return "cancelled"
}

// seriesKey names one series: the instrument and its label values.
type seriesKey struct{ kind, plan, queue, third string }

// attrs answers the series' attributes.
func (k seriesKey) attrs() attribute.Set {
	switch k.kind {
	case "wait":
		return attribute.NewSet(attribute.String("plan", k.plan), attribute.String("queue", k.queue))
	case "step":
		return attribute.NewSet(attribute.String("plan", k.plan), attribute.String("queue", k.queue), attribute.String("outcome", k.third))
	case "fail":
		return attribute.NewSet(attribute.String("plan", k.plan), attribute.String("error_class", k.third))
	}
	return attribute.NewSet(attribute.String("plan", k.plan), attribute.String("status", k.third))
}

// set answers the series' options, built once.
func (m *runMetrics) set(k seriesKey) *seriesOpts {
	m.mu.RLock()
	o, ok := m.sets[k]
	m.mu.RUnlock()
	if ok {
		return o
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.sets[k]; ok {
		return o
	}
	opt := metric.WithAttributeSet(k.attrs())
	o = &seriesOpts{rec: []metric.RecordOption{opt}, add: []metric.AddOption{opt}}
	m.sets[k] = o
	return o
}

// boundedLabels admits the first max distinct values of a label; any other
// is OtherLabel.
type boundedLabels struct {
	mu   sync.RWMutex
	seen map[string]struct{}
	max  int
}

func newBoundedLabels(max int) *boundedLabels {
	return &boundedLabels{seen: make(map[string]struct{}, max), max: max}
}

// of answers the label value for v.
func (b *boundedLabels) of(v string) string {
	b.mu.RLock()
	_, ok := b.seen[v]
	b.mu.RUnlock()
	if ok {
		return v
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return OtherLabel
	}
	b.seen[v] = struct{}{}
	return v
}
