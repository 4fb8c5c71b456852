package engine

import (
	"context"
	"log/slog"

	"github.com/weft-dev/weft/engine/internal/decide"
)

// The operational alerts the engine raises (docs/semantics.md#alerts). Export raises
// EVENT_BUS_DELIVERY_FAILED itself (docs/export.md).
const (
	// AlertProjectorLagHigh (P2): a projector caught up on events older than
	// ProjectorLagThreshold (docs/semantics.md#projector-alert-thresholds).
	AlertProjectorLagHigh = "PROJECTOR_LAG_HIGH"
	// AlertProjectorNonContiguousFetch (P2): a fetch did not follow the
	// projector's watermark; it resynced (docs/semantics.md#projector-alert-thresholds).
	AlertProjectorNonContiguousFetch = "PROJECTOR_NON_CONTIGUOUS_FETCH_DETECTED"
	// AlertProjectorCausalViolation (P3, informational): a projector applied
	// a step event before the step's dependencies had succeeded (docs/semantics.md#run-seq);
	// the state is still applied in run_seq order.
	AlertProjectorCausalViolation = "PROJECTOR_CAUSAL_VIOLATION"
	// AlertPauseDrainTimeout: a pause's drain timed out and the run was
	// forced to PAUSED with tasks in flight (docs/semantics.md#pause-drain).
	AlertPauseDrainTimeout = decide.AlertPauseDrainTimeout
)

// AlertSeverity answers an alert's priority as the spec gives it (P1–P3).
func AlertSeverity(name string) string {
	switch name {
	case AlertProjectorLagHigh, AlertProjectorNonContiguousFetch, AlertPauseDrainTimeout:
		return "P2"
	case AlertProjectorCausalViolation:
		return "P3"
	}
	return "P1"
}

// AlertFunc receives one alert with identifiers only (run id, sequence
// numbers, counts), never a payload.
type AlertFunc func(ctx context.Context, name string, attrs ...slog.Attr)

// LogAlerts answers an AlertFunc that writes a structured line with
// alert=<name> and severity: ERROR for P1, WARN otherwise.
func LogAlerts(logger *slog.Logger) AlertFunc {
	return func(ctx context.Context, name string, attrs ...slog.Attr) {
		level, sev := slog.LevelWarn, AlertSeverity(name)
		if sev == "P1" {
			level = slog.LevelError
		}
		all := append([]slog.Attr{slog.String("alert", name), slog.String("severity", sev)}, attrs...)
		logger.LogAttrs(ctx, level, "alert "+name, all...)
	}
}

// pendingAlert is an alert a decision raises once it has committed.
type pendingAlert struct {
	name  string
	attrs []slog.Attr
}
