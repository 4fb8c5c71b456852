package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/export/redisbus"
	"github.com/weft-dev/weft/internal/redisconn"
	"github.com/weft-dev/weft/store"
)

// Event buses (--bus).
const (
	busNone   = "none"
	busMemory = "memory"
)

// checkBus validates --bus.
func checkBus(bus string) error {
	switch {
	case bus == "", bus == busNone, bus == busMemory, strings.HasPrefix(bus, "redis://"), strings.HasPrefix(bus, "rediss://"):
		return nil
	}
	return fmt.Errorf(`bus must be "none", "memory" or a redis:// URL, got a value starting %q`, firstChars(bus, 8))
}

func firstChars(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// busURL answers the bus to use: the flag, else Redis (the lease service's,
// or the default) in a cluster, else none. An embedded weftd has no bus that
// another process could read: exporting to the in-process one cost about a
// tenth of its CPU for events nothing consumed (docs/performance.md), so it
// exports only when --bus names a bus.
func busURL(opts options) string {
	if opts.bus != "" {
		return opts.bus
	}
	if isSQLURL(opts.store) {
		if opts.cluster.redis != "" {
			return opts.cluster.redis
		}
		return redisconn.DefaultURL
	}
	return busNone
}

// memoryBusLen bounds weftd's in-process bus. Nothing in weftd reads it, so
// it keeps only the latest events, not export.DefaultMemoryBusMaxLen: at
// 100,000 they were most of an embedded weftd's heap (docs/performance.md,
// "Scale").
const memoryBusLen = 10_000

// exporting is what the engine is told of the export worker: whether to
// write outbox entries, and the cache through which it hands the worker
// the events of the entries it committed (nil: none).
type exporting struct {
	outbox bool
	cache  *runlog.OutboxCache
}

// startExport starts the transactional outbox's export worker on its own
// goroutine, so that nothing that runs a workflow waits on the bus. It answers
// whether the engine should write outbox entries and the cache of what it
// committed, and a stop function that returns once the worker has stopped.
func startExport(opts options, st store.Store, meters metric.MeterProvider, logger *slog.Logger) (exporting, func(), error) {
	bus := busURL(opts)
	if bus == busNone {
		logger.Info("event export off: no outbox entries are written; give --bus a redis:// URL to publish run events")
		return exporting{}, func() {}, nil
	}
	var pub export.Publisher
	closeBus := func() {}
	if bus == busMemory {
		logger.Warn("events are exported to an in-process bus only: no other process can read them; give --bus a redis:// URL to publish them")
		pub = export.NewMemoryBus(export.WithMaxLen(memoryBusLen))
	} else {
		rdb, err := redisconn.Open(bus)
		if err != nil {
			return exporting{}, nil, err
		}
		p, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: opts.cluster.redisKey("events:")})
		if err != nil {
			_ = rdb.Close()
			return exporting{}, nil, err
		}
		pub, closeBus = p, func() { _ = rdb.Close() }
		logger.Info("events are exported to Redis Streams", slog.String("redis", redactURL(bus)))
	}
	cache := runlog.NewOutboxCache(0, 0)
	w, err := export.NewWorker(st, pub, export.Config{Logger: logger.With(slog.String("component", "export")), MeterProvider: meters,
		OutboxCache: cache})
	if err != nil {
		closeBus()
		return exporting{}, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil && ctx.Err() == nil {
			logger.Error("export worker stopped", slog.String("error", err.Error()))
		}
	}()
	return exporting{outbox: true, cache: cache}, func() { cancel(); <-done; closeBus() }, nil
}
