package export

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// AlertDeliveryFailed is the alert raised when an event moves to the
// dead-letter record (spec 004 §4: "After N failures → DLQ with alert").
const AlertDeliveryFailed = "EVENT_BUS_DELIVERY_FAILED"

// Metric names.
const (
	MetricDeliveryFailed = "weft_event_bus_delivery_failed_total"
	MetricPublished      = "weft_export_published_total"
	MetricPublishErrors  = "weft_export_publish_errors_total"
	MetricOutboxPending  = "weft_export_outbox_pending"
)

type metrics struct {
	deliveryFailed *prometheus.CounterVec // tenant
	published      prometheus.Counter
	publishErrors  *prometheus.CounterVec // class: unavailable, rejected
	pending        prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		deliveryFailed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricDeliveryFailed,
			Help: "Events moved to the dead-letter record after failed deliveries (alert EVENT_BUS_DELIVERY_FAILED)."},
			[]string{"tenant"}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: MetricPublished,
			Help: "Outbox entries published to the event bus (duplicates included)."}),
		publishErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricPublishErrors,
			Help: "Failed publishes, by class: unavailable (the bus) or rejected (the event)."},
			[]string{"class"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricOutboxPending,
			Help: "Outbox entries seen by the last complete pass of the export worker."}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	m.deliveryFailed = register(reg, m.deliveryFailed, &errs)
	m.published = register(reg, m.published, &errs)
	m.publishErrors = register(reg, m.publishErrors, &errs)
	m.pending = register(reg, m.pending, &errs)
	return m, errors.Join(errs...)
}

// register registers c, or answers the collector already registered under
// its name (several workers in one process share their metrics).
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errs *[]error) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		*errs = append(*errs, fmt.Errorf("export: register metric: %w", err))
	}
	return c
}
