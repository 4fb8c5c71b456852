package server

import (
	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"

	"github.com/weft-dev/weft/telemetry"
)

// tracingInterceptor answers the interceptor that gives every RPC a server
// span (otelconnect), continuing the caller's W3C traceparent: weftd's
// callers — clients, workers — are part of the same deployment, so their
// context is trusted as the parent. The RPC metrics otelconnect can add
// are left out (the server's own metrics count RPCs), as are the peer's
// address attributes; no span carries a request's or a response's body. Nil when tracing is
// off, and then nothing is added to a call.
func tracingInterceptor(t *telemetry.Tracing) (connect.Interceptor, error) {
	if t == nil {
		return nil, nil
	}
	return otelconnect.NewInterceptor(
		otelconnect.WithTracerProvider(t.Provider),
		otelconnect.WithPropagator(t.Propagator),
		otelconnect.WithTrustRemote(),
		otelconnect.WithoutMetrics(),
	)
}

// interceptorsWithTracing puts the tracing interceptor, when there is one,
// outermost, so that its span covers every other interceptor's work.
func interceptorsWithTracing(t connect.Interceptor, others ...connect.Interceptor) []connect.Interceptor {
	if t == nil {
		return others
	}
	return append([]connect.Interceptor{t}, others...)
}
