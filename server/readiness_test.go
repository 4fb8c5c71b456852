package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
)

// get answers the status and body of a GET.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := apitest.HTTPClient().Get(url)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode, string(body)
}

// grpcHealth answers gRPC health's status for service, over Connect JSON.
func grpcHealth(t *testing.T, base, service string) (int, string) {
	t.Helper()
	res, err := apitest.HTTPClient().Post(base+"/grpc.health.v1.Health/Check", "application/json",
		strings.NewReader(`{"service":"`+service+`"}`))
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode, string(body)
}

// TestReadiness_FollowsTheDependenciesAndHealthzStaysLiveness: /readyz and
// gRPC health answer not ready, with the reason, while a dependency cannot be
// reached, and ready again once it can; /healthz answers ok throughout.
func TestReadiness_FollowsTheDependenciesAndHealthzStaysLiveness(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	cfg := Config{Readiness: []ReadinessCheck{
		{Name: "store", Probe: func(context.Context) error { return nil }},
		{Name: "redis", Probe: func(context.Context) error {
			if down.Load() {
				return errors.New("connection refused")
			}
			return nil
		}},
	}}
	base := testServer(t, cfg)
	for _, step := range []struct {
		down   bool
		status int
		body   string
		grpc   string
	}{
		{false, http.StatusOK, "ready\n", "SERVING_STATUS_SERVING"},
		{true, http.StatusServiceUnavailable, "not ready\nredis: connection refused\n", "SERVING_STATUS_NOT_SERVING"},
		{false, http.StatusOK, "ready\n", "SERVING_STATUS_SERVING"},
	} {
		down.Store(step.down)
		status, body := get(t, base+ReadyPath)
		require.Equal(t, step.status, status)
		require.Equal(t, step.body, body)
		for _, service := range append([]string{""}, ServiceNames...) {
			status, body = grpcHealth(t, base, service)
			require.Equal(t, http.StatusOK, status, body)
			require.Contains(t, body, step.grpc, service)
		}
		status, body = get(t, base+HealthPath)
		require.Equal(t, http.StatusOK, status, "liveness does not follow the dependencies")
		require.Equal(t, "ok\n", body)
	}
	status, _ := grpcHealth(t, base, "no.such.Service")
	require.Equal(t, http.StatusNotFound, status)
}

// TestReadiness_AProbeThatHangsIsNotReadyWithinTheTimeout: a dependency that
// does not answer is a reason too, not a hung probe.
func TestReadiness_AProbeThatHangsIsNotReadyWithinTheTimeout(t *testing.T) {
	t.Parallel()
	r := newReadiness([]ReadinessCheck{{Name: "store", Probe: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, []string{"store: context canceled"}, r.probe(ctx))
}
