package pebblestore

import (
	"context"
	"slices"
	"sync"

	"github.com/weft-dev/weft/store"
)

// queue is the leader/follower commit queue. Every Commit joins it with a
// request. The first to find no leader becomes the leader: it takes what is
// queued (itself first) as one group, commits the group and, when done,
// hands the lead to the request now at the head of the queue, if any. The
// others wait to be answered or handed the lead. So one group is committed at
// a time, and each group holds what queued while the previous one synced:
// nothing ever waits for more to arrive.
//
// Invariants, under mu: pending is in arrival order; a request is either
// pending or taken (its group is set), never both; and pending is empty
// whenever leading is false.
type queue struct {
	maxBatches int
	maxBytes   int

	mu      sync.Mutex
	pending []*request
	leading bool
}

// request is one Commit waiting in the queue.
type request struct {
	batch *store.Batch
	size  int // bytes of keys and values, for the group's byte bound

	// wake receives one signal: the request was answered (res, err) or
	// handed the lead (leads). It is buffered, so the sender never blocks.
	wake  chan struct{}
	leads bool   // under queue.mu
	group *group // under queue.mu: set when a leader takes the request

	// The outcome, written by the leader before it signals wake.
	res *store.CommitResult
	err error
}

// group is the requests one leader commits together.
type group struct {
	reqs []*request
	// folded is closed once the leader has read every batch of the group,
	// after which a caller may leave without racing the leader on its batch.
	folded chan struct{}
}

func newRequest(b *store.Batch) *request {
	size := 0
	for _, c := range b.Conditions {
		size += len(c.Key)
	}
	for _, op := range b.Ops {
		size += len(op.Key) + len(op.Value)
	}
	return &request{batch: b, size: size, wake: make(chan struct{}, 1)}
}

// join queues r and reports whether r is the leader.
func (q *queue) join(r *request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, r)
	if q.leading {
		return false
	}
	q.leading = true
	r.leads = true
	return true
}

// wait blocks until r is answered or handed the lead, and reports whether it
// leads. When ctx ends first, a request not yet taken is withdrawn, nothing of
// it written, and wait returns ctx.Err(). A request already taken is written
// or not with its group: wait returns an *OutcomeUnknownError once the leader
// no longer reads the batch, unless the answer came meanwhile.
func (q *queue) wait(ctx context.Context, r *request) (leads bool, err error) {
	select {
	case <-r.wake:
		return r.leads, nil
	case <-ctx.Done():
	}
	if q.withdraw(r) {
		return false, ctx.Err()
	}
	select {
	case <-r.wake:
		return false, nil
	case <-r.group.folded:
	}
	select {
	case <-r.wake:
		return false, nil
	default:
		return false, &store.OutcomeUnknownError{Cause: ctx.Err()}
	}
}

// withdraw removes r from the queue unless a leader has taken it, and
// reports whether it did. A withdrawn request that had been handed the lead
// passes it on.
func (q *queue) withdraw(r *request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.group != nil {
		return false
	}
	q.pending = slices.DeleteFunc(q.pending, func(p *request) bool { return p == r })
	if r.leads {
		q.handOffLocked()
	}
	return true
}

// take removes the next group from the head of the queue: the leader (at the
// head) and those behind it, up to maxBatches requests and maxBytes bytes,
// but always at least one.
func (q *queue) take() *group {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, bytes := 0, 0
	for n < len(q.pending) && n < q.maxBatches {
		if n > 0 && bytes+q.pending[n].size > q.maxBytes {
			break
		}
		bytes += q.pending[n].size
		n++
	}
	g := &group{reqs: q.pending[:n:n], folded: make(chan struct{})}
	q.pending = q.pending[n:]
	for _, r := range g.reqs {
		r.group = g
	}
	return g
}

// handOff ends the current leader's turn.
func (q *queue) handOff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handOffLocked()
}

// handOffLocked gives the lead to the head of the queue, or, when the queue is
// empty, leaves the next request that joins to lead.
func (q *queue) handOffLocked() {
	if len(q.pending) == 0 {
		q.leading = false
		return
	}
	next := q.pending[0]
	next.leads = true
	next.wake <- struct{}{}
}

// queueLen is the number of requests waiting to be taken.
func (q *queue) queueLen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}
