package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestNewTracing_OffUnlessAnEndpointIsNamedAndNotDisabled: tracing is off
// by default, on with --otlp-endpoint or the OTLP endpoint variables, and
// OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turn it off whatever else
// is set.
func TestNewTracing_OffUnlessAnEndpointIsNamedAndNotDisabled(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint string
		env      map[string]string
		on       bool
	}{
		{name: "nothing set", on: false},
		{name: "flag", endpoint: "http://127.0.0.1:4318", on: true},
		{name: "OTEL_EXPORTER_OTLP_ENDPOINT", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{name: "SDK disabled", endpoint: "http://127.0.0.1:4318", env: map[string]string{"OTEL_SDK_DISABLED": "true"}, on: false},
		{name: "exporter none", endpoint: "http://127.0.0.1:4318", env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}, on: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := NewTracing(context.Background(), TracingConfig{Endpoint: tc.endpoint, Getenv: func(k string) string { return tc.env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tr.Shutdown(context.Background()) }()
			if (tr != nil) != tc.on {
				t.Fatalf("tracing on = %v, want %v", tr != nil, tc.on)
			}
		})
	}
}

// TestNewTracing_BadRatioOrProtocolNamesTheValue: a sample ratio outside
// 0..1 and an unknown protocol are refused with the value.
func TestNewTracing_BadRatioOrProtocolNamesTheValue(t *testing.T) {
	two := 2.0
	env := func(k string) string {
		if k == "OTEL_TRACES_SAMPLER_ARG" {
			return "lots"
		}
		return ""
	}
	for _, cfg := range []TracingConfig{
		{Endpoint: "http://127.0.0.1:1", SampleRatio: &two},
		{Endpoint: "http://127.0.0.1:1", Getenv: env},
		{Endpoint: "http://127.0.0.1:1", Protocol: "carrier-pigeon"},
	} {
		if _, err := NewTracing(context.Background(), cfg); err == nil {
			t.Fatalf("%+v was accepted", cfg)
		}
	}
}

// TestTraceparent_RoundTripsAndRefusesGarbage: a traceparent formatted from
// a span context parses back to it, flags included; garbage is refused.
func TestTraceparent_RoundTripsAndRefusesGarbage(t *testing.T) {
	for _, tp := range []string{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"} {
		sc, err := ParseTraceparent(tp)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatTraceparent(sc); got != tp {
			t.Fatalf("round trip: %s became %s", tp, got)
		}
	}
	for _, bad := range []string{"", "00-zz-yy-01", "00-00000000000000000000000000000000-b7ad6b7169203331-01"} {
		if _, err := ParseTraceparent(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
	if FormatTraceparent(trace.SpanContext{}) != "" {
		t.Fatal("an invalid span context formats")
	}
}

// TestAttemptSpanID_IsTheSameForTheSameClaimOnly: the attempt's span id is
// a function of the trace and the claim token, so that the worker's parent
// and the span weftd writes later are one, and two claims differ.
func TestAttemptSpanID_IsTheSameForTheSameClaimOnly(t *testing.T) {
	sc, err := ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	if err != nil {
		t.Fatal(err)
	}
	a := AttemptSpanID(sc.TraceID(), "run/a/1/activity1#aaaa")
	if a != AttemptSpanID(sc.TraceID(), "run/a/1/activity1#aaaa") || !a.IsValid() {
		t.Fatal("the same claim names two spans")
	}
	if a == AttemptSpanID(sc.TraceID(), "run/a/1/activity1#bbbb") {
		t.Fatal("two claims name one span")
	}
}

// TestWithSpanID_TheNextSpanTakesThePresetID: a span started under
// WithSpanID has that id; one started without it, a random one.
func TestWithSpanID_TheNextSpanTakesThePresetID(t *testing.T) {
	tr := NewTracingWith(tracetest.NewSpanRecorder(), 1, "test")
	defer func() { _ = tr.Shutdown(context.Background()) }()
	want := trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	_, span := tr.Provider.Tracer("t").Start(WithSpanID(context.Background(), want), "x")
	if span.SpanContext().SpanID() != want {
		t.Fatalf("span id %s, want %s", span.SpanContext().SpanID(), want)
	}
	_, other := tr.Provider.Tracer("t").Start(context.Background(), "y")
	if other.SpanContext().SpanID() == want || !other.SpanContext().IsValid() {
		t.Fatal("a span without a preset id took it")
	}
}
