package export

import "sync"

// marks is how far this worker published each run's entry it did not
// delete: a run that appends events while the worker publishes them keeps
// its entry (its deletion requires the run's checkpoint as read), and the
// next pass publishes from the run_seq after the mark instead of from the
// entry's first. A mark is for the entry at one version: an entry put again
// (after a deletion) is a new one. Nothing of it is persisted: a new worker
// publishes a run's entry from its first run_seq (at least once).
type marks struct {
	mu sync.Mutex
	m  map[string]mark
}

type mark struct {
	version, through uint64
}

// get answers the last run_seq published of the entry key at version.
func (ms *marks) get(key []byte, version uint64) (uint64, bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	m, ok := ms.m[string(key)]
	if !ok || m.version != version {
		return 0, false
	}
	return m.through, true
}

// set notes that the entry key at version was published through run_seq
// through.
func (ms *marks) set(key []byte, version, through uint64) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = map[string]mark{}
	}
	if m, ok := ms.m[string(key)]; ok && m.version == version && m.through >= through {
		return
	}
	ms.m[string(key)] = mark{version: version, through: through}
}

// drop forgets the entry key's mark (it was deleted).
func (ms *marks) drop(key []byte) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	delete(ms.m, string(key))
}

// keepOnly forgets the marks of entries a whole pass did not see: they
// were deleted by another worker or by retention.
func (ms *marks) keepOnly(seen func(key string) bool) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for k := range ms.m {
		if !seen(k) {
			delete(ms.m, k)
		}
	}
}
