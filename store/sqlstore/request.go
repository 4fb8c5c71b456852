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
	done   chan outcome // buffered: the leader never waits for the caller
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
	r := &request{ctx: ctx, size: size, done: make(chan outcome, 1)}
	r.conds = make([]store.Condition, len(b.Conditions))
	r.ops = make([]store.Op, len(b.Ops))
	var text strings.Builder // every key, once each as they come
	text.Grow(keyBytes)
	for i, c := range b.Conditions {
		r.conds[i] = store.Condition{Kind: c.Kind, Key: clone(c.Key), Version: c.Version}
		text.Write(c.Key)
	}
	for i, op := range b.Ops {
		r.ops[i] = store.Op{Kind: op.Kind, Key: clone(op.Key)}
		if op.Kind == store.OpPut {
			r.ops[i].Value = clone(op.Value) // never nil: nil would be NULL
			r.nPuts++
		}
		text.Write(op.Key)
	}
	all := text.String()
	r.keys = make([]string, 0, len(b.Conditions)+len(b.Ops))
	seen := make(map[string]struct{}, len(b.Conditions)+len(b.Ops))
	at := 0
	addKey := func(n int) {
		k := all[at : at+n]
		at += n
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			r.keys = append(r.keys, k)
		}
	}
	for _, c := range b.Conditions {
		addKey(len(c.Key))
	}
	for _, op := range b.Ops {
		addKey(len(op.Key))
	}
	return r
}

// wait answers the request's outcome, or the end of ctx. A request that
// ends while still queued was never sent and answers ctx's error; one that
// ends while its group is committing answers *store.OutcomeUnknownError.
func (r *request) wait(ctx context.Context) (*store.CommitResult, error) {
	select {
	case o := <-r.done:
		return o.res, o.err
	case <-ctx.Done():
	}
	if r.state.CompareAndSwap(stateQueued, stateAbandoned) || r.state.Load() == stateAbandoned {
		return nil, commitCanceled(ctx.Err())
	}
	select {
	case o := <-r.done:
		return o.res, o.err
	default:
		return nil, &store.OutcomeUnknownError{Cause: commitCanceled(ctx.Err())}
	}
}

// finish hands the request its outcome.
func (r *request) finish(o outcome) { r.done <- o }

// commitCanceled wraps the error of a context that ended a commit.
func commitCanceled(err error) error { return fmt.Errorf("sqlstore: commit: %w", err) }
