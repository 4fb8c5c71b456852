package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/internal/redisconn"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/lease/redislease"
	"github.com/weft-dev/weft/wake/rediswake"
)

// clusterOptions say how this weftd shares runs with others.
type clusterOptions struct {
	// ownership is "" (the store decides: single-owner on Pebble,
	// cas-required on SQL), "single-owner" or "cas-required".
	ownership string
	// redis is the lease service; "" means in-process leases on Pebble and
	// the default Redis on SQL.
	redis    string
	leaseTTL time.Duration
	// wakeChannel is the Redis channel of the deployment's wake-ups on a
	// SQL store ("" for the prefix's "wake"), or wakeNone.
	wakeChannel string
	// redisPrefix starts every Redis key, stream and channel of the
	// deployment (leases, event streams, the wake-up channel), so that
	// deployments — or tests — sharing a Redis never see one another's; ""
	// means defaultRedisPrefix (redisKey).
	redisPrefix string
}

// defaultRedisPrefix is --redis-prefix's default.
const defaultRedisPrefix = "weft:"

// redisKey answers the deployment's Redis key, stream or channel name that
// ends with name.
func (c clusterOptions) redisKey(name string) string {
	if c.redisPrefix == "" {
		return defaultRedisPrefix + name
	}
	return c.redisPrefix + name
}

// checkRedisPrefix validates --redis-prefix.
func checkRedisPrefix(p string) error {
	if p == "" || strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return errors.New("redis prefix must be a non-empty string without spaces or control characters")
	}
	return nil
}

// cluster is what this weftd shares with the other processes of its
// deployment: the ownership mode, the lease service and, on a SQL store, the
// wake-ups that tell the others' long polls and event watches of this one's
// commits.
type cluster struct {
	mode   engine.Ownership
	leases lease.Manager
	wakes  *rediswake.Notifier // nil: wake-ups stay in this process
	redis  *redis.Client       // the lease service; nil: in-process leases
	close  func()
}

// openCluster answers the cluster configuration; close releases its Redis
// connections.
func openCluster(opts options, logger *slog.Logger) (*cluster, error) {
	mode := engine.Ownership(opts.cluster.ownership)
	sql := isSQLURL(opts.store)
	if mode == "" {
		mode = engine.SingleOwner
		if sql {
			mode = engine.CASRequired
		}
	}
	redisURL := opts.cluster.redis
	if redisURL == "" && sql {
		redisURL = redisconn.DefaultURL
	}
	if redisURL == "" {
		logger.Info("weftd ownership", slog.String("mode", string(mode)), slog.String("leases", "in-process"))
		logger.Info("weftd wake-ups", slog.String("wakeups", "in-process"))
		return &cluster{mode: mode, leases: lease.NewLocal(nil), close: func() {}}, nil
	}
	rdb, err := redisconn.Open(redisURL)
	if err != nil {
		return nil, err
	}
	location := redactURL(redisURL)
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		// Leases only avoid duplicate work, and wake-ups only save latency:
		// start anyway, and let background work wait for Redis; requests
		// keep committing through the store.
		logger.Warn("lease service not reachable; background work waits for it", slog.String("redis", location))
	}
	logger.Info("weftd ownership", slog.String("mode", string(mode)), slog.String("leases", "redis"), slog.String("redis", location))
	c := &cluster{mode: mode, leases: redislease.New(rdb, opts.cluster.redisKey("lease:")), redis: rdb, close: func() { _ = rdb.Close() }}
	if c.wakes, err = openWakeups(opts, sql, rdb, location, logger); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	return c, nil
}

// engineOwner names this process in leases and emitted_by.
func engineOwner() string {
	host, err := os.Hostname()
	if err != nil {
		host = "weftd"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
