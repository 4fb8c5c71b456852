package redislease_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/lease/redislease"
)

func managers(t *testing.T) (*redislease.Manager, *redislease.Manager, *redis.Client) {
	rdb := redistest.Require(t)
	prefix := redistest.Prefix(t, rdb)
	return redislease.New(rdb, prefix), redislease.New(rdb, prefix), rdb
}

func TestRedis_OneOwnerAtATime(t *testing.T) {
	ctx := context.Background()
	a, b, _ := managers(t)
	la, err := a.Acquire(ctx, "run-1", "engine-a", time.Second)
	require.NoError(t, err)
	_, err = b.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.ErrorIs(t, err, lease.ErrHeld)
	require.NoError(t, a.Renew(ctx, la))
	require.NoError(t, b.Release(ctx, lease.Lease{Name: "run-1", Owner: "engine-b", TTL: time.Second}))
	_, err = b.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.ErrorIs(t, err, lease.ErrHeld, "only the owner can release")
	require.NoError(t, a.Release(ctx, la))
	_, err = b.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.NoError(t, err)
}

func TestRedis_DeletedKeyLosesTheLeaseAndStopsTheWork(t *testing.T) {
	ctx := context.Background()
	a, b, rdb := managers(t)
	k := lease.NewKeeper[struct{}](a, "engine-a", 60*time.Millisecond)
	defer k.ReleaseAll()
	held, err := k.Take(ctx, "run-1")
	require.NoError(t, err)
	defer held.Done()
	require.NoError(t, rdb.Del(ctx, a.Key("run-1")).Err())
	select {
	case <-held.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("work under a deleted lease was not stopped")
	}
	_, err = b.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.NoError(t, err, "another owner takes over")
	require.ErrorIs(t, a.Renew(ctx, lease.Lease{Name: "run-1", Owner: "engine-a", TTL: time.Second}), lease.ErrLost)
}

func TestRedis_ExpiredLeaseCanBeTakenOver(t *testing.T) {
	ctx := context.Background()
	a, b, rdb := managers(t)
	_, err := a.Acquire(ctx, "run-1", "engine-a", 20*time.Millisecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return rdb.Exists(ctx, a.Key("run-1")).Val() == 0 }, 5*time.Second, 5*time.Millisecond)
	_, err = b.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.NoError(t, err)
}
