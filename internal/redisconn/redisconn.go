// Package redisconn opens the Redis client that every Redis-backed part of
// Weft uses — the leases (lease/redislease), the cross-process wake-ups
// (wake/rediswake), the event bus (export/redisbus), weftd and the benchmark
// — from one URL syntax with one default.
//
// Layering: it imports github.com/redis/go-redis/v9 and the standard library
// only.
package redisconn

import (
	"errors"
	"fmt"
	neturl "net/url"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is the Redis of a cluster configuration that names none, and the
// one the tests use unless WEFT_TEST_REDIS_URL names another.
const DefaultURL = "redis://127.0.0.1:6379"

// Options parses a redis:// (or rediss://) URL into client options.
func Options(url string) (*redis.Options, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		// url.Error quotes the whole URL, password included: keep only why.
		if ue, ok := errors.AsType[*neturl.Error](err); ok {
			err = ue.Err
		}
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	return opts, nil
}

// Open answers a client of the Redis at url. It does not connect: the first
// command does.
func Open(url string) (*redis.Client, error) {
	opts, err := Options(url)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opts), nil
}
