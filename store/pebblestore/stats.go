package pebblestore

import "sync/atomic"

// groupStats counts group commits, for tests and benchmarks.
type groupStats struct {
	groups  atomic.Uint64 // groups committed (or failed)
	batches atomic.Uint64 // batches in them
	largest atomic.Uint64 // batches in the largest group
}

func (st *groupStats) noteGroup(n int) {
	for {
		cur := st.largest.Load()
		if uint64(n) <= cur || st.largest.CompareAndSwap(cur, uint64(n)) {
			return
		}
	}
}
