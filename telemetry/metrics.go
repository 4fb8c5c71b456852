package telemetry

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Metrics is one metrics pipeline: what is recorded through Provider is
// served by Handler, together with the Go runtime and process collectors.
// Give each server its own, so that several in one process never share
// counters; the components of one weftd share one. Each component takes a
// meter named after its import path (scope names are not exported).
type Metrics struct {
	// Provider creates the instruments. Its reader is the Prometheus
	// exporter, so nothing is pushed: a scrape collects.
	Provider *sdkmetric.MeterProvider
	// Registry is what Handler serves.
	Registry *prometheus.Registry
}

// NewMetrics answers a pipeline on a registry of its own.
func NewMetrics() (*Metrics, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(
		otelprom.WithRegisterer(registry),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		otelprom.WithoutScopeInfo(),
		otelprom.WithoutTargetInfo(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}
	if err := registry.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("telemetry: go collector: %w", err)
	}
	if err := registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("telemetry: process collector: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter), sdkmetric.WithResource(resource.Empty()))
	return &Metrics{Provider: provider, Registry: registry}, nil
}

// Handler serves the registry in the Prometheus text exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}
