package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/lease"
)

func TestLocal_OneOwnerAtATimeUntilExpiry(t *testing.T) {
	ctx := context.Background()
	c := clock.NewManual(time.Unix(1000, 0))
	m := lease.NewLocal(c.Now)
	a, err := m.Acquire(ctx, "run-1", "engine-a", time.Second)
	require.NoError(t, err)
	_, err = m.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.ErrorIs(t, err, lease.ErrHeld)
	_, err = m.Acquire(ctx, "run-1", "engine-a", time.Second)
	require.NoError(t, err, "the owner may acquire again (a renewal)")
	c.Advance(999 * time.Millisecond)
	require.NoError(t, m.Renew(ctx, a))
	c.Advance(time.Second)
	require.ErrorIs(t, m.Renew(ctx, a), lease.ErrLost, "a lease not renewed within its TTL is lost")
	b, err := m.Acquire(ctx, "run-1", "engine-b", time.Second)
	require.NoError(t, err)
	require.NoError(t, m.Release(ctx, a), "releasing a lost lease is no error")
	require.NoError(t, m.Renew(ctx, b), "and does not release the new owner's")
}

func TestValidate_NamesTheRule(t *testing.T) {
	m := lease.NewLocal(nil)
	_, err := m.Acquire(context.Background(), "", "o", time.Second)
	require.EqualError(t, err, "lease: name must not be empty")
	_, err = m.Acquire(context.Background(), "n", "o", time.Millisecond)
	require.EqualError(t, err, "lease: TTL must be at least 10ms, got 1ms")
}
