package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store"
)

// readinessProbeKey is the key the store probe reads: no record has it.
var readinessProbeKey = []byte("\x00weft:readiness-probe")

// readinessChecks answers what /readyz and gRPC health probe: the store
// always, and the lease service's Redis in a cluster. The reasons name no
// URL or password.
func readinessChecks(st store.Store, storeURL string, cl *cluster) []server.ReadinessCheck {
	checks := []server.ReadinessCheck{{Name: "store", Probe: func(ctx context.Context) error {
		_, err := st.Get(ctx, readinessProbeKey)
		if err == nil || errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("cannot be reached: %w", scrub(err, storeURL))
	}}}
	if cl.redis != nil {
		checks = append(checks, server.ReadinessCheck{Name: "redis", Probe: func(ctx context.Context) error {
			if err := cl.redis.Ping(ctx).Err(); err != nil {
				return fmt.Errorf("the lease service cannot be reached (%s): leases, timers and cross-process wake-ups wait for it", redisReason(err))
			}
			return nil
		}})
	}
	return checks
}

// redisReason answers the kind of a Redis failure without its text, which
// may name the address.
func redisReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case strings.Contains(err.Error(), "NOAUTH"), strings.Contains(err.Error(), "WRONGPASS"):
		return "authentication refused"
	}
	return "connection failed"
}

// redisLogger routes go-redis's own log lines into weftd's structured log,
// as WARN lines of component redis (by default go-redis prints unstructured
// lines on standard error, into the middle of the JSON log).
type redisLogger struct {
	logger *slog.Logger
}

// Printf implements go-redis's internal.Logging.
func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.logger.LogAttrs(ctx, slog.LevelWarn, "redis client", slog.String("message", strings.TrimSpace(fmt.Sprintf(format, v...))))
}

// logRedisThrough makes go-redis log through logger, for every client of
// the process (go-redis has one logger per process).
func logRedisThrough(logger *slog.Logger) {
	redis.SetLogger(redisLogger{logger: logger.With(slog.String("component", "redis"))})
}

// countedLeases counts the lease service's failures to answer an
// acquisition (weft_lease_acquire_failures_total): another owner holding the
// lease (lease.ErrHeld) is contention, not a failure, and a cancelled
// request is not counted either.
type countedLeases struct {
	lease.Manager
	failures metric.Int64Counter
}

// Acquire implements lease.Manager.
func (c countedLeases) Acquire(ctx context.Context, name, owner string, ttl time.Duration) (lease.Lease, error) {
	l, err := c.Manager.Acquire(ctx, name, owner, ttl)
	if err != nil && !errors.Is(err, lease.ErrHeld) && ctx.Err() == nil {
		c.failures.Add(context.WithoutCancel(ctx), 1)
	}
	return l, err
}

// countLeaseFailures wraps m so that its acquisition failures are counted on
// meter.
func countLeaseFailures(m lease.Manager, meter metric.Meter) (lease.Manager, error) {
	failures, err := meter.Int64Counter("weft.lease.acquire.failures", metric.WithUnit("{attempt}"),
		metric.WithDescription("Run lease acquisitions the lease service failed to answer (Redis unreachable or failing); leases another weftd holds are not counted."))
	if err != nil {
		return nil, fmt.Errorf("lease metrics: %w", err)
	}
	failures.Add(context.Background(), 0) // present at 0 from start-up, so rate() works
	return countedLeases{Manager: m, failures: failures}, nil
}
