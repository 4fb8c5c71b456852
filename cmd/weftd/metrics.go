package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weft-dev/weft/engine"
)

// engineCollector exposes the engine's cheap counts on /metrics: runs by
// status and the queues' depth, read from index keys at scrape time.
type engineCollector struct {
	eng   *engine.Engine
	runs  *prometheus.Desc
	queue *prometheus.Desc
	stale *prometheus.Desc
}

func newEngineCollector(eng *engine.Engine) *engineCollector {
	return &engineCollector{
		eng: eng,
		runs: prometheus.NewDesc("weft_runs", "Runs of every tenant by current status (counted up to 10,000 each).",
			[]string{"status"}, nil),
		queue: prometheus.NewDesc("weft_queue_depth", "Work waiting: ready tasks in every queue, and runs waiting for a concurrency slot (up to 10,000 each).",
			[]string{"kind"}, nil),
		stale: prometheus.NewDesc("weft_stale_owner_commits_rejected_total",
			"Decisions this weftd made as a run's owner that the run's fencing epoch refused (another weftd had taken the run over).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.runs
	ch <- c.queue
	ch <- c.stale
}

// Collect implements prometheus.Collector.
func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.stale, prometheus.CounterValue, float64(c.eng.StaleCommitsRejected()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	stats, err := c.eng.Stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.runs, err)
		return
	}
	for _, s := range engine.AllRunStatuses {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(stats.RunsByStatus[s]), string(s))
	}
	ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(stats.ReadyTasks), "tasks")
	ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(stats.QueuedRuns), "runs")
}
