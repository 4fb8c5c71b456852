package sqlstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
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

// request is one caller's batch on its way through the group committer.
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
	// keys is every key the batch conditions or writes, each once: a group
	// in flight holds them, and no other group may take a batch that shares
	// one (see committer.take).
	keys keyList
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
	// out is the request's outcome, set once by finish before it closes
	// done (so whoever sees done closed reads out).
	out  outcome
	done chan struct{}
}

// outcome is what one request ends with.
type outcome struct {
	res *store.CommitResult
	err error
}

// newRequest copies a validated batch into memory from mems (one buffer for
// its keys and values) and lists its keys in one string (keyList). The
// request is held by its caller and by the leader that will finish it, each
// of which lets go of it once (letGo).
func newRequest(ctx context.Context, b *store.Batch, mems *requestMems) *request {
	size, keyBytes := 0, 0
	for _, c := range b.Conditions {
		keyBytes += len(c.Key)
	}
	for _, op := range b.Ops {
		keyBytes += len(op.Key)
		size += len(op.Value)
	}
	size += keyBytes
	mem := mems.take(size, len(b.Ops), len(b.Conditions))
	buf := mem.buf
	clone := func(p []byte) []byte {
		start := len(buf)
		buf = append(buf, p...) // within buf's capacity: never moves
		return buf[start:len(buf):len(buf)]
	}
	r := &request{ctx: ctx, size: size, done: make(chan struct{}), mem: mem, mems: mems}
	r.refs.Store(2)
	r.conds, r.ops = mem.conds, mem.ops
	var keys strings.Builder // keyList: the ops' keys, then the conditions' no op writes
	keys.Grow(keyBytes + keyLenBytes*(len(b.Ops)+len(b.Conditions)))
	for i, op := range b.Ops {
		r.ops[i] = store.Op{Kind: op.Kind, Key: clone(op.Key)}
		if op.Kind == store.OpPut {
			r.ops[i].Value = clone(op.Value) // never nil: nil would be NULL
			r.nPuts++
		}
		appendKey(&keys, op.Key)
	}
	written := writtenSet(b)
	for i, c := range b.Conditions {
		r.conds[i] = store.Condition{Kind: c.Kind, Key: clone(c.Key), Version: c.Version}
		if !isWritten(b.Ops, written, c.Key) {
			appendKey(&keys, c.Key)
		}
	}
	r.keys = keyList(keys.String())
	return r
}

// keyList is a request's keys, each once, each after its length in
// keyLenBytes bytes (a validated key is at most store.MaxKeyBytes long): one
// string for them all, of which the committer's sets hold slices.
type keyList string

// keyLenBytes is the size of a key's length in a keyList.
const keyLenBytes = 2

// all yields each key of l.
func (l keyList) all(yield func(string) bool) {
	for s := string(l); len(s) >= keyLenBytes; {
		n := keyLenBytes + (int(s[0])<<8 | int(s[1]))
		if !yield(s[keyLenBytes:n]) {
			return
		}
		s = s[n:]
	}
}

// appendKey appends k to a keyList being built.
func appendKey(l *strings.Builder, k []byte) {
	l.WriteByte(byte(len(k) >> 8))
	l.WriteByte(byte(len(k)))
	l.Write(k)
}

// A validated batch writes a key at most once and conditions it at most
// once, so only a condition's key may repeat an op's: a small batch finds
// those by comparing, a large one through a set of the written keys
// (writtenSet), once it would take more than maxCompares comparisons.
const maxCompares = 256

// writtenSet answers the set of the keys b's ops write when b is large
// enough for one, else nil.
func writtenSet(b *store.Batch) map[string]struct{} {
	if len(b.Conditions)*len(b.Ops) <= maxCompares {
		return nil
	}
	set := make(map[string]struct{}, len(b.Ops))
	for _, op := range b.Ops {
		set[string(op.Key)] = struct{}{}
	}
	return set
}

// isWritten reports whether one of ops writes k (in set, when there is one).
func isWritten(ops []store.Op, set map[string]struct{}, k []byte) bool {
	if set != nil {
		_, ok := set[string(k)]
		return ok
	}
	for _, op := range ops {
		if bytes.Equal(op.Key, k) {
			return true
		}
	}
	return false
}

// wait answers the request's outcome, or the end of ctx. A request that
// ends while still queued was never sent and answers ctx's error; one that
// ends while its group is committing answers *store.OutcomeUnknownError.
func (r *request) wait(ctx context.Context) (*store.CommitResult, error) {
	select {
	case <-r.done:
		return r.out.res, r.out.err
	case <-ctx.Done():
	}
	if r.state.CompareAndSwap(stateQueued, stateAbandoned) || r.state.Load() == stateAbandoned {
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
// never waits for the caller, and reads nothing of the batch afterwards.
func (r *request) finish(o outcome) {
	r.out = o
	close(r.done)
	r.letGo()
}

// letGo ends one holder's use of the request's copy of its batch: the
// caller's, once it has read its outcome or stopped waiting for it; the
// leader's, once it has finished the request (or, for a request no leader
// took, the caller's on its behalf). The last to let go gives the memory
// back.
func (r *request) letGo() {
	if r.refs.Add(-1) == 0 {
		r.mems.give(r.mem)
	}
}

// commitCanceled wraps the error of a context that ended a commit.
func commitCanceled(err error) error { return fmt.Errorf("sqlstore: commit: %w", err) }
