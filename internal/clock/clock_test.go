package clock_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/clock"
)

var start = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func TestManual_MovesOnlyWhenAdvancedOrSet(t *testing.T) {
	c := clock.NewManual(start)
	require.Equal(t, start, c.Now())
	require.Equal(t, start, c.Now(), "reading the clock does not move it")
	c.Advance(1500 * time.Millisecond)
	require.Equal(t, start.Add(1500*time.Millisecond), c.Now())
	c.Set(start)
	require.Equal(t, start, c.Now())
}

func TestManual_ConcurrentAdvancesAllCount(t *testing.T) {
	c := clock.NewManual(start)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Advance(time.Millisecond)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	require.Equal(t, start.Add(800*time.Millisecond), c.Now())
}

func TestSystem_ReadsTheWallClockInUTC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := time.Now()
		time.Sleep(time.Hour) // the bubble's clock: no real time passes
		now := clock.System{}.Now()
		require.Equal(t, time.UTC, now.Location())
		require.True(t, now.Equal(before.Add(time.Hour)), "System reads time.Now, which the bubble moved by an hour")
	})
}

// Sleep answers nil once d has passed, ctx's error when ctx ends first, and
// nil at once for a d of zero or less.
func TestSleep_AnswersContextErrorWhenContextEndsFirst(t *testing.T) {
	require.NoError(t, clock.Sleep(context.Background(), time.Millisecond))
	require.NoError(t, clock.Sleep(context.Background(), 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, clock.Sleep(ctx, time.Hour), context.Canceled)
}
