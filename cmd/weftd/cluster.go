package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/lease/redislease"
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
}

// ownershipConfig answers the engine's ownership mode and lease manager, and
// a function that releases the lease service's connection.
func ownershipConfig(opts options, logger *slog.Logger) (engine.Ownership, lease.Manager, func(), error) {
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
		redisURL = redislease.DefaultURL
	}
	if redisURL == "" {
		logger.Info("weftd ownership", slog.String("mode", string(mode)), slog.String("leases", "in-process"))
		return mode, lease.NewLocal(nil), func() {}, nil
	}
	rdb, err := redislease.Open(redisURL)
	if err != nil {
		return "", nil, nil, err
	}
	location := redactURL(redisURL)
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		// Leases only avoid duplicate work: start anyway, and let background
		// work wait for Redis; requests keep committing through the store.
		logger.Warn("lease service not reachable; background work waits for it", slog.String("redis", location))
	}
	logger.Info("weftd ownership", slog.String("mode", string(mode)), slog.String("leases", "redis"), slog.String("redis", location))
	return mode, redislease.New(rdb, "weft:lease:"), func() { _ = rdb.Close() }, nil
}

// engineOwner names this process in leases and emitted_by.
func engineOwner() string {
	host, err := os.Hostname()
	if err != nil {
		host = "weftd"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
