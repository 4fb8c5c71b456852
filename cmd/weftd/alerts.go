package main

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/telemetry"
)

// engineAlerts answers the engine's alert hook: weft_alerts_total{alert} on
// meter, and a structured line with alert=<NAME> and identifiers only
// (engine.LogAlerts: ERROR for P1, WARN otherwise).
func engineAlerts(meter metric.Meter, logger *slog.Logger) (engine.AlertFunc, error) {
	counter, err := meter.Int64Counter("weft.alerts", metric.WithUnit("{alert}"),
		metric.WithDescription("Operational alerts the engine raised (docs/semantics.md#alerts), by alert name (PROJECTOR_LAG_HIGH, PROJECTOR_NON_CONTIGUOUS_FETCH_DETECTED, PROJECTOR_CAUSAL_VIOLATION, PAUSE_DRAIN_TIMEOUT)."))
	if err != nil {
		return nil, fmt.Errorf("alert metrics: %w", err)
	}
	alerts := telemetry.NewCounterVec(counter, "alert")
	for _, name := range []string{engine.AlertProjectorLagHigh, engine.AlertProjectorNonContiguousFetch,
		engine.AlertProjectorCausalViolation, engine.AlertPauseDrainTimeout} {
		alerts.WithLabelValues(name).Add(0) // present at 0 from start-up, so rate() works
	}
	log := engine.LogAlerts(logger)
	return func(ctx context.Context, name string, attrs ...slog.Attr) {
		alerts.WithLabelValues(name).Inc()
		log(ctx, name, attrs...)
	}, nil
}
