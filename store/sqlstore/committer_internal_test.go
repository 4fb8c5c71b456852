package sqlstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

func testRequest(ctx context.Context, keys ...string) *request {
	return testRequestIn(ctx, nil, keys...)
}

// testRequestIn is testRequest in memory from mems.
func testRequestIn(ctx context.Context, mems *requestMems, keys ...string) *request {
	b := &store.Batch{}
	for _, k := range keys {
		b.Ops = append(b.Ops, store.Put([]byte(k), nil))
	}
	return newRequest(ctx, b, mems)
}

// collide is a key hash under which every two keys collide.
func collide([]byte) uint64 { return 42 }

func TestCommitterTake_SkipsBusyKeysAndKeepsEachKeysArrivalOrder(t *testing.T) {
	t.Parallel()
	c := newCommitter(Config{MaxGroups: 2, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
	ctx := context.Background()
	first := testRequest(ctx, "a")
	c.queue = []*request{first}
	inFlight := &leaderMem{}
	group, _ := c.take(inFlight)
	require.Equal(t, []*request{first}, group, "a lone batch commits at once")

	// While the group holding "a" is in flight: a batch on "a" and "b" waits,
	// so does a later one on "b" (it must not overtake the first), and one on
	// "c" goes.
	ab, b, cc := testRequest(ctx, "a", "b"), testRequest(ctx, "b"), testRequest(ctx, "c")
	c.queue = []*request{ab, b, cc}
	second := &leaderMem{}
	group, _ = c.take(second)
	require.Equal(t, []*request{cc}, group)
	require.Equal(t, []*request{ab, b}, c.queue)
	require.True(t, ab.waited)
	require.True(t, b.waited)

	// Once "a" and "c" are released, both waiting batches join one group, in
	// arrival order.
	c.release(inFlight.held)
	c.release(second.held)
	group, disjoint := c.take(&leaderMem{})
	require.Equal(t, []*request{ab, b}, group)
	require.False(t, disjoint, "both write b")
	require.Empty(t, c.queue)
}

func TestCommitterTake_BoundsGroupsAndDropsAbandonedRequests(t *testing.T) {
	t.Parallel()
	c := newCommitter(Config{MaxGroups: 1, MaxGroupBatches: 2, MaxGroupBytes: 1 << 20}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	gone := testRequest(ctx, "gone")
	cancel()
	live := context.Background()
	r1, r2, r3 := testRequest(live, "1"), testRequest(live, "2"), testRequest(live, "3")
	withdrawn := testRequest(live, "w")
	withdrawn.state.Store(stateAbandoned)
	c.queue = []*request{gone, withdrawn, r1, r2, r3}
	group, _ := c.take(&leaderMem{})
	require.Equal(t, []*request{r1, r2}, group, "at most MaxGroupBatches per group")
	require.Equal(t, stateAbandoned, gone.state.Load(), "a request whose context ended is dropped, never sent")
	require.Equal(t, []*request{r3}, c.queue)

	big := newRequest(live, &store.Batch{Ops: []store.Op{store.Put([]byte("big"), make([]byte, 100))}}, nil)
	small := testRequest(live, "small")
	c = newCommitter(Config{MaxGroups: 1, MaxGroupBatches: 10, MaxGroupBytes: 50}, nil)
	c.queue = []*request{big, small}
	group, _ = c.take(&leaderMem{})
	require.Equal(t, []*request{big}, group, "a batch over the byte bound commits alone")
	group, _ = c.take(&leaderMem{})
	require.Equal(t, []*request{small}, group)
}

// A batch that only conditions a key a group in flight writes waits for it,
// and so does a batch that writes a key a group in flight only conditions.
func TestCommitterTake_AConditionedKeyIsHeldLikeAWrittenOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	condOn := func(k string) *request {
		return newRequest(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent([]byte(k))},
			Ops: []store.Op{store.Put([]byte("own-"+k), nil)}}, nil)
	}
	for _, tc := range []struct {
		name          string
		first, second *request
	}{
		{"conditions a key in flight", testRequest(ctx, "k"), condOn("k")},
		{"writes a key conditioned in flight", condOn("k"), testRequest(ctx, "k")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCommitter(Config{MaxGroups: 2, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
			c.queue = []*request{tc.first}
			inFlight := &leaderMem{}
			group, _ := c.take(inFlight)
			require.Equal(t, []*request{tc.first}, group)
			c.queue = []*request{tc.second}
			group, _ = c.take(&leaderMem{})
			require.Empty(t, group, "it shares a key with the group in flight")
			require.True(t, tc.second.waited)
			c.release(inFlight.held)
			group, _ = c.take(&leaderMem{})
			require.Equal(t, []*request{tc.second}, group)
		})
	}
}

// take answers a group disjoint only when no two of its batches share a
// key, and whenever they share none, but for a batch too large for
// newRequest to leave out the hash of a key it conditions and writes: then
// oneTrip tells, and takes the one round trip all the same.
func TestCommitterTake_DisjointOnlyWhenNoTwoBatchesShareAKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	selfCond := func(n int) *request {
		b := &store.Batch{}
		for i := range n {
			k := []byte("s" + strconv.Itoa(i))
			b.Conditions = append(b.Conditions, store.IfAbsent(k))
			b.Ops = append(b.Ops, store.Put(k, nil))
		}
		return newRequest(ctx, b, nil)
	}
	for _, tc := range []struct {
		name     string
		reqs     func() []*request
		disjoint bool
	}{
		{"one batch", func() []*request { return []*request{testRequest(ctx, "a", "b")} }, true},
		{"a batch writing the key it conditions", func() []*request { return []*request{selfCond(1), testRequest(ctx, "t")} }, true},
		{"a large batch writing the keys it conditions", func() []*request { return []*request{selfCond(17), testRequest(ctx, "t")} }, false},
		{"no key shared", func() []*request {
			return []*request{testRequest(ctx, "a"), testRequest(ctx, "b", "c"), testRequest(ctx, "d")}
		}, true},
		{"first and last share one", func() []*request {
			return []*request{testRequest(ctx, "a", "x"), testRequest(ctx, "b"), testRequest(ctx, "x")}
		}, false},
	} {
		for _, groups := range []int{1, 2} {
			t.Run(fmt.Sprint(tc.name, "/groups=", groups), func(t *testing.T) {
				c := newCommitter(Config{MaxGroups: groups, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
				reqs := tc.reqs()
				c.queue = slices.Clone(reqs)
				taken, disjoint := c.take(&leaderMem{})
				require.Equal(t, reqs, taken)
				require.Equal(t, tc.disjoint, disjoint)
				shared := tc.name == "first and last share one"
				g := newGroup(taken)
				require.Equal(t, !shared, pgStore.oneTrip(g, &tripScratch{seen: map[uint64]int{}}))
			})
		}
	}
}

// Distinct keys whose hashes collide are kept apart as a shared key is: a
// batch waits for the group in flight that holds the hash, and a group with
// two such batches is not disjoint (it takes the two round trips). Nothing
// else changes: the batches commit once the group in flight is done.
func TestCommitterTake_KeysWhoseHashesCollideAreKeptApartLikeASharedKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mems := &requestMems{hash: collide}
	c := newCommitter(Config{MaxGroups: 2, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
	a, b, cc := testRequestIn(ctx, mems, "a"), testRequestIn(ctx, mems, "b"), testRequestIn(ctx, mems, "c")
	c.queue = []*request{a}
	inFlight := &leaderMem{}
	taken, disjoint := c.take(inFlight)
	require.Equal(t, []*request{a}, taken)
	require.True(t, disjoint)
	c.queue = []*request{b, cc}
	taken, _ = c.take(&leaderMem{})
	require.Empty(t, taken, "b's and c's hashes are a's")
	require.True(t, b.waited)
	c.release(inFlight.held)
	taken, disjoint = c.take(&leaderMem{})
	require.Equal(t, []*request{b, cc}, taken)
	require.False(t, disjoint, "b and c share a hash")
	require.False(t, pgStore.oneTrip(&group{reqs: taken, live: []int{0, 1}}, &tripScratch{seen: map[uint64]int{}}),
		"batches sharing a hash are decided batch by batch")
}

// A leader releases the keys of its group after finishing every request of
// it, when their memory may be recycled: it releases what it copied when it
// took them, never what the memory holds by then.
func TestCommitterRelease_ReadsNoneOfTheFinishedRequestsMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mems := &requestMems{poison: true}
	c := newCommitter(Config{MaxGroups: 2, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
	r := testRequestIn(ctx, mems, "a", "b")
	c.queue = []*request{r}
	m := &leaderMem{}
	group, _ := c.take(m)
	require.Equal(t, []*request{r}, group)
	r.finish(outcome{})
	r.letGo() // the caller's: the memory is given back, poisoned
	require.Equal(t, []uint64{poisonHash, poisonHash}, r.keys, "read here only to prove the poisoning")
	c.release(m.held)
	require.Empty(t, c.busy, "every key of the group is free again")
	again := testRequestIn(ctx, mems, "a", "b")
	c.queue = []*request{again}
	group, _ = c.take(&leaderMem{})
	require.Equal(t, []*request{again}, group)
}

// Groups in flight at once never share a key, however callers submit, give
// up while queued or while their group commits, and recycle their
// requests' memory (poisoned): checked on the keys' bytes by every group as
// it commits, with the store's hash and with one under which every key
// collides, with one group in flight at most or several. Every request gets
// an answer or gives up, and in the end no key stays busy. Run it with
// -race: take must never read the keys of a request whose memory its caller
// gave back.
func TestCommitter_GroupsInFlightNeverShareAKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		hash   func([]byte) uint64
		groups int
	}{{"maphash", nil, 3}, {"colliding", collide, 3}, {"one group", nil, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mems := &requestMems{poison: true, hash: tc.hash}
			var (
				mu       sync.Mutex
				inFlight = map[string]bool{}
				groups   atomic.Int64
			)
			commit := func(group []*request, disjoint bool) {
				keys, owner := map[string]bool{}, map[string]int{}
				for i, r := range group {
					for _, op := range r.ops {
						keys[string(op.Key)] = true
						if j, ok := owner[string(op.Key)]; ok && j != i && disjoint {
							t.Errorf("a group said disjoint shares %q", op.Key)
						}
						owner[string(op.Key)] = i
					}
					for _, c := range r.conds {
						keys[string(c.Key)] = true
					}
				}
				mu.Lock()
				for k := range keys {
					if inFlight[k] {
						t.Errorf("two groups in flight share %q", k)
					}
					inFlight[k] = true
				}
				mu.Unlock()
				groups.Add(1)
				time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				mu.Lock()
				for k := range keys {
					delete(inFlight, k)
				}
				mu.Unlock()
				for _, r := range group {
					r.finish(outcome{res: &store.CommitResult{Versions: make([]uint64, len(r.ops))}})
				}
			}
			c := newCommitter(Config{MaxGroups: tc.groups, MaxGroupBatches: 4, MaxGroupBytes: 1 << 20}, commit)
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(w), 3))
					for range 300 {
						b := &store.Batch{Conditions: []store.Condition{store.IfAbsent(store.Key("c", strconv.Itoa(rng.IntN(6))))}}
						for range 1 + rng.IntN(3) {
							b.Ops = append(b.Ops, store.Put(store.Key("k", strconv.Itoa(rng.IntN(12))), []byte("v")))
						}
						b.Ops = slices.CompactFunc(b.Ops, func(x, y store.Op) bool { return string(x.Key) == string(y.Key) })
						ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(400))*time.Microsecond)
						r := newRequest(ctx, b, mems)
						if c.submit(r) {
							commit([]*request{r}, true)
							c.finishSolo(r.keys)
						} else {
							_, _ = r.wait(ctx, c)
						}
						r.letGo()
						cancel()
					}
				})
			}
			wg.Wait()
			c.wait()
			require.Positive(t, groups.Load())
			require.Empty(t, c.queue)
			require.Empty(t, c.busy, "every group released its keys")
		})
	}
}

func TestNewRequest_CopiesTheBatch(t *testing.T) {
	t.Parallel()
	key, value := []byte("k"), []byte("v")
	r := newRequest(context.Background(), &store.Batch{
		Conditions: []store.Condition{store.IfAbsent(key)}, Ops: []store.Op{store.Put(key, value), store.Put([]byte("empty"), nil)}}, nil)
	key[0], value[0] = 'x', 'x'
	require.Equal(t, "k", string(r.conds[0].Key))
	require.Equal(t, "k", string(r.ops[0].Key))
	require.Equal(t, "v", string(r.ops[0].Value))
	require.NotNil(t, r.ops[1].Value, "an empty value stays non-nil (nil would be NULL)")
	require.Equal(t, 2, r.nPuts)
}

// A request's key hashes are those of every key its batch writes, then of
// every key it conditions and does not write, whatever their lengths up to
// store.MaxKeyBytes.
func TestNewRequest_HashesEveryKeyItWritesThenConditions(t *testing.T) {
	t.Parallel()
	b := &store.Batch{}
	var want []uint64
	for i, n := range []int{1, 2, 255, 256, 257, 1000, store.MaxKeyBytes} {
		k := make([]byte, n)
		for j := range k {
			k[j] = byte('a' + (i+j)%26)
		}
		b.Ops = append(b.Ops, store.Put(k, nil))
		want = append(want, hashKey(k))
	}
	b.Ops = append(b.Ops, store.Delete([]byte("gone")))
	want = append(want, hashKey([]byte("gone")))
	for _, k := range []string{"gone", "other"} { // one written, one only conditioned
		b.Conditions = append(b.Conditions, store.IfPresent([]byte(k)))
	}
	want = append(want, hashKey([]byte("other")))
	r := newRequest(context.Background(), b, nil)
	require.Equal(t, want, r.keys)
	require.Equal(t, want, newRequest(context.Background(), b, &requestMems{}).keys)
	require.NotEqual(t, hashKey([]byte("gone")), hashKey([]byte("other")))
}

// A batch too large to compare its condition keys with the keys it writes
// (past maxCompares) lists the hash of a key it conditions and writes twice,
// and every other once.
func TestNewRequest_LargeBatchHashesAConditionedWrittenKeyTwice(t *testing.T) {
	t.Parallel()
	b := &store.Batch{}
	var want []uint64
	for i := range 20 {
		k := []byte("w" + strconv.Itoa(i))
		b.Ops = append(b.Ops, store.Put(k, nil))
		want = append(want, hashKey(k))
	}
	for i := range 15 {
		k := []byte("w" + strconv.Itoa(i))
		if i%2 == 1 {
			k = []byte("c" + strconv.Itoa(i))
		}
		b.Conditions = append(b.Conditions, store.IfPresent(k))
		want = append(want, hashKey(k))
	}
	require.Greater(t, len(b.Ops)*len(b.Conditions), maxCompares)
	require.Equal(t, want, newRequest(context.Background(), b, nil).keys)
}

// distinct answers false whenever a key hash repeats among a group's
// requests, and true whenever none does (hashes differing only in their
// lowest bit aside, which it may take for one), however many hashes and
// whatever the groups the same leader's table held before.
func TestLeaderMemDistinct_FalseExactlyWhenAHashRepeats(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 11))
	m := &leaderMem{}
	for round := range 3000 {
		group := make([]*request, 1+rng.IntN(20))
		var all []uint64
		for i := range group {
			keys := make(keyHashes, rng.IntN(30))
			for j := range keys {
				keys[j] = rng.Uint64()
				switch {
				case len(all) > 0 && rng.IntN(400) == 0: // a hash of an earlier request
					keys[j] = all[rng.IntN(len(all))]
				case len(all) > 0 && rng.IntN(400) == 0: // its twin but for the lowest bit
					keys[j] = all[rng.IntN(len(all))] ^ 1
				case rng.IntN(10) == 0: // few distinct low bits: long probes
					keys[j] &^= 0xffff
				}
			}
			all = append(all, keys...)
			group[i] = &request{keys: keys}
		}
		repeats, twins := false, false
		seen, seenSlot := map[uint64]bool{}, map[uint64]bool{}
		for _, h := range all {
			repeats = repeats || seen[h]
			twins = twins || seenSlot[h|1]
			seen[h], seenSlot[h|1] = true, true
		}
		got := m.distinct(group)
		if repeats {
			require.False(t, got, "round %d: a hash repeats", round)
		} else if !twins {
			require.True(t, got, "round %d: every hash differs", round)
		}
	}
}
