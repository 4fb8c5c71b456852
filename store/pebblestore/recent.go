package pebblestore

// recentVersions remembers the versions of the keys the store wrote most
// recently — a deleted key as absent — so that a condition on a key written
// moments ago (a run's checkpoint, a task just dispatched) is decided without
// reading Pebble. It is exact for the keys it holds because the store owns
// its directory (Pebble's directory lock) and every write goes through the
// group-commit leader, which alone reads and updates it: after a group's
// apply succeeds the leader records what the group wrote, and after an apply
// fails (its outcome unknown) it forgets everything. It starts empty on
// every open. It holds at most its capacity of keys and forgets the oldest
// first; a key it does not hold is read from Pebble.
type recentVersions struct {
	versions map[string]uint64 // key → version, 0 when deleted
	order    []string          // the keys held, a ring, oldest at next
	next     int
}

// recentCapacity is how many keys recentVersions holds: about a second of
// writes at the embedded benchmark's rate, a few MiB.
const recentCapacity = 1 << 14

func newRecentVersions(capacity int) *recentVersions {
	return &recentVersions{versions: make(map[string]uint64, capacity), order: make([]string, 0, capacity)}
}

// get answers a held key's presence and version; held is false for a key it
// does not hold.
func (rv *recentVersions) get(key []byte) (found bool, version uint64, held bool) {
	version, held = rv.versions[string(key)]
	return version != 0, version, held
}

// note records that key now has version (0: deleted).
func (rv *recentVersions) note(key string, version uint64) {
	held := len(rv.versions)
	rv.versions[key] = version
	if len(rv.versions) == held {
		return // held already: updated in place, one map operation
	}
	if len(rv.order) < cap(rv.order) {
		rv.order = append(rv.order, key)
		return
	}
	delete(rv.versions, rv.order[rv.next])
	rv.order[rv.next] = key
	rv.next = (rv.next + 1) % len(rv.order)
}

// forget drops every key.
func (rv *recentVersions) forget() {
	clear(rv.versions)
	clear(rv.order)
	rv.order = rv.order[:0]
	rv.next = 0
}
