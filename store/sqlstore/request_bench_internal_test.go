package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/weft-dev/weft/store"
)

// stepBatch is shaped like a step's completion as weftd commits it: the
// checkpoint's and the task's compare-and-sets, five absent-conditions on
// event idempotency keys, and eighteen writes (the checkpoint, the task,
// the five idempotency keys and their events, outbox entries, a delete).
func stepBatch(run int) *store.Batch {
	r := strconv.Itoa(run)
	ckpt, task := store.Key("wf", r, "ckpt"), store.Key("wf", r, "task")
	b := &store.Batch{Conditions: []store.Condition{store.IfVersion(ckpt, 7), store.IfVersion(task, 9)}}
	b.Ops = append(b.Ops, store.Put(ckpt, make([]byte, 300)), store.Put(task, make([]byte, 120)))
	for e := range 5 {
		idem := store.Key("idem", r, strconv.Itoa(e))
		b.Conditions = append(b.Conditions, store.IfAbsent(idem))
		b.Ops = append(b.Ops, store.Put(idem, make([]byte, 8)),
			store.Put(store.Key("wf", r, "ev", strconv.Itoa(e)), make([]byte, 150)),
			store.Put(store.Key("outbox", r, strconv.Itoa(e)), make([]byte, 40)))
	}
	b.Ops = append(b.Ops, store.Delete(store.Key("wf", r, "ready")))
	return b
}

// BenchmarkNewRequest measures what Commit pays to queue a step's batch,
// in memory its store recycles (both holders let go of each request).
func BenchmarkNewRequest(b *testing.B) {
	batch := stepBatch(1)
	ctx := context.Background()
	var mems requestMems
	b.ReportAllocs()
	for b.Loop() {
		r := newRequest(ctx, batch, &mems)
		r.letGo()
		r.letGo()
	}
}

// BenchmarkOneTripWrites measures what a leader pays to lay out a group of
// sixteen step-shaped batches for the one round trip (the arrays sorted by
// key, encoded).
func BenchmarkOneTripWrites(b *testing.B) {
	reqs := make([]*request, 16)
	for i := range reqs {
		reqs[i] = newRequest(context.Background(), stepBatch(1000+i*7919), nil)
	}
	g := newGroup(reqs)
	sc := &tripScratch{seen: map[uint64]int{}}
	b.ReportAllocs()
	for b.Loop() {
		sc.encode(g.oneTripWrites(sc))
	}
}

// BenchmarkCommitterGroup measures the committer's bookkeeping of one group
// of sixteen step-shaped batches: taking them from the queue (their keys
// marked busy when more than one group may be in flight), telling whether
// the one round trip may take them (oneTrip), and releasing their keys once
// the group is done.
func BenchmarkCommitterGroup(b *testing.B) {
	for _, groups := range []int{1, 4} {
		b.Run(fmt.Sprint("groups=", groups), func(b *testing.B) {
			reqs := make([]*request, 16)
			for i := range reqs {
				reqs[i] = newRequest(context.Background(), stepBatch(1000+i*7919), nil)
			}
			c := newCommitter(Config{MaxGroups: groups, MaxGroupBatches: 128, MaxGroupBytes: 8 << 20}, nil)
			m := &leaderMem{}
			sc := &tripScratch{seen: map[uint64]int{}}
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range reqs {
					r.state.Store(stateQueued)
				}
				c.queue = append(c.queue, reqs...)
				group, disjoint := c.take(m)
				g := newGroup(group)
				g.disjoint = disjoint
				if len(group) != len(reqs) || !disjoint || !pgStore.oneTrip(g, sc) {
					b.Fatal("the batches share no key: one group, in one round trip")
				}
				c.release(m.held)
			}
		})
	}
}
