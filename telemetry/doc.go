// Package telemetry builds Weft's metrics pipeline: OpenTelemetry
// instruments on an SDK MeterProvider, read at scrape time by the
// OpenTelemetry Prometheus exporter into a Prometheus registry of their own,
// and served in the Prometheus text format.
//
// Instruments carry OpenTelemetry names ("weft.rpc.requests", unit "s" for
// durations); the exporter gives them Prometheus names by the
// UnderscoreEscapingWithSuffixes strategy: dots become underscores, counters
// end in _total and a unit adds its suffix (weft_rpc_duration_seconds).
// Scope labels and target_info are left out, so a series carries only the
// attributes its instrument recorded.
//
// It also builds the trace pipeline (tracing.go): an OpenTelemetry
// TracerProvider exporting over OTLP (HTTP or gRPC), sampling parent-based
// by ratio, off unless a collector is named; the W3C traceparent helpers a
// run's trace is kept and handed on with; and the span id of an attempt,
// derived from its claim, that weftd and the worker agree on
// (docs/observability.md).
//
// It imports OpenTelemetry, the Prometheus client and the standard library
// only; server/, export/ and cmd/weftd record into it.
package telemetry
