package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
type metrics struct {
	pipeline       *telemetry.Metrics
	requests       metric.Int64Counter
	duration       metric.Float64Histogram
	inFlight       telemetry.UpDownCounter
	submitted      telemetry.CounterVec
	signals        telemetry.CounterVec
	taskReports    telemetry.CounterVec
	tasksHandedOut telemetry.Counter
	jsonrpcReject  telemetry.CounterVec
	// outcomes are the series outcome counts, bound once.
	outcomes outcomeCounters
	// series caches the attribute sets of observe's series, by rpcKey.
	series sync.Map
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
	var errs [8]error
	counter := func(i int, name, unit, help string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(help))
		errs[i] = err
		return c
	}
	m := &metrics{pipeline: pipeline,
		requests: counter(0, "weft.rpc.requests", "{request}",
			"RPCs answered, by procedure, protocol (connect, grpc, grpcweb, jsonrpc) and code (ok or the Connect code)."),
		submitted: telemetry.NewCounterVec(counter(1, "weft.runs.submitted", "{run}",
			"Successful SubmitRun calls, by result: created (a new run) or existing (run_request_id matched a run)."), "result"),
		signals: telemetry.NewCounterVec(counter(2, "weft.signals", "{signal}",
			"Signals answered by SignalRun, by result: accepted (new) or duplicate (the stored result was answered)."), "result"),
		taskReports: telemetry.NewCounterVec(counter(3, "weft.task.reports", "{report}",
			"Task reports applied (duplicates excluded), by outcome: completed, failed (final) or retrying."), "outcome"),
		tasksHandedOut: telemetry.NewCounter(counter(4, "weft.tasks.dispatched", "{task}",
			"Tasks handed to workers, by PollTasks and by eager dispatch with CompleteTask.")),
		jsonrpcReject: telemetry.NewCounterVec(counter(5, "weft.jsonrpc.rejected", "{call}",
			"JSON-RPC calls refused before reaching a procedure, by reason: parse_error, invalid_request, method_not_found, too_large, unsupported_media_type."), "reason"),
	}
	m.duration, errs[6] = meter.Float64Histogram("weft.rpc.duration", metric.WithUnit("s"),
		metric.WithDescription("RPC latency from the first interceptor to the answer, by procedure (long polls and watches included)."),
		metric.WithExplicitBucketBoundaries(rpcDurationBuckets...))
	inFlight, err := meter.Int64UpDownCounter("weft.rpc.in_flight", metric.WithUnit("{request}"),
		metric.WithDescription("RPCs being served now (long polls and watches included)."))
	errs[7] = err
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("server: metrics: %w", err)
	}
	m.inFlight = telemetry.NewUpDownCounter(inFlight)
	m.outcomes = outcomeCounters{
		created: m.submitted.WithLabelValues("created"), existing: m.submitted.WithLabelValues("existing"),
		accepted: m.signals.WithLabelValues("accepted"), duplicate: m.signals.WithLabelValues("duplicate"),
		completed: m.taskReports.WithLabelValues("completed"), failed: m.taskReports.WithLabelValues("failed"),
		retrying: m.taskReports.WithLabelValues("retrying"),
	}
	m.tasksHandedOut.Add(0) // served from the start, as a plain counter is
	return m, nil
}

// observe records one finished RPC.
func (m *metrics) observe(procedure, protocol string, err error, took time.Duration) {
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	s := m.seriesOf(procedure, protocol, code)
	ctx := context.Background()
	m.requests.Add(ctx, 1, s.requests...)
	m.duration.Record(ctx, took.Seconds(), s.duration...)
}

// rpcKey names the series one finished RPC is counted in.
type rpcKey struct{ procedure, protocol, code string }

// rpcSeries are the attribute sets of one rpcKey's series, built once: the
// RPCs a server answers name only its procedures, protocols and codes, so
// there are few of them.
// They are kept as the option slices the instruments take, so that
// recording allocates none.
type rpcSeries struct {
	requests []metric.AddOption
	duration []metric.RecordOption
}

// seriesOf answers the series of an RPC, building them the first time.
func (m *metrics) seriesOf(procedure, protocol, code string) *rpcSeries {
	key := rpcKey{procedure, protocol, code}
	if s, ok := m.series.Load(key); ok {
		return s.(*rpcSeries)
	}
	s := &rpcSeries{
		requests: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("procedure", procedure),
			attribute.String("protocol", protocol), attribute.String("code", code)))},
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
		pick(r.GetExisting(), o.existing, o.created).Inc()
	case *weftv1.SignalRunResponse:
		pick(r.GetDuplicate(), o.duplicate, o.accepted).Inc()
	case *weftv1.CompleteTaskResponse:
		if !r.GetDuplicate() {
			o.completed.Inc()
		}
		if n := len(r.GetTasks()); n > 0 {
			m.tasksHandedOut.Add(int64(n)) // eager dispatch
		}
	case *weftv1.FailTaskResponse:
		if !r.GetDuplicate() {
			pick(r.GetWillRetry(), o.retrying, o.failed).Inc()
		}
	case *weftv1.PollTasksResponse:
		if n := len(r.GetTasks()); n > 0 {
			m.tasksHandedOut.Add(int64(n))
		}
	}
}

// outcomeCounters are the series outcome counts in.
type outcomeCounters struct {
	created, existing, accepted, duplicate, completed, failed, retrying telemetry.Counter
}

func pick(cond bool, yes, no telemetry.Counter) telemetry.Counter {
	if cond {
		return yes
	}
	return no
}
