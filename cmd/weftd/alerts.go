package main

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/engine"
)

// engineAlerts answers the engine's alert hook: weft_alerts_total{alert} on
// registry, and a structured line with alert=<NAME> and identifiers only
// (engine.LogAlerts: ERROR for P1, WARN otherwise).
func engineAlerts(registry prometheus.Registerer, logger *slog.Logger) engine.AlertFunc {
	alerts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weft_alerts_total",
		Help: "Operational alerts of spec 004 the engine raised, by alert name (PROJECTOR_LAG_HIGH, PROJECTOR_NON_CONTIGUOUS_FETCH_DETECTED, PROJECTOR_CAUSAL_VIOLATION, PAUSE_DRAIN_TIMEOUT).",
	}, []string{"alert"})
	for _, name := range []string{engine.AlertProjectorLagHigh, engine.AlertProjectorNonContiguousFetch,
		engine.AlertProjectorCausalViolation, engine.AlertPauseDrainTimeout} {
		alerts.WithLabelValues(name) // present at 0 from start-up, so rate() works
	}
	registry.MustRegister(alerts)
	log := engine.LogAlerts(logger)
	return func(ctx context.Context, name string, attrs ...slog.Attr) {
		alerts.WithLabelValues(name).Inc()
		log(ctx, name, attrs...)
	}
}
