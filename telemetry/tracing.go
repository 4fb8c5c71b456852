package telemetry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP protocols TracingConfig.Protocol takes, named as
// OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// TracingConfig says where weftd's spans go. Tracing is off unless an
// endpoint is given (here or in OTEL_EXPORTER_OTLP_TRACES_ENDPOINT /
// OTEL_EXPORTER_OTLP_ENDPOINT), and OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none turn it off whatever the flags say. The
// exporters read the other OTEL_EXPORTER_OTLP_* variables themselves
// (headers, timeout, certificates, compression).
type TracingConfig struct {
	// Endpoint is the collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
	// takes it (http://host:4318 for HTTP, to which /v1/traces is added;
	// http://host:4317 for gRPC); an http:// URL is sent without TLS.
	Endpoint string
	// Protocol is ProtocolHTTP or ProtocolGRPC. Empty: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
	// OTEL_EXPORTER_OTLP_PROTOCOL, else ProtocolHTTP.
	Protocol string
	// SampleRatio is the share of new traces recorded (0 to 1); a trace
	// whose parent was sampled (or not) follows its parent, so a run's trace
	// is sampled whole or not at all. Nil: OTEL_TRACES_SAMPLER_ARG, else 1.
	SampleRatio *float64
	// ServiceName names the process (default weftd; OTEL_SERVICE_NAME wins).
	ServiceName string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// Tracing is one trace pipeline: a TracerProvider whose batches go to an
// OTLP collector. A nil *Tracing is tracing off.
type Tracing struct {
	// Provider creates the tracers.
	Provider *sdktrace.TracerProvider
	// Propagator reads and writes W3C traceparent and tracestate.
	Propagator propagation.TextMapPropagator
}

// NewTracing answers the pipeline cfg asks for, or nil when tracing is off.
func NewTracing(ctx context.Context, cfg TracingConfig) (*Tracing, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if !tracingOn(cfg, getenv) {
		return nil, nil
	}
	ratio, err := sampleRatio(cfg, getenv)
	if err != nil {
		return nil, err
	}
	exporter, err := newExporter(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	return NewTracingWith(sdktrace.NewBatchSpanProcessor(exporter), ratio, cmpOr(cfg.ServiceName, "weftd")), nil
}

// NewTracingWith answers a pipeline whose spans go to processor, sampling
// new traces at ratio (parent-based).
func NewTracingWith(processor sdktrace.SpanProcessor, ratio float64, serviceName string) *Tracing {
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(serviceName)), resource.Environment())
	if err != nil {
		res = resource.NewSchemaless(semconv.ServiceName(serviceName))
	}
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(processor),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))),
		sdktrace.WithIDGenerator(presetIDs{}),
		sdktrace.WithResource(res),
	)
	return &Tracing{Provider: provider, Propagator: propagation.TraceContext{}}
}

// Shutdown exports what is buffered and stops the pipeline.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.Provider.Shutdown(ctx)
}

func tracingOn(cfg TracingConfig, getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return cfg.Endpoint != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

func sampleRatio(cfg TracingConfig, getenv func(string) string) (float64, error) {
	if cfg.SampleRatio != nil {
		return checkRatio(*cfg.SampleRatio, "trace sample ratio")
	}
	arg := getenv("OTEL_TRACES_SAMPLER_ARG")
	if arg == "" {
		return 1, nil
	}
	r, err := strconv.ParseFloat(arg, 64)
	if err != nil {
		return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got %q", arg)
	}
	return checkRatio(r, "OTEL_TRACES_SAMPLER_ARG")
}

func checkRatio(r float64, name string) (float64, error) {
	if r < 0 || r > 1 || r != r {
		return 0, fmt.Errorf("%s must be from 0 to 1, got %v", name, r)
	}
	return r, nil
}

// newExporter answers the OTLP exporter of the configured protocol.
func newExporter(ctx context.Context, cfg TracingConfig, getenv func(string) string) (sdktrace.SpanExporter, error) {
	protocol := cmpOr(cfg.Protocol, getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), ProtocolHTTP)
	switch protocol {
	case ProtocolHTTP:
		var opts []otlptracehttp.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(cfg.Endpoint)))
		}
		return otlptracehttp.New(ctx, opts...)
	case ProtocolGRPC:
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("OTLP protocol must be %q or %q, got %q", ProtocolHTTP, ProtocolGRPC, protocol)
}

// tracesURL answers the OTLP/HTTP traces URL of endpoint, read as
// OTEL_EXPORTER_OTLP_ENDPOINT is: a base URL to which /v1/traces is added,
// unless it names that path already.
func tracesURL(endpoint string) string {
	if strings.HasSuffix(endpoint, "/v1/traces") {
		return endpoint
	}
	return strings.TrimRight(endpoint, "/") + "/v1/traces"
}

func cmpOr(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// presetSpanID is the context key of a span id chosen before the span
// starts (WithSpanID).
type presetSpanID struct{}

// WithSpanID answers ctx such that the next span started under it, when
// tracing, takes id as its span id. Weft names an attempt's span from its
// claim (AttemptSpanID): the worker's span is made its child when the task
// is claimed, and the attempt's span itself is written when it ends,
// possibly by another weftd.
func WithSpanID(ctx context.Context, id trace.SpanID) context.Context {
	return context.WithValue(ctx, presetSpanID{}, id)
}

// AttemptSpanID answers the span id of the attempt a claim token names in
// the trace traceID: the same in every process, so that the span a worker
// continues and the span weftd writes when the attempt ends are one.
func AttemptSpanID(traceID trace.TraceID, token string) trace.SpanID {
	h := sha256.New()
	h.Write(traceID[:])
	h.Write([]byte(token))
	var sum [sha256.Size]byte
	var id trace.SpanID
	copy(id[:], h.Sum(sum[:0]))
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// presetIDs draws random trace and span ids, except a span id WithSpanID
// preset.
type presetIDs struct{}

func (presetIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		_, _ = rand.Read(tid[:])
	}
	return tid, presetIDs{}.NewSpanID(ctx, tid)
}

func (presetIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(presetSpanID{}).(trace.SpanID); ok && id.IsValid() {
		return id
	}
	var sid trace.SpanID
	for !sid.IsValid() {
		_, _ = rand.Read(sid[:])
	}
	return sid
}

// errBadTraceparent says a traceparent is not W3C's.
var errBadTraceparent = errors.New("telemetry: not a W3C traceparent")

// ParseTraceparent answers the span context a W3C traceparent names, as
// remote.
func ParseTraceparent(s string) (trace.SpanContext, error) {
	carrier := propagation.MapCarrier{"traceparent": s}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
	if !sc.IsValid() {
		return sc, errBadTraceparent
	}
	return sc, nil
}

// FormatTraceparent answers sc as a W3C traceparent ("" when invalid).
func FormatTraceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	b := make([]byte, 0, 55)
	b = append(b, "00-"...)
	b = append(b, sc.TraceID().String()...)
	b = append(b, '-')
	b = append(b, sc.SpanID().String()...)
	if sc.IsSampled() {
		return string(append(b, "-01"...))
	}
	return string(append(b, "-00"...))
}
