package pebblestore

import (
	"sync/atomic"

	"github.com/weft-dev/weft/store"
)

// groupStats counts group commits, for tests and benchmarks.
type groupStats struct {
	groups  atomic.Uint64 // groups committed (or failed)
	batches atomic.Uint64 // batches in them
	largest atomic.Uint64 // batches in the largest group
	// storedReads counts the condition keys read from Pebble: those that
	// neither the group's own writes nor the recent versions answered.
	storedReads atomic.Uint64
}

func (st *groupStats) noteGroup(n int) {
	for {
		cur := st.largest.Load()
		if uint64(n) <= cur || st.largest.CompareAndSwap(cur, uint64(n)) {
			return
		}
	}
}

// GroupStats implements store.GroupCommitter. A Pebble group never restarts:
// Retries stays 0.
func (s *Store) GroupStats() store.GroupStats {
	return store.GroupStats{Groups: s.stats.groups.Load(), Batches: s.stats.batches.Load()}
}
