package sqlstore

import (
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
	// conds and ops are the caller's batch, copied: a caller that abandons a
	// request its group is committing must be free to reuse its buffers.
	conds []store.Condition
	ops   []store.Op
	// keys is every key the batch conditions or writes, each once: a group
	// in flight holds them, and no other group may take a batch that shares
	// one (see committer.take).
	keys []string
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

// newRequest copies a validated batch into one buffer and indexes its keys,
// whose strings share one allocation.
func newRequest(ctx context.Context, b *store.Batch) *request {
	size, keyBytes := 0, 0
	for _, c := range b.Conditions {
		keyBytes += len(c.Key)
	}
	for _, op := range b.Ops {
		keyBytes += len(op.Key)
		size += len(op.Value)
	}
	size += keyBytes
	buf := make([]byte, 0, size)
	clone := func(p []byte) []byte {
		start := len(buf)
		buf = append(buf, p...)
		return buf[start:len(buf):len(buf)]
	}
	r := &request{ctx: ctx, size: size, done: make(chan struct{})}
	r.conds = make([]store.Condition, len(b.Conditions))
	r.ops = make([]store.Op, len(b.Ops))
	var text strings.Builder // the ops' keys, then the conditions'
	text.Grow(keyBytes)
	for i, op := range b.Ops {
		r.ops[i] = store.Op{Kind: op.Kind, Key: clone(op.Key)}
		if op.Kind == store.OpPut {
			r.ops[i].Value = clone(op.Value) // never nil: nil would be NULL
			r.nPuts++
		}
		text.Write(op.Key)
	}
	for i, c := range b.Conditions {
		r.conds[i] = store.Condition{Kind: c.Kind, Key: clone(c.Key), Version: c.Version}
		text.Write(c.Key)
	}
	r.keys = indexKeys(text.String(), b)
	return r
}

// indexKeys cuts all — the keys of b's ops, then of its conditions — into
// the batch's keys, each once. A validated batch writes a key at most once
// and conditions it at most once, so only a condition's key may repeat an
// op's; a small batch finds those by comparing, a large one through a set.
func indexKeys(all string, b *store.Batch) []string {
	keys := make([]string, 0, len(b.Ops)+len(b.Conditions))
	at := 0
	next := func(n int) string {
		k := all[at : at+n]
		at += n
		return k
	}
	for _, op := range b.Ops {
		keys = append(keys, next(len(op.Key)))
	}
	written := keys[:len(b.Ops):len(b.Ops)]
	var set map[string]struct{}
	if len(b.Conditions)*len(written) > maxCompares {
		set = make(map[string]struct{}, len(written))
		for _, k := range written {
			set[k] = struct{}{}
		}
	}
	for _, c := range b.Conditions {
		if k := next(len(c.Key)); !isWritten(written, set, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// maxCompares bounds the key comparisons indexKeys makes before it builds a
// set of the written keys instead.
const maxCompares = 256

// isWritten reports whether k is one of written (in set, when there is one).
func isWritten(written []string, set map[string]struct{}, k string) bool {
	if set != nil {
		_, ok := set[k]
		return ok
	}
	for _, w := range written {
		if w == k {
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
		return nil, commitCanceled(ctx.Err())
	}
	select {
	case <-r.done:
		return r.out.res, r.out.err
	default:
		return nil, &store.OutcomeUnknownError{Cause: commitCanceled(ctx.Err())}
	}
}

// finish hands the request its outcome, once: the leader never waits for
// the caller.
func (r *request) finish(o outcome) {
	r.out = o
	close(r.done)
}

// commitCanceled wraps the error of a context that ended a commit.
func commitCanceled(err error) error { return fmt.Errorf("sqlstore: commit: %w", err) }
