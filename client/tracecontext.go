package client

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// injectTraceContext writes the W3C traceparent (and tracestate) of the
// span in ctx, when there is one, into a call's headers: weftd continues
// the caller's trace (docs/observability.md). A call under no span carries
// none, at the cost of one lookup.
func injectTraceContext(ctx context.Context, h http.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	}
}
