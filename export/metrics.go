package export

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/weft-dev/weft/telemetry"
)

// AlertDeliveryFailed is the alert raised when an event moves to the
// dead-letter record (docs/semantics.md#outbox: after N failures, a dead letter and an alert).
const AlertDeliveryFailed = "EVENT_BUS_DELIVERY_FAILED"

// Metric names, as the OpenTelemetry Prometheus exporter serves the
// worker's instruments (package telemetry).
const (
	MetricDeliveryFailed = "weft_event_bus_delivery_failed_total"
	MetricPublished      = "weft_export_published_total"
	MetricPublishErrors  = "weft_export_publish_errors_total"
	MetricOutboxPending  = "weft_export_outbox_pending"
	MetricStoreCommits   = "weft_export_store_commits_total"
	MetricPasses         = "weft_export_passes_total"
)

// Kinds of the worker's store commits (MetricStoreCommits' kind).
const (
	commitAcknowledge = "acknowledge"
	commitRetry       = "retry"
	commitDeadLetter  = "dead_letter"
	commitOrphan      = "orphan"
)

// meterName is the instrumentation scope of the worker's instruments.
const meterName = "github.com/weft-dev/weft/export"

type metrics struct {
	deliveryFailed telemetry.CounterVec // tenant
	published      telemetry.Counter
	publishErrors  telemetry.CounterVec // class: unavailable, rejected
	pending        telemetry.Gauge
	commits        telemetry.CounterVec // kind: acknowledge, retry, dead_letter, orphan
	passes         telemetry.Counter
}

// newMetrics creates the worker's instruments on provider; nil records
// none. Workers on one provider share their instruments, so their counts
// add up and survive a worker's restart.
func newMetrics(provider metric.MeterProvider) (*metrics, error) {
	if provider == nil {
		provider = noop.NewMeterProvider()
	}
	meter := provider.Meter(meterName)
	deliveryFailed, err1 := meter.Int64Counter("weft.event_bus.delivery_failed", metric.WithUnit("{event}"),
		metric.WithDescription("Events moved to the dead-letter record after failed deliveries (alert EVENT_BUS_DELIVERY_FAILED)."))
	published, err2 := meter.Int64Counter("weft.export.published", metric.WithUnit("{event}"),
		metric.WithDescription("Events published to the event bus (duplicates included): an outbox entry names the events of one decision."))
	publishErrors, err3 := meter.Int64Counter("weft.export.publish_errors", metric.WithUnit("{error}"),
		metric.WithDescription("Failed publishes, by class: unavailable (the bus) or rejected (the event)."))
	pending, err4 := meter.Float64Gauge("weft.export.outbox_pending", metric.WithUnit("{entry}"),
		metric.WithDescription("Outbox entries seen by the last complete pass of the export worker."))
	commits, err5 := meter.Int64Counter("weft.export.store_commits", metric.WithUnit("{commit}"),
		metric.WithDescription("Store commits the export worker made, by kind: acknowledge (deleting published entries), retry, dead_letter, orphan."))
	passes, err6 := meter.Int64Counter("weft.export.passes", metric.WithUnit("{pass}"),
		metric.WithDescription("Passes over the outbox the export worker began."))
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, fmt.Errorf("export: metrics: %w", err)
	}
	m := &metrics{
		deliveryFailed: telemetry.NewCounterVec(deliveryFailed, "tenant"),
		published:      telemetry.NewCounter(published),
		publishErrors:  telemetry.NewCounterVec(publishErrors, "class"),
		pending:        telemetry.NewGauge(pending),
		commits:        telemetry.NewCounterVec(commits, "kind"),
		passes:         telemetry.NewCounter(passes),
	}
	m.published.Add(0) // served from the start, as a plain counter is
	return m, nil
}
