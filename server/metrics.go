package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/telemetry"
)

// MetricsPath is where the Prometheus text exposition is served.
const MetricsPath = "/metrics"

// meterName is the instrumentation scope of the server's instruments.
const meterName = "github.com/weft-dev/weft/server"

// metrics are one server's OpenTelemetry instruments, on a pipeline of its
// own unless Config.Metrics shares one, so that several servers in one
// process never share counters. The Prometheus exporter names them:
// "weft.rpc.requests" is served as weft_rpc_requests_total (package
// telemetry). docs/api.md lists every metric; keep the two in step.
//
// Every call counts in several of them, so the counters a call touches are
// the server's own atomics, which asynchronous instruments report at scrape
// time (observeCounts): a synchronous instrument's Add resolves its
// attribute set and takes the SDK's aggregation path on every call, which
// cost a worker's call more than its interceptors. Only the latency
// histogram is recorded as the call ends.
type metrics struct {
	pipeline       *telemetry.Metrics
	duration       metric.Float64Histogram
	inFlight       atomic.Int64
	tasksHandedOut atomic.Int64
	outcomes       outcomeCounts
	jsonrpcReject  telemetry.CounterVec
	// series are the RPCs' series, by rpcKey.
	series sync.Map
	// The asynchronous instruments observeCounts reports.
	requestsObs, inFlightObs, submittedObs, signalsObs, reportsObs, dispatchedObs metric.Int64Observable
}

// outcomeCounts are what answers said happened to runs, signals and tasks.
type outcomeCounts struct {
	created, existing, accepted, duplicate, completed, failed, retrying atomic.Int64
}

// rpcDurationBuckets span a fast read (1 ms) to a long poll (30 s).
var rpcDurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newMetrics(pipeline *telemetry.Metrics) (*metrics, error) {
	if pipeline == nil {
		var err error
		if pipeline, err = telemetry.NewMetrics(); err != nil {
			return nil, err
		}
	}
	meter := pipeline.Provider.Meter(meterName)
	var errs [9]error
	observed := func(i int, name, unit, help string) metric.Int64Observable {
		c, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(help))
		errs[i] = err
		return c
	}
	m := &metrics{pipeline: pipeline,
		requestsObs: observed(0, "weft.rpc.requests", "{request}",
			"RPCs answered, by procedure, protocol (connect, grpc, grpcweb, jsonrpc) and code (ok or the Connect code)."),
		submittedObs: observed(1, "weft.runs.submitted", "{run}",
			"Successful SubmitRun calls, by result: created (a new run) or existing (run_request_id matched a run)."),
		signalsObs: observed(2, "weft.signals", "{signal}",
			"Signals answered by SignalRun, by result: accepted (new) or duplicate (the stored result was answered)."),
		reportsObs: observed(3, "weft.task.reports", "{report}",
			"Task reports applied (duplicates excluded), by outcome: completed, failed (final) or retrying."),
		dispatchedObs: observed(4, "weft.tasks.dispatched", "{task}",
			"Tasks handed to workers, by PollTasks and by eager dispatch with CompleteTask."),
	}
	jsonrpcReject, err := meter.Int64Counter("weft.jsonrpc.rejected", metric.WithUnit("{call}"),
		metric.WithDescription("JSON-RPC calls refused before reaching a procedure, by reason: parse_error, invalid_request, method_not_found, too_large, unsupported_media_type."))
	errs[5] = err
	m.jsonrpcReject = telemetry.NewCounterVec(jsonrpcReject, "reason")
	m.duration, errs[6] = meter.Float64Histogram("weft.rpc.duration", metric.WithUnit("s"),
		metric.WithDescription("RPC latency from the first interceptor to the answer, by procedure (long polls and watches included)."),
		metric.WithExplicitBucketBoundaries(rpcDurationBuckets...))
	m.inFlightObs, errs[7] = meter.Int64ObservableUpDownCounter("weft.rpc.in_flight", metric.WithUnit("{request}"),
		metric.WithDescription("RPCs being served now (long polls and watches included)."))
	if errors.Join(errs[:8]...) == nil {
		_, errs[8] = meter.RegisterCallback(m.observeCounts, m.requestsObs, m.inFlightObs, m.submittedObs,
			m.signalsObs, m.reportsObs, m.dispatchedObs)
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("server: metrics: %w", err)
	}
	return m, nil
}

// The attribute sets of the outcome series.
var (
	attrsCreated   = metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "created")))
	attrsExisting  = metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "existing")))
	attrsAccepted  = metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "accepted")))
	attrsDuplicate = metric.WithAttributeSet(attribute.NewSet(attribute.String("result", "duplicate")))
	attrsCompleted = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "completed")))
	attrsFailed    = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "failed")))
	attrsRetrying  = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "retrying")))
)

// observeCounts reports the counts at scrape time. A labelled series is
// reported once it has counted something, as a synchronous counter's
// appears at its first Add; weft_tasks_dispatched_total and
// weft_rpc_in_flight are served at 0 from the start.
func (m *metrics) observeCounts(_ context.Context, o metric.Observer) error {
	m.series.Range(func(_, v any) bool {
		s := v.(*rpcSeries)
		if n := s.requests.Load(); n > 0 {
			o.ObserveInt64(m.requestsObs, n, s.attrs)
		}
		return true
	})
	o.ObserveInt64(m.inFlightObs, m.inFlight.Load())
	o.ObserveInt64(m.dispatchedObs, m.tasksHandedOut.Load())
	c := &m.outcomes
	for _, series := range []struct {
		obs   metric.Int64Observable
		n     *atomic.Int64
		attrs metric.ObserveOption
	}{
		{m.submittedObs, &c.created, attrsCreated}, {m.submittedObs, &c.existing, attrsExisting},
		{m.signalsObs, &c.accepted, attrsAccepted}, {m.signalsObs, &c.duplicate, attrsDuplicate},
		{m.reportsObs, &c.completed, attrsCompleted}, {m.reportsObs, &c.failed, attrsFailed},
		{m.reportsObs, &c.retrying, attrsRetrying},
	} {
		if n := series.n.Load(); n > 0 {
			o.ObserveInt64(series.obs, n, series.attrs)
		}
	}
	return nil
}

// observe records one finished RPC.
func (m *metrics) observe(procedure, protocol string, err error, took time.Duration) {
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	s := m.seriesOf(procedure, protocol, code)
	s.requests.Add(1)
	m.duration.Record(context.Background(), took.Seconds(), s.duration...)
}

// rpcKey names the series one finished RPC is counted in.
type rpcKey struct{ procedure, protocol, code string }

// rpcSeries is one rpcKey's count and the attribute sets of its series,
// built once: the RPCs a server answers name only its procedures, protocols
// and codes, so there are few of them. They are kept as the options the
// instruments take, so that recording allocates none.
type rpcSeries struct {
	requests atomic.Int64
	attrs    metric.ObserveOption
	duration []metric.RecordOption
}

// seriesOf answers the series of an RPC, building them the first time.
func (m *metrics) seriesOf(procedure, protocol, code string) *rpcSeries {
	key := rpcKey{procedure, protocol, code}
	if s, ok := m.series.Load(key); ok {
		return s.(*rpcSeries)
	}
	s := &rpcSeries{
		attrs: metric.WithAttributeSet(attribute.NewSet(attribute.String("procedure", procedure),
			attribute.String("protocol", protocol), attribute.String("code", code))),
		duration: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("procedure", procedure)))},
	}
	actual, _ := m.series.LoadOrStore(key, s)
	return actual.(*rpcSeries)
}

// outcome counts what a successful answer says happened to runs, signals
// and tasks. The engine exposes no counts of its own; these are the
// server's view of the calls it answered.
func (m *metrics) outcome(res any) {
	o := &m.outcomes
	switch r := res.(type) {
	case *weftv1.SubmitRunResponse:
		pick(r.GetExisting(), &o.existing, &o.created).Add(1)
	case *weftv1.SignalRunResponse:
		pick(r.GetDuplicate(), &o.duplicate, &o.accepted).Add(1)
	case *weftv1.CompleteTaskResponse:
		if !r.GetDuplicate() {
			o.completed.Add(1)
		}
		if n := len(r.GetTasks()); n > 0 {
			m.tasksHandedOut.Add(int64(n)) // eager dispatch
		}
	case *weftv1.FailTaskResponse:
		if !r.GetDuplicate() {
			pick(r.GetWillRetry(), &o.retrying, &o.failed).Add(1)
		}
	case *weftv1.PollTasksResponse:
		if n := len(r.GetTasks()); n > 0 {
			m.tasksHandedOut.Add(int64(n))
		}
	}
}

func pick(cond bool, yes, no *atomic.Int64) *atomic.Int64 {
	if cond {
		return yes
	}
	return no
}
