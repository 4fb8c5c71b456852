package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
	"github.com/weft-dev/weft/telemetry"
)

// readyz answers /readyz's status and body.
func readyz(t *testing.T, base string) (int, string) {
	t.Helper()
	res, err := apitest.HTTPClient().Get(base + "/readyz")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode, string(body)
}

// TestWeftd_ReadyFlipsToNotReadyWhileRedisIsDownAndBack: a cluster weftd
// (PostgreSQL, a private Redis) is ready; with its Redis stopped /readyz
// answers 503 naming Redis while /healthz stays ok; with Redis back it is
// ready again. Every line weftd wrote meanwhile is JSON (go-redis logs
// through weftd's logger), and the lease failure counter is served.
func TestWeftd_ReadyFlipsToNotReadyWhileRedisIsDownAndBack(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	r := redistest.StartPrivate(t)
	d := startWeftdIn(t, t.TempDir(), "--store", testkit.SchemaURL(t, db.NewSchema(t)), "--redis", "redis://"+r.Addr())
	status, body := readyz(t, d.URL)
	require.Equal(t, http.StatusOK, status, body)

	r.Stop()
	status, body = readyz(t, d.URL)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "redis: the lease service cannot be reached")
	require.NotContains(t, body, r.Addr(), "the reason names no address")
	res, err := apitest.HTTPClient().Get(d.URL + "/healthz")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode, "liveness does not follow Redis")

	r.Start()
	require.Eventually(t, func() bool {
		status, _ := readyz(t, d.URL)
		return status == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond, "ready again once Redis is back")

	logs := d.Logs()
	require.Contains(t, logs, `"msg":"weftd not ready"`)
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		require.True(t, json.Valid([]byte(line)), "a line outside the JSON log: %s", line)
	}
	res, err = apitest.HTTPClient().Get(d.URL + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Contains(t, string(metrics), "weft_lease_acquire_failures_total ")
}

// TestReadinessChecks_AClosedStoreIsNotReady: the store probe answers the
// store's failure as the reason (a missing key is not one).
func TestReadinessChecks_AClosedStoreIsNotReady(t *testing.T) {
	t.Parallel()
	st := memstore.New(memstore.Config{})
	checks := readinessChecks(st, "pebble", &cluster{})
	require.Len(t, checks, 1, "no Redis without a cluster")
	require.NoError(t, checks[0].Probe(context.Background()))
	require.NoError(t, st.Close())
	require.ErrorContains(t, checks[0].Probe(context.Background()), "cannot be reached")
}

// failingLeases answers every acquisition with err.
type failingLeases struct {
	lease.Manager
	err error
}

func (f failingLeases) Acquire(context.Context, string, string, time.Duration) (lease.Lease, error) {
	return lease.Lease{}, f.err
}

// TestCountedLeases_CountServiceFailuresNotContention: an acquisition the
// lease service fails counts in weft_lease_acquire_failures_total; a lease
// another owner holds does not.
func TestCountedLeases_CountServiceFailuresNotContention(t *testing.T) {
	t.Parallel()
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	scrape := func() string { return scrapePipeline(t, pipeline) }
	down, err := countLeaseFailures(failingLeases{err: errors.New("dial tcp: connection refused")}, pipeline.Provider.Meter(meterName))
	require.NoError(t, err)
	held, err := countLeaseFailures(failingLeases{err: lease.ErrHeld}, pipeline.Provider.Meter(meterName))
	require.NoError(t, err)
	require.Contains(t, scrape(), "weft_lease_acquire_failures_total 0")
	for range 3 {
		_, _ = held.Acquire(context.Background(), "run", "me", time.Second)
	}
	require.Contains(t, scrape(), "weft_lease_acquire_failures_total 0")
	for range 2 {
		_, _ = down.Acquire(context.Background(), "run", "me", time.Second)
	}
	require.Contains(t, scrape(), "weft_lease_acquire_failures_total 2")
}
