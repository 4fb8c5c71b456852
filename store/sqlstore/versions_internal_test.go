package sqlstore

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A store's versions only grow, even when its wall clock stands still or
// steps back, and every one is a positive INT8 carrying the store's node.
func TestVersionClock_VersionsOnlyGrowWhateverTheWallClockDoes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := newVersionClock(4096+7, func() time.Time { return now })
	var last uint64
	for i := range 3000 {
		switch i % 1000 {
		case 300:
			now = now.Add(-time.Hour) // a clock stepped back
		case 600:
			now = now.Add(2 * time.Hour)
		}
		n := 1 + i%3
		first := c.next(n)
		for j := range n {
			v := c.version(first + uint64(j))
			require.Greater(t, v, last, "draw %d", i)
			require.LessOrEqual(t, v, uint64(math.MaxInt64), "a version is a positive INT8")
			require.EqualValues(t, 7, v&nodeMask, "the node's low bits (4096+7 mod 4096)")
			last = v
		}
	}
	require.Zero(t, c.next(0), "a batch without puts draws nothing")
}

// After a version is observed, every version the clock hands out is
// greater, whoever handed out the observed one: that is what makes a key's
// versions grow along a chain of compare-and-sets across stores.
func TestVersionClock_ObservedVersionsAreOvertaken(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ahead := newVersionClock(1, func() time.Time { return now.Add(time.Hour) })
	behind := newVersionClock(2, func() time.Time { return now })
	v := ahead.version(ahead.next(1))
	behind.observe(v)
	require.Greater(t, behind.version(behind.next(1)), v)
	behind.observe(1) // an old, sequence-drawn version: nothing to overtake
	require.Greater(t, behind.version(behind.next(1)), v)
}

// Two stores with different nodes never hand out the same version, even
// when their clocks read the same instant; one store's concurrent draws
// never share one.
func TestVersionClock_DifferentNodesAndConcurrentDrawsNeverShareAVersion(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	frozen := func() time.Time { return now }
	clocks := []*versionClock{newVersionClock(1, frozen), newVersionClock(2, frozen)}
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c := clocks[g%2]
			for range 2000 {
				v := c.version(c.next(1))
				mu.Lock()
				require.False(t, seen[v], "version %d handed out twice", v)
				seen[v] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, 16000)
}

// Tick-made versions are above any a sequence drew before the upgrade.
func TestVersionClock_AboveEverySequenceDrawnVersion(t *testing.T) {
	t.Parallel()
	c := newVersionClock(0, time.Now)
	require.Greater(t, c.version(c.next(1)), uint64(1)<<59)
}
