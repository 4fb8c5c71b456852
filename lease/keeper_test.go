package lease_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/lease"
)

// counting counts a manager's calls.
type counting struct {
	lease.Manager
	acquires, renewals atomic.Int64
}

func (c *counting) Acquire(ctx context.Context, name, owner string, ttl time.Duration) (lease.Lease, error) {
	c.acquires.Add(1)
	return c.Manager.Acquire(ctx, name, owner, ttl)
}

func (c *counting) Renew(ctx context.Context, l lease.Lease) error {
	c.renewals.Add(1)
	return c.Manager.Renew(ctx, l)
}

// keeperSetup is a keeper of 30 ms leases (a round every 10 ms) on an
// in-process manager whose clock moves only by hand, so that no lease
// expires while a loaded machine delays a round.
func keeperSetup(t *testing.T) (*lease.Keeper[int], *counting, *clock.Manual) {
	t.Helper()
	c := clock.NewManual(time.Unix(1000, 0))
	m := &counting{Manager: lease.NewLocal(c.Now)}
	k := lease.NewKeeper[int](m, "engine-a", 30*time.Millisecond)
	t.Cleanup(k.ReleaseAll)
	return k, m, c
}

func takeable(m lease.Manager, name string) bool {
	_, err := m.Acquire(context.Background(), name, "engine-b", time.Second)
	return err == nil
}

func TestKeeper_JoinsTheTenureItHoldsInsteadOfAcquiringAgain(t *testing.T) {
	k, m, _ := keeperSetup(t)
	a, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	b, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	require.Same(t, a, b)
	require.EqualValues(t, 1, m.acquires.Load())
	require.Equal(t, 1, k.Len())
	require.False(t, takeable(m, "run:1"), "another owner cannot take a held lease")
	a.Done()
	b.Done()
}

func TestKeeper_AnswersErrHeldWhenAnotherOwnerHoldsTheLease(t *testing.T) {
	k, m, _ := keeperSetup(t)
	_, err := m.Acquire(context.Background(), "run:1", "engine-b", time.Second)
	require.NoError(t, err)
	_, err = k.Take(context.Background(), "run:1")
	require.ErrorIs(t, err, lease.ErrHeld)
	require.Zero(t, k.Len())
}

func TestKeeper_GivesALeaseUpOnceARoundPassesWithoutAUse(t *testing.T) {
	k, m, _ := keeperSetup(t)
	before := runtime.NumGoroutine()
	ten, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	ten.State = 7
	ten.Done()
	require.Eventually(t, func() bool { return k.Len() == 0 }, 10*time.Second, time.Millisecond)
	require.ErrorIs(t, ten.Context().Err(), context.Canceled, "the tenure ended")
	require.True(t, takeable(m, "run:1"), "the lease was released")
	require.LessOrEqual(t, goroutinesWithin(10*time.Second, before), before, "the renewer stops when nothing is held")

	again, err := k.Take(context.Background(), "run:2")
	require.NoError(t, err)
	require.Zero(t, again.State, "a new tenure starts from a zero state")
	again.Done()
}

func TestKeeper_RenewsALeaseInUse(t *testing.T) {
	k, m, c := keeperSetup(t)
	ten, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	defer ten.Done()
	for range 6 { // 120 ms of the lease's clock: four TTLs
		c.Advance(20 * time.Millisecond)
		n := m.renewals.Load()
		require.Eventually(t, func() bool { return m.renewals.Load() >= n+2 }, 10*time.Second, time.Millisecond)
	}
	require.NoError(t, ten.Context().Err(), "the work under a renewed lease goes on")
	require.False(t, takeable(m, "run:1"))
	require.Equal(t, 1, k.Len())
}

func TestKeeper_CancelsTheWorkWhenItsLeaseIsLost(t *testing.T) {
	k, m, _ := keeperSetup(t)
	ten, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	defer ten.Done()
	require.NoError(t, m.Release(context.Background(), lease.Lease{Name: "run:1", Owner: "engine-a"})) // someone removed it
	select {
	case <-ten.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("work under a lost lease was not stopped")
	}
	require.Zero(t, k.Len())
	next, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	require.NotSame(t, ten, next, "the next use takes the lease again, as a new tenure")
	next.Done()
}

func TestKeeper_DropReleasesTheLeaseAtOnce(t *testing.T) {
	k, m, _ := keeperSetup(t)
	ten, err := k.Take(context.Background(), "run:1")
	require.NoError(t, err)
	ten.Drop()
	ten.Done()
	require.ErrorIs(t, ten.Context().Err(), context.Canceled)
	require.Zero(t, k.Len())
	require.True(t, takeable(m, "run:1"))
}

func TestKeeper_ReleaseAllEndsEveryTenure(t *testing.T) {
	k, m, _ := keeperSetup(t)
	var held []*lease.Tenure[int]
	for _, name := range []string{"run:1", "run:2", "run:3"} {
		ten, err := k.Take(context.Background(), name)
		require.NoError(t, err)
		held = append(held, ten)
	}
	k.ReleaseAll()
	require.Zero(t, k.Len())
	for i, name := range []string{"run:1", "run:2", "run:3"} {
		require.Error(t, held[i].Context().Err())
		require.True(t, takeable(m, name))
		held[i].Done()
	}
}

func TestKeeper_TakeChecksItsArguments(t *testing.T) {
	k := lease.NewKeeper[int](lease.NewLocal(nil), "", time.Second)
	_, err := k.Take(context.Background(), "run:1")
	require.EqualError(t, err, "lease: owner must not be empty")
	k = lease.NewKeeper[int](lease.NewLocal(nil), "o", time.Millisecond)
	_, err = k.Take(context.Background(), "run:1")
	require.EqualError(t, err, "lease: TTL must be at least 10ms, got 1ms")
}

// goroutinesWithin waits up to d for the goroutine count to fall to want,
// and answers the count.
func goroutinesWithin(d time.Duration, want int) int {
	deadline := time.Now().Add(d)
	n := runtime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}
