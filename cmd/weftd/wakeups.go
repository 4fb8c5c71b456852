package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/wake/rediswake"
)

// wakeNone turns cross-process wake-ups off (--wake-channel none).
const wakeNone = "none"

// checkWakeChannel validates --wake-channel.
func checkWakeChannel(ch string) error {
	if strings.ContainsFunc(ch, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("wake channel must be a Redis channel name without spaces or control characters, or %q", wakeNone)
	}
	return nil
}

// openWakeups answers the Redis wake-ups of a SQL store's cluster, or nil:
// an embedded store has one process, whose commits wake its own waiters.
func openWakeups(opts options, sql bool, rdb *redis.Client, location string, logger *slog.Logger) (*rediswake.Notifier, error) {
	ch := opts.cluster.wakeChannel
	if ch == "" {
		ch = opts.cluster.redisKey("wake")
	}
	switch {
	case !sql:
		logger.Info("weftd wake-ups", slog.String("wakeups", "in-process"))
		return nil, nil
	case ch == wakeNone:
		logger.Info("weftd wake-ups", slog.String("wakeups", "in-process"),
			slog.String("note", "--wake-channel none: other processes' work is seen at the poll interval"))
		return nil, nil
	}
	n, err := rediswake.New(rdb, rediswake.Config{Channel: ch, Logger: logger.With(slog.String("component", "wakeups"))})
	if err != nil {
		return nil, err
	}
	logger.Info("weftd wake-ups", slog.String("wakeups", "redis"), slog.String("channel", n.Channel()), slog.String("redis", location))
	return n, nil
}

// notifier answers the engine's Notifier: nil (not a nil pointer in an
// interface) when wake-ups stay in process.
func (c *cluster) notifier() engine.Notifier {
	if c.wakes == nil {
		return nil
	}
	return c.wakes
}

// runWakeups publishes eng's wake-ups and delivers the others' to it, until
// the returned stop is called.
func (c *cluster) runWakeups(eng *engine.Engine) (stop func()) {
	if c.wakes == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.wakes.Run(ctx, eng.Wakes().Wake) })
	return func() { cancel(); wg.Wait() }
}

// observeWakeups exposes the wake-ups' counters on /metrics: keys sent,
// dropped (the buffer was full while Redis was slow or away) and received,
// and PUBLISH commands by result. Nothing is registered without wake-ups.
func (c *cluster) observeWakeups(meter metric.Meter) error {
	if c.wakes == nil {
		return nil
	}
	keys, err := meter.Int64ObservableCounter("weft.wakeup.keys", metric.WithUnit("{key}"),
		metric.WithDescription("Cross-process wake-up keys (a queue that gained tasks, a run whose log grew) this weftd queued for Redis, dropped, and received from others."))
	if err != nil {
		return fmt.Errorf("wake-up metrics: %w", err)
	}
	publishes, err := meter.Int64ObservableCounter("weft.wakeup.publishes", metric.WithUnit("{command}"),
		metric.WithDescription("PUBLISH commands carrying this weftd's wake-ups, by result."))
	if err != nil {
		return fmt.Errorf("wake-up metrics: %w", err)
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := c.wakes.Stats()
		for dir, n := range map[string]uint64{"queued": st.Keys, "dropped": st.Dropped, "received": st.Received} {
			o.ObserveInt64(keys, int64(n), metric.WithAttributes(attribute.String("direction", dir)))
		}
		o.ObserveInt64(publishes, int64(st.Sends-st.Failed), metric.WithAttributes(attribute.String("result", "ok")))
		o.ObserveInt64(publishes, int64(st.Failed), metric.WithAttributes(attribute.String("result", "failed")))
		return nil
	}, keys, publishes)
	if err != nil {
		return fmt.Errorf("wake-up metrics: %w", err)
	}
	return nil
}
