package sqlstore

import (
	"math/bits"
	"slices"
	"sync"
)

// committer is the group commit queue. Commit callers enqueue requests; up
// to maxGroups leader goroutines each take what is queued into one group and
// commit it in one transaction. A leader never waits for more work to arrive:
// a group holds what queued while the previous transactions ran, so a lone
// caller commits at once and a busy store folds many batches into each
// transaction and each fsync.
//
// Groups in flight at the same time never share a key: a batch that
// conditions or writes a key some group in flight holds stays queued for a
// later group (and so does every later batch that shares a key with it, which
// keeps each key's batches in arrival order). So this process's groups never
// conflict with one another in the database, and a contended key's
// compare-and-set callers meet in one group, where all but the first lose at
// once, without a transaction of their own.
//
// The committer knows a request's keys by their hashes (keyHashes): two
// requests that share a key share its hash, so keeping apart requests that
// share a hash keeps apart those that share a key. With one group in flight
// at most (maxGroups 1, PostgreSQL's default) no other group can share one:
// it holds no key then (track).
type committer struct {
	maxGroups  int
	maxBatches int
	maxBytes   int
	// commit commits one group and finishes every request in it; disjoint
	// tells it that no two of the group's requests share a key.
	commit func(group []*request, disjoint bool)

	mu    sync.Mutex
	queue []*request
	// track is set when more than one group may be in flight: then busy
	// holds the key hashes of the groups in flight; otherwise it stays empty
	// (the one group in flight is released before its leader takes the
	// next, and a solo commit starts only with no leader running).
	track   bool
	busy    map[uint64]struct{}
	blocked map[uint64]struct{} // take's: the key hashes of the requests it skipped
	leaders int
	spare   []*leaderMem // the memory of leaders that stopped, for the next
	wg      sync.WaitGroup
}

// leaderMem is a leader's memory, kept from group to group and, once the
// leader stops, for a later one (committer.spare): its group, the key hashes
// the group holds (when the committer tracks them), and the table distinct
// finds repeated hashes with. The leader copies the hashes out of the
// requests when it takes them (take) because it releases them after it has
// finished every request, when the requests' memory may be another's
// (requestMems).
type leaderMem struct {
	group []*request
	held  []uint64
	table []uint64
}

// maxKeptHeld bounds the key hashes, and the table entries, a leaderMem
// keeps between groups.
const maxKeptHeld = 1 << 16

// distinct reports whether no key hash repeats among the requests of group
// (none of which lists one twice, but for a large batch: newRequest), in
// m.table, an open-addressing set of the hashes, emptied first. The hashes
// are random already, so their low bits index the table; a slot holds a hash
// with its lowest bit set, never 0, which is empty. Two hashes that differ
// only in that bit are taken for one: a false answer only costs the group
// oneTrip's exact check.
func (m *leaderMem) distinct(group []*request) bool {
	n := 0
	for _, r := range group {
		n += len(r.keys)
	}
	size := 1 << bits.Len(uint(2*n)) // more than twice n: probes stay short
	if cap(m.table) < size {
		m.table = make([]uint64, size)
	} else {
		m.table = m.table[:size]
		clear(m.table)
	}
	mask := uint64(size - 1)
	for _, r := range group {
		for _, h := range r.keys {
			slot := h | 1
			for i := h & mask; ; i = (i + 1) & mask {
				if m.table[i] == 0 {
					m.table[i] = slot
					break
				}
				if m.table[i] == slot {
					return false
				}
			}
		}
	}
	return true
}

func newCommitter(cfg Config, commit func([]*request, bool)) *committer {
	return &committer{maxGroups: cfg.MaxGroups, maxBatches: cfg.MaxGroupBatches, maxBytes: cfg.MaxGroupBytes,
		commit: commit, track: cfg.MaxGroups > 1, busy: map[uint64]struct{}{}, blocked: map[uint64]struct{}{}}
}

// submit queues r and starts a leader if fewer than maxGroups are running.
// When nothing is queued, a leader slot is free and no group in flight holds
// r's keys, it answers true instead: r is taken, and the caller commits it
// alone, at once, on its own goroutine (solo), then calls finishSolo. An idle
// store so pays no hand-off between goroutines.
func (c *committer) submit(r *request) (solo bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 && c.leaders < c.maxGroups && !holdsAny(c.busy, r.keys) {
		c.leaders++
		c.wg.Add(1)
		r.state.Store(stateTaken)
		c.hold(r.keys)
		return true
	}
	c.queue = append(c.queue, r)
	if c.leaders < c.maxGroups {
		c.leaders++
		c.wg.Add(1)
		go c.lead()
	}
	return false
}

// finishSolo ends a solo commit: it releases its keys (those of the request,
// still its caller's, or a copy) and hands the leader slot to a new leader
// goroutine if batches queued meanwhile.
func (c *committer) finishSolo(keys keyHashes) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release(keys)
	if len(c.queue) > 0 {
		go c.lead() // keeps the slot and the wait group count
		return
	}
	c.leaders--
	c.wg.Done()
}

// abandon withdraws r, which its caller gave up on, unless a leader took it:
// it answers whether r is (now) abandoned, and then the queue no longer
// holds it. The state of a queued request changes only under c.mu, so that
// take, which reads the key hashes of the requests it finds queued, never
// reads those of a request whose memory its caller gave back; and r leaves
// the queue before its caller lets go of it, so that the queue never holds
// a request recycled for another batch (requestMems).
func (c *committer) abandon(r *request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !r.state.CompareAndSwap(stateQueued, stateAbandoned) && r.state.Load() != stateAbandoned {
		return false
	}
	if i := slices.Index(c.queue, r); i >= 0 { // else take dropped it already
		c.queue = slices.Delete(c.queue, i, i+1)
	}
	return true
}

// lead commits groups until the queue holds nothing it may take.
func (c *committer) lead() {
	defer c.wg.Done()
	c.mu.Lock()
	m := &leaderMem{}
	if n := len(c.spare); n > 0 {
		m = c.spare[n-1]
		c.spare[n-1] = nil
		c.spare = c.spare[:n-1]
	}
	for {
		group, disjoint := c.take(m)
		if len(group) == 0 {
			c.leaders--
			if cap(m.held) > maxKeptHeld {
				m.held = nil
			}
			if cap(m.table) > maxKeptHeld {
				m.table = nil
			}
			c.spare = append(c.spare, m) // at most maxGroups: one per leader
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.commit(group, disjoint)
		clear(group) // let go of the finished requests
		c.mu.Lock()
		c.release(m.held)
	}
}

// hold marks keys busy, when the committer tracks them. Called with c.mu
// held.
func (c *committer) hold(keys []uint64) {
	if c.track {
		for _, k := range keys {
			c.busy[k] = struct{}{}
		}
	}
}

// release frees the key hashes of a group that is done. Called with c.mu
// held.
func (c *committer) release(held []uint64) {
	if c.track {
		for _, k := range held {
			delete(c.busy, k)
		}
	}
}

// take removes from the queue, in arrival order, the requests the next group
// commits (into m.group), marks their keys busy (and copies their hashes
// into m.held) when the committer tracks them, and answers whether no two of
// them share a key (false also when two share a hash, or when a large batch
// lists a hash twice: oneTrip tells those apart). It skips a
// request that shares a key with a group in flight, and every later one that
// shares a key with a skipped one; it drops abandoned requests and those
// whose caller's context has ended. Called with c.mu held.
func (c *committer) take(m *leaderMem) (group []*request, disjoint bool) {
	group, bytes, kept := m.group[:0], 0, 0
	if len(c.blocked) > 0 {
		clear(c.blocked)
	}
	for i, r := range c.queue {
		if len(group) == c.maxBatches || (len(group) > 0 && bytes+r.size > c.maxBytes) {
			kept += copy(c.queue[kept:], c.queue[i:])
			break
		}
		if r.state.Load() != stateQueued {
			continue // abandoned by its caller: its memory is no longer read
		}
		if holdsAny(c.busy, r.keys) || holdsAny(c.blocked, r.keys) {
			for _, k := range r.keys {
				c.blocked[k] = struct{}{}
			}
			r.waited = true
			c.queue[kept] = r // kept <= i: the queue is compacted in place
			kept++
			continue
		}
		if r.ctx.Err() != nil || !r.state.CompareAndSwap(stateQueued, stateTaken) {
			r.state.CompareAndSwap(stateQueued, stateAbandoned)
			continue
		}
		group = append(group, r)
		bytes += r.size
	}
	clear(c.queue[kept:]) // let go of what was taken or dropped
	c.queue = c.queue[:kept]
	held := m.held[:0]
	if c.track {
		for _, r := range group {
			held = append(held, r.keys...)
		}
		c.hold(held)
	}
	m.group, m.held = group, held
	return group, m.distinct(group)
}

func holdsAny(set map[uint64]struct{}, keys keyHashes) bool {
	if len(set) == 0 {
		return false
	}
	for _, k := range keys {
		if _, ok := set[k]; ok {
			return true
		}
	}
	return false
}

// queued answers how many requests wait in the queue (one whose caller's
// context ended included until its caller or a leader withdraws it).
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// wait blocks until no leader runs.
func (c *committer) wait() { c.wg.Wait() }
