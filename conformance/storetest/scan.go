package storetest

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

var scanRules = []rule{
	{"TestScan_AscendingByteOrder", testScanAscendingByteOrder},
	{"TestScan_PrefixSelectsExactlyItsKeys", testScanPrefixSelectsExactly},
	{"TestScan_RangeIsHalfOpen", testScanRangeIsHalfOpen},
	{"TestScan_LimitAndResumeVisitEveryKeyOnce", testScanLimitAndResume},
	{"TestScan_NumericComponentsComeBackInNumericOrder", testScanNumericOrder},
	{"TestScan_InvalidParamsRejected", testScanInvalidParams},
}

// commitAll writes items in batches of at most 100 ops.
func commitAll(t testing.TB, s store.Store, keys [][]byte, value func(i int) []byte) {
	t.Helper()
	for start := 0; start < len(keys); start += 100 {
		end := min(start+100, len(keys))
		ops := make([]store.Op, 0, end-start)
		for i := start; i < end; i++ {
			ops = append(ops, store.Put(keys[i], value(i)))
		}
		_, err := s.Commit(ctx(t), &store.Batch{Ops: ops})
		require.NoError(t, err)
	}
}

func testScanAscendingByteOrder(t *testing.T, h Harness) {
	s := h.Open(t).Store
	rng := rand.New(rand.NewPCG(1, 2))
	set := map[string]bool{}
	for len(set) < 300 {
		k := make([]byte, 1+rng.IntN(12))
		for i := range k {
			k[i] = []byte{0x00, 0x01, ':', '%', 'a', 'b', 0x7f, 0x80, 0xfe, 0xff}[rng.IntN(10)]
		}
		set[string(k)] = true
	}
	keys := make([][]byte, 0, len(set))
	for k := range set {
		keys = append(keys, []byte(k))
	}
	commitAll(t, s, keys, func(i int) []byte { return keys[i] })
	want := make([]string, 0, len(keys))
	for k := range set {
		want = append(want, k)
	}
	slices.Sort(want)
	got := scanAll(t, s, store.ScanParams{Limit: 7})
	require.Equal(t, want, keysOf(got))
	for _, it := range got {
		require.Equal(t, it.Key, it.Value, "value travels with its key")
	}
}

func testScanPrefixSelectsExactly(t *testing.T, h Harness) {
	s := h.Open(t).Store
	all := []string{"a", "a\x00", "a:1", "a\xff", "a\xff\xff", "ab", "`", "b", "\xff", "\xff\xff", "\xff\x00"}
	keys := make([][]byte, len(all))
	for i, k := range all {
		keys[i] = []byte(k)
	}
	commitAll(t, s, keys, func(int) []byte { return []byte("v") })
	cases := []struct {
		prefix string
		want   []string
	}{
		{"a", []string{"a", "a\x00", "a:1", "ab", "a\xff", "a\xff\xff"}},
		{"a\xff", []string{"a\xff", "a\xff\xff"}},
		{"\xff", []string{"\xff", "\xff\x00", "\xff\xff"}},
		{"c", nil},
	}
	for _, tc := range cases {
		got := keysOf(scanAll(t, s, store.ScanParams{Prefix: []byte(tc.prefix), Limit: 2}))
		want := slices.Clone(tc.want)
		slices.Sort(want)
		require.Equal(t, want, nilIfEmpty(got), "prefix %q", tc.prefix)
	}
	require.Len(t, scanAll(t, s, store.ScanParams{Prefix: []byte{}}), len(all), "the empty prefix selects every key")
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func testScanRangeIsHalfOpen(t *testing.T, h Harness) {
	s := h.Open(t).Store
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("b\x00"), []byte("c"), []byte("d")}
	commitAll(t, s, keys, func(int) []byte { return nil })
	require.Equal(t, []string{"b", "b\x00"}, keysOf(scanAll(t, s, store.ScanParams{Start: []byte("b"), End: []byte("c")})))
	require.Equal(t, []string{"a", "b", "b\x00"}, keysOf(scanAll(t, s, store.ScanParams{End: []byte("c")})))
	require.Equal(t, []string{"c", "d"}, keysOf(scanAll(t, s, store.ScanParams{Start: []byte("c")})))
	require.Empty(t, scanAll(t, s, store.ScanParams{Start: []byte("b"), End: []byte("b")}))
}

func testScanLimitAndResume(t *testing.T, h Harness) {
	s := h.Open(t).Store
	keys := make([][]byte, 25)
	for i := range keys {
		keys[i] = store.Key("page", store.Uint64(uint64(i)))
	}
	commitAll(t, s, keys, func(int) []byte { return nil })
	prefix := store.KeyPrefix("page")
	var sizes []int
	p := store.ScanParams{Prefix: prefix, Limit: 10}
	var seen []string
	for {
		res, err := s.Scan(ctx(t), &p)
		require.NoError(t, err)
		sizes = append(sizes, len(res.Items))
		seen = append(seen, keysOf(res.Items)...)
		if res.Next == nil {
			break
		}
		require.Equal(t, res.Items[len(res.Items)-1].Key, res.Next, "Next is the last key returned")
		p.After = res.Next
	}
	require.Equal(t, []int{10, 10, 5}, sizes)
	require.Len(t, seen, 25)
	require.True(t, slices.IsSorted(seen))
	// An exact multiple of the limit ends without an empty extra page.
	res, err := s.Scan(ctx(t), &store.ScanParams{Prefix: prefix, Limit: 25})
	require.NoError(t, err)
	require.Len(t, res.Items, 25)
	require.Nil(t, res.Next)
	// Limit 0 means the default page size.
	res, err = s.Scan(ctx(t), &store.ScanParams{Prefix: prefix})
	require.NoError(t, err)
	require.Len(t, res.Items, 25)
	// Resuming survives writes between pages: new keys after the cursor appear.
	res, err = s.Scan(ctx(t), &store.ScanParams{Prefix: prefix, Limit: 5})
	require.NoError(t, err)
	put(t, s, store.Key("page", store.Uint64(100)), nil)
	rest := scanAll(t, s, store.ScanParams{Prefix: prefix, After: res.Next})
	require.Len(t, rest, 21)
}

func testScanNumericOrder(t *testing.T, h Harness) {
	s := h.Open(t).Store
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const n = 200
	perm := rng.Perm(n)
	keys := make([][]byte, n)
	for i, p := range perm {
		// op:{queue}:{scheduled}:{id} with scheduled times out of insertion order
		// and ids that would sort wrongly as decimal strings.
		at := base.Add(time.Duration(p*p) * time.Millisecond)
		keys[i] = store.Key("op", "q:1", store.Time(at), store.Uint64(uint64(p)))
	}
	commitAll(t, s, keys, func(int) []byte { return nil })
	got := scanAll(t, s, store.ScanParams{Prefix: store.KeyPrefix("op", "q:1"), Limit: 33})
	require.Len(t, got, n)
	for i, it := range got {
		parts, err := store.SplitKey(it.Key)
		require.NoError(t, err)
		require.Equal(t, []string{"op", "q:1"}, parts[:2])
		at, err := store.ParseTime(parts[2])
		require.NoError(t, err)
		require.Equal(t, base.Add(time.Duration(i*i)*time.Millisecond), at, "item %d out of chronological order", i)
		seq, err := store.ParseUint64(parts[3])
		require.NoError(t, err)
		require.EqualValues(t, i, seq)
	}
	require.True(t, slices.IsSortedFunc(got, func(a, b store.Item) int { return bytes.Compare(a.Key, b.Key) }))
}

func testScanInvalidParams(t *testing.T, h Harness) {
	s := h.Open(t).Store
	for _, p := range []store.ScanParams{
		{Prefix: []byte("a"), End: []byte("b")},
		{Limit: store.MaxScanLimit + 1},
		{Limit: -1},
		{Start: []byte("z"), End: []byte("a")},
	} {
		_, err := s.Scan(ctx(t), &p)
		require.ErrorIs(t, err, store.ErrInvalidArgument, "%+v", p)
	}
}
