package server

import (
	"net/http"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// MetricsPath is where the Prometheus text exposition is served.
const MetricsPath = "/metrics"

// metrics are one server's Prometheus collectors, on a registry of its own
// so that several servers in one process never share counters. docs/api.md
// lists every metric; keep the two in step.
type metrics struct {
	registry       *prometheus.Registry
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	inFlight       prometheus.Gauge
	submitted      *prometheus.CounterVec
	signals        *prometheus.CounterVec
	taskReports    *prometheus.CounterVec
	tasksHandedOut prometheus.Counter
	jsonrpcReject  *prometheus.CounterVec
}

// rpcDurationBuckets span a fast read (1 ms) to a long poll (30 s).
var rpcDurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newMetrics(registry *prometheus.Registry) *metrics {
	if registry == nil {
		registry = prometheus.NewRegistry()
	}
	m := &metrics{
		registry: registry,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_rpc_requests_total",
			Help: "RPCs answered, by procedure, protocol (connect, grpc, grpcweb, jsonrpc) and code (ok or the Connect code).",
		}, []string{"procedure", "protocol", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "weft_rpc_duration_seconds",
			Help:    "RPC latency from the first interceptor to the answer, by procedure (long polls and watches included).",
			Buckets: rpcDurationBuckets,
		}, []string{"procedure"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weft_rpc_in_flight",
			Help: "RPCs being served now (long polls and watches included).",
		}),
		submitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_runs_submitted_total",
			Help: "Successful SubmitRun calls, by result: created (a new run) or existing (run_request_id matched a run).",
		}, []string{"result"}),
		signals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_signals_total",
			Help: "Signals answered by SignalRun, by result: accepted (new) or duplicate (the stored result was answered).",
		}, []string{"result"}),
		taskReports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_task_reports_total",
			Help: "Task reports applied (duplicates excluded), by outcome: completed, failed (final) or retrying.",
		}, []string{"outcome"}),
		tasksHandedOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weft_tasks_dispatched_total",
			Help: "Tasks handed to workers by PollTasks.",
		}),
		jsonrpcReject: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weft_jsonrpc_rejected_total",
			Help: "JSON-RPC calls refused before reaching a procedure, by reason: parse_error, invalid_request, method_not_found, too_large, unsupported_media_type.",
		}, []string{"reason"}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.inFlight, m.submitted, m.signals, m.taskReports,
		m.tasksHandedOut, m.jsonrpcReject,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// observe records one finished RPC.
func (m *metrics) observe(procedure, protocol string, err error, took time.Duration) {
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	m.requests.WithLabelValues(procedure, protocol, code).Inc()
	m.duration.WithLabelValues(procedure).Observe(took.Seconds())
}

// outcome counts what a successful answer says happened to runs, signals
// and tasks. The engine exposes no counts of its own; these are the
// server's view of the calls it answered.
func (m *metrics) outcome(res any) {
	switch r := res.(type) {
	case *weftv1.SubmitRunResponse:
		m.submitted.WithLabelValues(pick(r.GetExisting(), "existing", "created")).Inc()
	case *weftv1.SignalRunResponse:
		m.signals.WithLabelValues(pick(r.GetDuplicate(), "duplicate", "accepted")).Inc()
	case *weftv1.CompleteTaskResponse:
		if !r.GetDuplicate() {
			m.taskReports.WithLabelValues("completed").Inc()
		}
	case *weftv1.FailTaskResponse:
		if !r.GetDuplicate() {
			m.taskReports.WithLabelValues(pick(r.GetWillRetry(), "retrying", "failed")).Inc()
		}
	case *weftv1.PollTasksResponse:
		m.tasksHandedOut.Add(float64(len(r.GetTasks())))
	}
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}
