package sqlstore

import (
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
type committer struct {
	maxGroups  int
	maxBatches int
	maxBytes   int
	// commit commits one group and finishes every request in it.
	commit func(group []*request)

	mu      sync.Mutex
	queue   []*request
	busy    map[string]struct{} // keys held by groups in flight
	leaders int
	wg      sync.WaitGroup
}

func newCommitter(cfg Config, commit func([]*request)) *committer {
	return &committer{maxGroups: cfg.MaxGroups, maxBatches: cfg.MaxGroupBatches, maxBytes: cfg.MaxGroupBytes,
		commit: commit, busy: map[string]struct{}{}}
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
		hold(c.busy, r.keys)
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

// finishSolo ends a solo commit: it releases r's keys and hands the leader
// slot to a new leader goroutine if batches queued meanwhile.
func (c *committer) finishSolo(r *request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release([]*request{r})
	if len(c.queue) > 0 {
		go c.lead() // keeps the slot and the wait group count
		return
	}
	c.leaders--
	c.wg.Done()
}

// lead commits groups until the queue holds nothing it may take.
func (c *committer) lead() {
	defer c.wg.Done()
	c.mu.Lock()
	for {
		group := c.take()
		if len(group) == 0 {
			c.leaders--
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		c.commit(group)
		c.mu.Lock()
		c.release(group)
	}
}

// release frees the keys of a group that is done. Called with c.mu held.
func (c *committer) release(group []*request) {
	for _, r := range group {
		for k := range r.keys.all {
			delete(c.busy, k)
		}
	}
}

// take removes from the queue, in arrival order, the requests the next group
// commits, and marks their keys busy. It skips a request that shares a key
// with a group in flight, and every later one that shares a key with a
// skipped one; it drops abandoned requests and those whose caller's context
// has ended. Called with c.mu held.
func (c *committer) take() []*request {
	var (
		group   []*request
		bytes   int
		rest    []*request
		blocked map[string]struct{}
	)
	for i, r := range c.queue {
		if len(group) == c.maxBatches || (len(group) > 0 && bytes+r.size > c.maxBytes) {
			rest = append(rest, c.queue[i:]...)
			break
		}
		if r.state.Load() != stateQueued {
			continue // abandoned by its caller
		}
		if holdsAny(c.busy, r.keys) || holdsAny(blocked, r.keys) {
			if blocked == nil {
				blocked = map[string]struct{}{}
			}
			hold(blocked, r.keys)
			r.waited = true
			rest = append(rest, r)
			continue
		}
		if r.ctx.Err() != nil || !r.state.CompareAndSwap(stateQueued, stateTaken) {
			r.state.CompareAndSwap(stateQueued, stateAbandoned)
			continue
		}
		group = append(group, r)
		bytes += r.size
	}
	clear(c.queue) // let go of what was taken or dropped
	c.queue = append(c.queue[:0], rest...)
	for _, r := range group {
		hold(c.busy, r.keys)
	}
	return group
}

func holdsAny(set map[string]struct{}, keys keyList) bool {
	if len(set) == 0 {
		return false
	}
	for k := range keys.all {
		if _, ok := set[k]; ok {
			return true
		}
	}
	return false
}

func hold(set map[string]struct{}, keys keyList) {
	for k := range keys.all {
		set[k] = struct{}{}
	}
}

// queued answers how many requests wait in the queue (abandoned ones
// included until a leader drops them).
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// wait blocks until no leader runs.
func (c *committer) wait() { c.wg.Wait() }
