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
// It imports OpenTelemetry, the Prometheus client and the standard library
// only; server/, export/ and cmd/weftd record into it.
package telemetry
