// Package redistest gives tests a Redis: the shared local one
// (WEFT_TEST_REDIS_URL, or redisconn.DefaultURL) with a key prefix of the
// test's own, or a private redis-server the test may stop and start again.
// Without a reachable Redis (or an installed redis-server) a test skips
// loudly, and fails when CI is set.
//
// Layering: it imports internal/redisconn, go-redis, uuid and the standard
// library; only tests import it.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/weft-dev/weft/internal/redisconn"
)

// URL answers the Redis tests use: WEFT_TEST_REDIS_URL, or redisconn.DefaultURL.
func URL() string {
	if u := os.Getenv("WEFT_TEST_REDIS_URL"); u != "" {
		return u
	}
	return redisconn.DefaultURL
}

// Require answers a client of the test Redis, closed when the test ends, or
// skips the test loudly when it is not reachable — and fails it when CI is set.
func Require(t testing.TB) *redis.Client {
	t.Helper()
	rdb, err := redisconn.Open(URL())
	if err != nil {
		t.Fatalf("WEFT_TEST_REDIS_URL: %v", err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		missing(t, fmt.Sprintf("Redis at %s is not reachable: %v. Start it, or point WEFT_TEST_REDIS_URL at one.", rdb.Options().Addr, err))
	}
	return rdb
}

// Addr answers the test Redis's host:port (see Require).
func Addr(t testing.TB) string {
	t.Helper()
	return Require(t).Options().Addr
}

// Prefix answers a key prefix, "weft-test:<uuid>:", that only the calling
// test uses; every key under it is deleted when the test ends.
func Prefix(t testing.TB, rdb *redis.Client) string {
	t.Helper()
	prefix := "weft-test:" + uuid.NewString() + ":"
	t.Cleanup(func() {
		keys, err := rdb.Keys(context.Background(), prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	})
	return prefix
}

var warnOnce sync.Once

// missing skips t loudly, or fails it when CI is set.
func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI is set, so a missing Redis fails the run: %s", msg)
	}
	warnOnce.Do(func() { shout("\n!!! SKIPPING REDIS TESTS: " + msg + "\n\n") })
	t.Skip("SKIPPING: " + msg)
}

// shout writes msg to stderr and, since go test hides the output of passing
// packages, straight to the terminal when there is one.
func shout(msg string) {
	fmt.Fprint(os.Stderr, msg)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprint(tty, msg)
		_ = tty.Close()
	}
}

// Private is a redis-server of one test's own on a free loopback port,
// without persistence, so that the test can stop it and start it again
// (empty) without disturbing anyone else. It is stopped when the test ends.
type Private struct {
	t    testing.TB
	bin  string
	port int
	cmd  *exec.Cmd
}

// StartPrivate starts a private redis-server, or skips the test loudly when
// redis-server is not installed — and fails it when CI is set.
func StartPrivate(t testing.TB) *Private {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		missing(t, "redis-server is not installed (the tests that stop Redis run one of their own)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatalf("free port %d: %v", port, err)
	}
	r := &Private{t: t, bin: bin, port: port}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Addr answers the server's host:port.
func (r *Private) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// Start starts the server (again) on its port and waits until it answers.
func (r *Private) Start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer func() { _ = rdb.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d did not answer within 10s", r.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server; it is a no-op when it is not running.
func (r *Private) Stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}
