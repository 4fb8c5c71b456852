package sqlstore

import (
	"hash/maphash"
	"slices"
	"sync"
)

// keyLocks serialises, inside one process, conditional batches whose
// conditions share a key (by stripe). The database remains what makes
// conditional batches linearizable — across processes nothing else does —
// but a process need not pay serialization failures to learn that its own
// goroutines raced: they queue here instead, and one that waited re-reads its
// conditions before opening a transaction.
type keyLocks struct {
	seed    maphash.Seed
	stripes [256]sync.Mutex
}

func newKeyLocks() *keyLocks { return &keyLocks{seed: maphash.MakeSeed()} }

// lock takes the stripes of keys in ascending order (so two batches never
// deadlock) and reports whether any was held by someone else.
func (l *keyLocks) lock(keys [][]byte) (unlock func(), waited bool) {
	idx := make([]int, 0, len(keys))
	for _, k := range keys {
		idx = append(idx, int(maphash.Bytes(l.seed, k)%uint64(len(l.stripes))))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		if !l.stripes[i].TryLock() {
			waited = true
			l.stripes[i].Lock()
		}
	}
	return func() {
		for _, i := range idx {
			l.stripes[i].Unlock()
		}
	}, waited
}
