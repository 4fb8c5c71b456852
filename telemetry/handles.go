package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The handles below bind an instrument to its attributes, so that a call
// site counting one event reads m.published.Inc(). They record without a
// context: no instrument here takes exemplars from a trace.

// Counter is an Int64Counter bound to one attribute set, kept as the option
// slice Add takes so that counting allocates none.
type Counter struct {
	c   metric.Int64Counter
	set []metric.AddOption
}

// NewCounter binds c to attrs.
func NewCounter(c metric.Int64Counter, attrs ...attribute.KeyValue) Counter {
	return Counter{c: c, set: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}}
}

// Inc counts one.
func (c Counter) Inc() { c.Add(1) }

// Add counts n (n ≥ 0); adding 0 makes the series visible at 0.
func (c Counter) Add(n int64) { c.c.Add(context.Background(), n, c.set...) }

// CounterVec is an Int64Counter with one attribute, named key. Each
// series is bound once, on its first count, and kept: a series costs the
// metrics pipeline memory anyway, so the attribute's values must be few.
type CounterVec struct {
	c      metric.Int64Counter
	key    attribute.Key
	series *sync.Map // value → Counter
}

// NewCounterVec answers c counted by the attribute key.
func NewCounterVec(c metric.Int64Counter, key string) CounterVec {
	return CounterVec{c: c, key: attribute.Key(key), series: &sync.Map{}}
}

// WithLabelValues answers the series whose attribute is value.
func (v CounterVec) WithLabelValues(value string) Counter {
	if c, ok := v.series.Load(value); ok {
		return c.(Counter)
	}
	c, _ := v.series.LoadOrStore(value, NewCounter(v.c, v.key.String(value)))
	return c.(Counter)
}

// UpDownCounter is an Int64UpDownCounter without attributes: work in
// progress.
type UpDownCounter struct{ c metric.Int64UpDownCounter }

// NewUpDownCounter wraps c; the series is visible at 0 from the start.
func NewUpDownCounter(c metric.Int64UpDownCounter) UpDownCounter {
	c.Add(context.Background(), 0)
	return UpDownCounter{c: c}
}

// Inc counts one more.
func (u UpDownCounter) Inc() { u.c.Add(context.Background(), 1) }

// Dec counts one fewer.
func (u UpDownCounter) Dec() { u.c.Add(context.Background(), -1) }

// Gauge is a Float64Gauge without attributes: the last value set.
type Gauge struct{ g metric.Float64Gauge }

// NewGauge wraps g.
func NewGauge(g metric.Float64Gauge) Gauge { return Gauge{g: g} }

// Set records v as the current value.
func (g Gauge) Set(v float64) { g.g.Record(context.Background(), v) }
