package sqlstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync/atomic"

	"github.com/weft-dev/weft/store"
)

// Request states. A request is queued until a leader takes it into a group or
// its caller abandons it; whichever changes the state first decides.
const (
	stateQueued int32 = iota
	stateTaken
	stateAbandoned
)

// request is one caller's batch on its way through the group committer. It
// lives in its memory (requestMem), recycled with it.
type request struct {
	// conds and ops are the caller's batch, copied (into mem): a caller
	// that abandons a request its group is committing must be free to reuse
	// its buffers.
	conds []store.Condition
	ops   []store.Op
	// mem is the copy's memory, from mems, given back there once both the
	// caller and the leader let go of the request (letGo): refs counts those
	// still holding it.
	mem  *requestMem
	mems *requestMems
	refs atomic.Int32
	// keys hashes every key the batch conditions or writes (keyHashes), in
	// mem: a group in flight holds them, and no other group may take a batch
	// that shares one (see committer.take).
	keys keyHashes
	// size counts the batch's key and value bytes, for the group's bound.
	size int
	// nPuts counts the batch's puts: each draws a version.
	nPuts int
	// waited is set (under the committer's lock) when the request stayed
	// queued behind a group in flight that shared one of its keys: its
	// conditions were likely read before that group committed.
	waited bool
	ctx    context.Context
	state  atomic.Int32
	// out is the request's outcome, set once by finish before it sends on
	// done (so whoever receives from done reads out). done has room for the
	// one send, so finish never waits; only the caller receives, at most
	// once, and a send nobody received is drained when the request is
	// recycled.
	out  outcome
	done chan struct{}
}

// outcome is what one request ends with.
type outcome struct {
	res *store.CommitResult
	err error
}

// newRequest copies a validated batch into memory from mems (one buffer for
// its keys and values), where the request itself lives, and hashes its keys
// (keyHashes). The request is held by its caller and by the leader that will
// finish it, each of which lets go of it once (letGo).
func newRequest(ctx context.Context, b *store.Batch, mems *requestMems) *request {
	size := 0
	for _, c := range b.Conditions {
		size += len(c.Key)
	}
	for _, op := range b.Ops {
		size += len(op.Key) + len(op.Value)
	}
	mem := mems.take(size, len(b.Ops), len(b.Conditions))
	buf := mem.buf
	clone := func(p []byte) []byte {
		start := len(buf)
		buf = append(buf, p...) // within buf's capacity: never moves
		return buf[start:len(buf):len(buf)]
	}
	hash := mems.keyHash()
	r := &mem.req
	if r.done == nil {
		r.done = make(chan struct{}, 1)
	}
	select {
	case <-r.done: // sent to a caller that had stopped waiting
	default:
	}
	r.ctx, r.size, r.nPuts, r.waited, r.out, r.mem, r.mems = ctx, size, 0, false, outcome{}, mem, mems
	r.state.Store(stateQueued)
	r.refs.Store(2)
	r.conds, r.ops = mem.conds, mem.ops
	keys := mem.keys[:len(b.Ops)]
	for i, op := range b.Ops {
		r.ops[i] = store.Op{Kind: op.Kind, Key: clone(op.Key)}
		if op.Kind == store.OpPut {
			r.ops[i].Value = clone(op.Value) // never nil: nil would be NULL
			r.nPuts++
		}
		keys[i] = hash(op.Key)
	}
	written := keys
	if len(b.Conditions)*len(b.Ops) > maxCompares {
		written = nil // too many to compare: the hash stays twice
	}
	for i, c := range b.Conditions {
		r.conds[i] = store.Condition{Kind: c.Kind, Key: clone(c.Key), Version: c.Version}
		if h := hash(c.Key); !slices.Contains(written, h) {
			keys = append(keys, h) // within mem.keys's capacity
		}
	}
	r.keys = keys
	return r
}

// maxCompares bounds the comparisons newRequest makes to leave out of a
// request's keyHashes the hash of a key it conditions and writes: beyond, a
// large batch keeps such a hash twice.
const maxCompares = 256

// keyHashes is what the group committer knows of a request's keys: the hash
// of every key its batch writes, then of every key it conditions whose hash
// is not among those (a batch too large to compare them, newRequest, lists
// the hash of a key it conditions and writes twice). Two requests that share a key share its hash, so the
// committer, which keeps apart requests that share a hash, keeps apart every
// two that share a key; two that share only a hash (distinct keys whose
// hashes collide, about one pair in 2^64) are kept apart too, which costs
// them only the wait, or the one round trip.
type keyHashes = []uint64

// keySeed seeds the hashes of keys: hash/maphash's random seed, so that no
// batch can be built to collide.
var keySeed = maphash.MakeSeed()

// hashKey is a key's hash in a request's keyHashes.
func hashKey(k []byte) uint64 { return maphash.Bytes(keySeed, k) }

// wait answers the request's outcome, or the end of ctx. A request that
// ends while still queued in c was never sent and answers ctx's error; one
// that ends while its group is committing answers
// *store.OutcomeUnknownError.
func (r *request) wait(ctx context.Context, c *committer) (*store.CommitResult, error) {
	select {
	case <-r.done:
		return r.out.res, r.out.err
	case <-ctx.Done():
	}
	if c.abandon(r) {
		r.letGo() // for the leader: none took the request, none will
		return nil, commitCanceled(ctx.Err())
	}
	select {
	case <-r.done:
		return r.out.res, r.out.err
	default:
		return nil, &store.OutcomeUnknownError{Cause: commitCanceled(ctx.Err())}
	}
}

// finish hands the request its outcome, once, and lets go of it: the leader
// never waits for the caller, and reads nothing of the request afterwards.
func (r *request) finish(o outcome) {
	r.out = o
	r.done <- struct{}{}
	r.letGo()
}

// letGo ends one holder's use of the request and its copy of its batch:
// the caller's, once it has read its outcome or stopped waiting for it; the
// leader's, once it has finished the request (or, for a request no leader
// took, the caller's on its behalf, once the committer's queue let go of it:
// committer.abandon). The last to let go gives the memory back, the request
// with it.
func (r *request) letGo() {
	if r.refs.Add(-1) == 0 {
		r.mems.give(r.mem)
	}
}

// commitCanceled wraps the error of a context that ended a commit.
func commitCanceled(err error) error { return fmt.Errorf("sqlstore: commit: %w", err) }
