package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/telemetry"
)

// tracingFlags registers weftd's tracing flags on fs and answers the call
// that reads them once fs is parsed (docs/observability.md#export). Tracing
// is off unless --otlp-endpoint or an OTEL_EXPORTER_OTLP_*ENDPOINT variable
// names a collector; the other OTEL_* variables the OTLP exporters and the
// SDK define are honoured as they document.
func tracingFlags(fs *flag.FlagSet, getenv func(string) string) func() (telemetry.TracingConfig, error) {
	endpoint := fs.String("otlp-endpoint", getenv("WEFT_OTLP_ENDPOINT"),
		"send traces to this OTLP collector URL, e.g. http://127.0.0.1:4318 (off when empty and OTEL_EXPORTER_OTLP_ENDPOINT is unset)")
	protocol := fs.String("otlp-protocol", getenv("WEFT_OTLP_PROTOCOL"), `OTLP protocol: "http/protobuf" or "grpc" (default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)`)
	ratio := fs.String("trace-sample-ratio", getenv("WEFT_TRACE_SAMPLE_RATIO"),
		"share of new traces recorded, 0 to 1 (default: OTEL_TRACES_SAMPLER_ARG, else 1); a run's trace follows its submitter's decision")
	return func() (telemetry.TracingConfig, error) {
		cfg := telemetry.TracingConfig{Endpoint: *endpoint, Protocol: *protocol, Getenv: getenv}
		switch *protocol {
		case "", telemetry.ProtocolHTTP, telemetry.ProtocolGRPC:
		default:
			return cfg, fmt.Errorf("otlp protocol must be %q or %q, got %q", telemetry.ProtocolHTTP, telemetry.ProtocolGRPC, *protocol)
		}
		if *ratio != "" {
			r, err := strconv.ParseFloat(*ratio, 64)
			if err != nil || r < 0 || r > 1 {
				return cfg, fmt.Errorf("trace sample ratio must be a number from 0 to 1, got %q", *ratio)
			}
			cfg.SampleRatio = &r
		}
		return cfg, nil
	}
}

// tracingShutdownTimeout bounds the export of the spans still buffered at
// shutdown.
const tracingShutdownTimeout = 5 * time.Second

// startTracing opens the trace pipeline cfg asks for (nil: off) and answers
// the call that flushes and closes it.
func startTracing(ctx context.Context, cfg telemetry.TracingConfig, logger *slog.Logger) (*telemetry.Tracing, func(), error) {
	tracing, err := telemetry.NewTracing(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %w", err)
	}
	if tracing == nil {
		return nil, func() {}, nil
	}
	logger.Info("tracing on: spans exported over OTLP")
	return tracing, func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
		defer cancel()
		if err := tracing.Shutdown(ctx); err != nil {
			logger.Warn("spans not exported at shutdown", slog.String("error", err.Error()))
		}
	}, nil
}

// engineObserver answers o as the engine's Observer: nil (observe nothing)
// when o is nil, never a non-nil interface holding a nil pointer.
func engineObserver(o *server.Observer) engine.Observer {
	if o == nil {
		return nil
	}
	return o
}
