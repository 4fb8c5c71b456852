package sqlstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

// copied answers what a request holds of its batch, copied out of its
// memory, so that it can be compared once that memory is recycled.
func copied(r *request) (conds []store.Condition, ops []store.Op) {
	for _, c := range r.conds {
		conds = append(conds, store.Condition{Kind: c.Kind, Key: bytes.Clone(c.Key), Version: c.Version})
	}
	for _, op := range r.ops {
		ops = append(ops, store.Op{Kind: op.Kind, Key: bytes.Clone(op.Key), Value: bytes.Clone(op.Value)})
	}
	return conds, ops
}

// A request's memory is given back when its second holder lets go, not its
// first: the caller's answer and the leader's work both outlive the other.
func TestRequestMem_GivenBackOnlyOnceBothHoldersLetGo(t *testing.T) {
	t.Parallel()
	mems := &requestMems{poison: true}
	r := newRequest(context.Background(), stepBatch(3), mems)
	conds, ops := copied(r)
	r.letGo()
	gotConds, gotOps := copied(r)
	require.Equal(t, conds, gotConds, "one holder let go: the memory is still the request's")
	require.Equal(t, ops, gotOps)
	r.letGo()
	for _, op := range r.ops { // read here only to prove the poisoning
		require.Equal(t, poisonKey, op.Key, "both let go: the memory was given back, poisoned")
	}
}

// A request built in recycled memory holds exactly its own batch, whatever
// the batches that used the memory before (larger, smaller, poisoned or
// only cleared), and an empty value stays non-nil.
func TestRequestMem_RecycledMemoryHoldsExactlyTheNewBatch(t *testing.T) {
	t.Parallel()
	for _, poison := range []bool{false, true} {
		t.Run(fmt.Sprint("poison=", poison), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, 16))
			mems := &requestMems{poison: poison}
			for round := range 500 {
				b := randomBatch(rng, round)
				want := newRequest(context.Background(), b, nil)
				got := newRequest(context.Background(), b, mems)
				wantConds, wantOps := copied(want)
				gotConds, gotOps := copied(got)
				require.Equal(t, wantConds, gotConds, "round %d", round)
				require.Equal(t, wantOps, gotOps, "round %d", round)
				require.True(t, slices.Equal(want.keys, got.keys), "round %d: key hashes", round)
				require.Equal(t, want.size, got.size)
				require.Equal(t, want.nPuts, got.nPuts)
				require.False(t, got.waited)
				require.Equal(t, stateQueued, got.state.Load())
				require.EqualValues(t, 2, got.refs.Load())
				require.Equal(t, outcome{}, got.out)
				require.Empty(t, got.done, "round %d: no outcome sent", round)
				got.finish(outcome{err: errors.New("an earlier batch's outcome")}) // the caller never reads it
				for _, op := range got.ops {
					if op.Kind == store.OpPut {
						require.NotNil(t, op.Value, "round %d: an empty value stays non-nil (nil would be NULL)", round)
					}
				}
				got.letGo()
			}
		})
	}
}

// randomBatch draws a batch of up to 40 ops and 10 conditions, keys and
// values of random lengths (empty values among them).
func randomBatch(rng *rand.Rand, round int) *store.Batch {
	b := &store.Batch{}
	for i := range rng.IntN(40) {
		k := store.Key("k", fmt.Sprint(round, ".", i), string(bytes.Repeat([]byte{'k'}, rng.IntN(50))))
		if rng.IntN(5) == 0 {
			b.Ops = append(b.Ops, store.Delete(k))
			continue
		}
		b.Ops = append(b.Ops, store.Put(k, bytes.Repeat([]byte{byte('a' + round%26)}, rng.IntN(300))))
	}
	for i := range rng.IntN(10) {
		b.Conditions = append(b.Conditions, store.IfVersion(store.Key("c", fmt.Sprint(round, ".", i)), rng.Uint64N(1<<40)))
	}
	return b
}

// Memory grown past the bounds is dropped, never kept for a later request.
func TestRequestMem_LargeMemoryIsNotKept(t *testing.T) {
	t.Parallel()
	mems := &requestMems{}
	for _, m := range []*requestMem{
		mems.take(maxKeptRequestBytes+1, 1, 1),
		mems.take(1, maxKeptRequestOps+1, 1),
		mems.take(1, 1, maxKeptRequestOps+1),
	} {
		mems.give(m)
		got, _ := mems.pool.Get().(*requestMem)
		require.NotSame(t, m, got)
	}
}

// A caller that gives up on a request still queued lets go for the leader
// too (none will take it); one that gives up on a request its group is
// committing leaves the memory to the leader until it finishes.
func TestRequestWait_GivesMemoryBackOnlyWhenNoLeaderHoldsIt(t *testing.T) {
	t.Parallel()
	mems := &requestMems{poison: true}
	t.Run("queued", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := newRequest(ctx, stepBatch(1), mems)
		cancel()
		_, err := r.wait(ctx, newCommitter(Config{MaxGroups: 1}, nil))
		require.ErrorIs(t, err, context.Canceled)
		r.letGo() // the caller's (Commit's)
		require.Zero(t, r.refs.Load())
		require.Equal(t, poisonKey, r.ops[0].Key, "given back: no leader holds it")
	})
	t.Run("committing", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		r := newRequest(ctx, stepBatch(2), mems)
		_, ops := copied(r)
		r.state.Store(stateTaken) // a leader took it
		cancel()
		_, err := r.wait(ctx, newCommitter(Config{MaxGroups: 1}, nil))
		require.ErrorIs(t, err, store.ErrOutcomeUnknown)
		r.letGo()
		_, got := copied(r)
		require.Equal(t, ops, got, "the leader still holds it")
		r.finish(outcome{})
		require.Equal(t, poisonKey, r.ops[0].Key, "given back once the leader finished")
	})
}

// A failed condition's error names the key in memory of its own: it stays
// the same once the request's memory is recycled, whether decide (the
// transaction's) or the recheck's checkConditions found it.
func TestCheckConditions_FailedConditionKeepsNoneOfTheRequestsMemory(t *testing.T) {
	t.Parallel()
	k := store.Key("wf", "1", "ckpt")
	state := map[string]keyState{string(k): {found: true, version: 3}}
	for _, tc := range []struct {
		name string
		run  func(g *group) error
	}{
		{"decide", func(g *group) error { g.decide(state, nil); return g.outcomes[0].err }},
		{"recheck", func(g *group) error { return checkConditions(g.reqs[0].conds, lookupIn(state)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mems := &requestMems{poison: true}
			r := newRequest(context.Background(), &store.Batch{Conditions: []store.Condition{store.IfVersion(bytes.Clone(k), 2)}}, mems)
			err := tc.run(newGroup([]*request{r}))
			var cf *store.ConditionFailedError
			require.ErrorAs(t, err, &cf)
			r.letGo()
			r.letGo()
			require.Equal(t, poisonKey, r.conds[0].Key, "the request's memory was given back, poisoned")
			require.Equal(t, k, cf.Key)
			require.Equal(t, k, cf.Condition.Key)
			require.Equal(t, store.CondVersion, cf.Condition.Kind)
			require.Contains(t, cf.Error(), string(k))
		})
	}
}

// A request whose caller gives up while it is queued leaves the queue before
// its caller lets go of it: the queue never holds a request recycled for
// another batch, which no leader may take unless its caller submits it.
func TestCommitterAbandon_WithdrawnRequestLeavesTheQueueBeforeItIsRecycled(t *testing.T) {
	t.Parallel()
	mems := &requestMems{poison: true}
	c := newCommitter(Config{MaxGroups: 2, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
	inFlight := testRequestIn(context.Background(), mems, "a")
	c.queue = []*request{inFlight}
	group, _ := c.take(&leaderMem{})
	require.Equal(t, []*request{inFlight}, group)
	for round := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		queued := testRequestIn(ctx, mems, "a", fmt.Sprint("q", round)) // waits for the group holding "a"
		waiting := testRequestIn(context.Background(), mems, fmt.Sprint("w", round))
		c.queue = append(c.queue, queued, waiting)
		cancel()
		_, err := queued.wait(ctx, c)
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, []*request{waiting}, c.queue, "round %d: withdrawn at once", round)
		queued.letGo() // the caller's: the request may be recycled from here on
		next := testRequestIn(context.Background(), mems, fmt.Sprint("n", round))
		taken, _ := c.take(&leaderMem{})
		require.Equal(t, []*request{waiting}, taken, "round %d: only what was submitted is taken", round)
		require.Equal(t, stateQueued, next.state.Load())
		waiting.finish(outcome{})
		waiting.letGo()
		next.letGo()
		next.letGo()
	}
}
