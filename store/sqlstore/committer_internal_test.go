package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

func testRequest(ctx context.Context, keys ...string) *request {
	b := &store.Batch{}
	for _, k := range keys {
		b.Ops = append(b.Ops, store.Put([]byte(k), nil))
	}
	return newRequest(ctx, b, nil)
}

func keysOf(group []*request) [][]string {
	var out [][]string
	for _, r := range group {
		out = append(out, slices.Collect(r.keys.all))
	}
	return out
}

func TestCommitterTake_SkipsBusyKeysAndKeepsEachKeysArrivalOrder(t *testing.T) {
	t.Parallel()
	c := newCommitter(Config{MaxGroups: 2, MaxGroupBatches: 10, MaxGroupBytes: 1 << 20}, nil)
	ctx := context.Background()
	first := testRequest(ctx, "a")
	c.queue = []*request{first}
	require.Equal(t, [][]string{{"a"}}, keysOf(c.take()), "a lone batch commits at once")

	// While the group holding "a" is in flight: a batch on "a" and "b" waits,
	// so does a later one on "b" (it must not overtake the first), and one on
	// "c" goes.
	ab, b, cc := testRequest(ctx, "a", "b"), testRequest(ctx, "b"), testRequest(ctx, "c")
	c.queue = []*request{ab, b, cc}
	require.Equal(t, [][]string{{"c"}}, keysOf(c.take()))
	require.Equal(t, []*request{ab, b}, c.queue)
	require.True(t, ab.waited)
	require.True(t, b.waited)

	// Once "a" and "c" are released, both waiting batches join one group, in
	// arrival order.
	delete(c.busy, "a")
	delete(c.busy, "c")
	require.Equal(t, [][]string{{"a", "b"}, {"b"}}, keysOf(c.take()))
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
	require.Equal(t, [][]string{{"1"}, {"2"}}, keysOf(c.take()), "at most MaxGroupBatches per group")
	require.Equal(t, stateAbandoned, gone.state.Load(), "a request whose context ended is dropped, never sent")
	require.Equal(t, []*request{r3}, c.queue)

	big := newRequest(live, &store.Batch{Ops: []store.Op{store.Put([]byte("big"), make([]byte, 100))}}, nil)
	small := testRequest(live, "small")
	c = newCommitter(Config{MaxGroups: 1, MaxGroupBatches: 10, MaxGroupBytes: 50}, nil)
	c.queue = []*request{big, small}
	require.Equal(t, [][]string{{"big"}}, keysOf(c.take()), "a batch over the byte bound commits alone")
	require.Equal(t, [][]string{{"small"}}, keysOf(c.take()))
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
	require.Equal(t, []string{"k", "empty"}, slices.Collect(r.keys.all))
	require.Equal(t, 2, r.nPuts)
}

// A request's keys are every key its batch writes or conditions, each once,
// whether indexKeys compares them or, for a large batch, builds a set.
func TestNewRequest_IndexesEveryKeyOnce(t *testing.T) {
	t.Parallel()
	k := func(i int) []byte { return store.Key("k", strconv.Itoa(i)) }
	for _, tc := range []struct {
		name       string
		ops, conds int // ops on keys 0..ops-1, conditions on keys ops/2..ops/2+conds-1
	}{
		{"conditions only", 0, 3},
		{"ops only", 4, 0},
		{"small, overlapping", 6, 6},
		{"large, overlapping", 40, 40},
		{"large, disjoint", 30, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &store.Batch{}
			want := map[string]bool{}
			for i := range tc.ops {
				b.Ops = append(b.Ops, store.Put(k(i), []byte("v")))
				want[string(k(i))] = true
			}
			for i := range tc.conds {
				key := k(tc.ops/2 + i)
				if tc.name == "large, disjoint" {
					key = k(1000 + i)
				}
				b.Conditions = append(b.Conditions, store.IfAbsent(key))
				want[string(key)] = true
			}
			r := newRequest(context.Background(), b, nil)
			got := map[string]bool{}
			for key := range r.keys.all {
				require.False(t, got[key], "key %q indexed twice", key)
				got[key] = true
			}
			require.Equal(t, want, got)
		})
	}
}

// A keyList yields each key it was built of, whatever its length up to
// store.MaxKeyBytes.
func TestKeyList_YieldsEveryKeyWhateverItsLength(t *testing.T) {
	t.Parallel()
	b := &store.Batch{}
	var want []string
	for i, n := range []int{1, 2, 255, 256, 257, 1000, store.MaxKeyBytes} {
		k := make([]byte, n)
		for j := range k {
			k[j] = byte('a' + (i+j)%26)
		}
		b.Ops = append(b.Ops, store.Put(k, nil))
		want = append(want, string(k))
	}
	r := newRequest(context.Background(), b, nil)
	require.Equal(t, want, slices.Collect(r.keys.all))
}
