package store_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

func TestKey_EscapesOnlySeparatorAndEscapeByte(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		components []string
		want       string
	}{
		{"checkpoint key", []string{"wf", "run-1", "ckpt"}, "wf:run-1:ckpt"},
		{"signal id with separator", []string{"sig", "wf1", "approve", "a:b"}, "sig:wf1:approve:a%3Ab"},
		{"escape byte itself", []string{"sig", "wf1", "n", "100%"}, "sig:wf1:n:100%25"},
		{"escaped-looking input is escaped again", []string{"a%3Ab"}, "a%253Ab"},
		{"empty middle component", []string{"wf", "", "x"}, "wf::x"},
		{"single empty component", []string{""}, ""},
		{"non-ASCII and control bytes kept raw", []string{"é", "\x00\xff"}, "é:\x00\xff"},
		{"lower-case hex stays raw", []string{"%3a"}, "%253a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, string(store.Key(tc.components...)))
		})
	}
}

func TestSplitKey_InvertsKey(t *testing.T) {
	t.Parallel()
	tuples := [][]string{
		{"wf", "run-1", "ckpt"},
		{"sig", "w:f", "na%me", "id::%%"},
		{"wf", "", ""},
		{"\x00", "\xff\xfe", "%25", "%3A"},
	}
	for _, tuple := range tuples {
		got, err := store.SplitKey(store.Key(tuple...))
		require.NoError(t, err)
		require.Equal(t, tuple, got)
	}
}

func TestSplitKey_RejectsNonCanonicalEscapes(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"a%3a", "a%2", "a%", "%41", "wf:%zz", "x%25%"} {
		_, err := store.SplitKey([]byte(key))
		require.ErrorIs(t, err, store.ErrInvalidArgument, "key %q", key)
	}
	_, err := store.SplitKey(nil)
	require.ErrorIs(t, err, store.ErrInvalidArgument)
}

func TestKey_ReservedCharactersNeverCollide(t *testing.T) {
	t.Parallel()
	// Tuples that a naive join would map to the same bytes.
	tuples := [][]string{
		{"sig", "wf", "a:b", "c"},
		{"sig", "wf", "a", "b:c"},
		{"sig", "wf", "a", "b", "c"},
		{"sig", "wf", "a%3Ab", "c"},
		{"sig", "wf", "a%253Ab", "c"},
		{"sig", "wf:a", "b", "c"},
		{"sig", "wf", "a:b:c"},
	}
	seen := map[string][]string{}
	for _, tuple := range tuples {
		k := string(store.Key(tuple...))
		prev, dup := seen[k]
		require.False(t, dup, "%q and %q share key %q", prev, tuple, k)
		seen[k] = tuple
	}
}

func TestKeyPrefix_MatchesChildrenNotSiblings(t *testing.T) {
	t.Parallel()
	prefix := store.KeyPrefix("wf", "abc")
	require.True(t, bytes.HasPrefix(store.Key("wf", "abc", "ckpt"), prefix))
	require.False(t, bytes.HasPrefix(store.Key("wf", "abcd", "ckpt"), prefix))
	require.False(t, bytes.HasPrefix(store.Key("wf", "abc:d"), prefix), "escaped separator must not look like a child")
}

func TestUint64_ByteOrderIsNumericOrder(t *testing.T) {
	t.Parallel()
	nums := []uint64{0, 1, 9, 10, 15, 16, 255, 256, 1 << 32, math.MaxUint64 - 1, math.MaxUint64}
	for i := 1; i < len(nums); i++ {
		a, b := store.Uint64(nums[i-1]), store.Uint64(nums[i])
		require.Less(t, a, b)
		got, err := store.ParseUint64(b)
		require.NoError(t, err)
		require.Equal(t, nums[i], got)
	}
	for _, bad := range []string{"", "0", "000000000000000G", "000000000000000A", "00000000000000000"} {
		_, err := store.ParseUint64(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestInt64_ByteOrderIsNumericOrderAcrossSign(t *testing.T) {
	t.Parallel()
	nums := []int64{math.MinInt64, -1 << 40, -2, -1, 0, 1, 2, 1 << 40, math.MaxInt64}
	for i := 1; i < len(nums); i++ {
		require.Less(t, store.Int64(nums[i-1]), store.Int64(nums[i]))
		got, err := store.ParseInt64(store.Int64(nums[i]))
		require.NoError(t, err)
		require.Equal(t, nums[i], got)
	}
}

func TestTime_ByteOrderIsChronological(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	times := []time.Time{base.Add(-time.Hour * 24 * 365 * 60), base.Add(-time.Nanosecond), base, base.Add(time.Nanosecond), base.Add(time.Hour)}
	for i := 1; i < len(times); i++ {
		require.Less(t, store.Time(times[i-1]), store.Time(times[i]))
	}
	got, err := store.ParseTime(store.Time(base))
	require.NoError(t, err)
	require.True(t, got.Equal(base))
	require.Equal(t, time.UTC, got.Location())
}

func FuzzKeyCodec(f *testing.F) {
	f.Add("wf", "a:b", "c", uint64(7))
	f.Add("%", "%3A", ":", uint64(0))
	f.Add("", "", "", uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, a, b, c string, n uint64) {
		tuple := []string{a, b, c, store.Uint64(n)}
		key := store.Key(tuple...)
		got, err := store.SplitKey(key)
		if len(key) == 0 {
			return
		}
		if err != nil {
			t.Fatalf("SplitKey(%q): %v", key, err)
		}
		if !slices.Equal(got, tuple) {
			t.Fatalf("round trip: %q → %q → %q", tuple, key, got)
		}
		// Injectivity: a different tuple gives a different key.
		other := []string{a + ":", b, c, store.Uint64(n)}
		if bytes.Equal(store.Key(other...), key) {
			t.Fatalf("collision between %q and %q", tuple, other)
		}
		// Decoding arbitrary bytes either fails or re-encodes to the same key.
		raw := []byte(a + b)
		if parts, err := store.SplitKey(raw); err == nil {
			if re := store.Key(parts...); !bytes.Equal(re, raw) {
				t.Fatalf("non-canonical decode: %q → %q → %q", raw, parts, re)
			}
		} else if !errors.Is(err, store.ErrInvalidArgument) {
			t.Fatalf("unexpected error class: %v", err)
		}
	})
}

func FuzzUint64Order(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, x, y uint64) {
		if (x < y) != (store.Uint64(x) < store.Uint64(y)) {
			t.Fatalf("order differs for %d and %d", x, y)
		}
		if (int64(x) < int64(y)) != (store.Int64(int64(x)) < store.Int64(int64(y))) {
			t.Fatalf("signed order differs for %d and %d", int64(x), int64(y))
		}
	})
}

func TestKey_IsBuiltInOneAllocationOfItsExactLength(t *testing.T) {
	for _, comps := range [][]string{{"wf"}, {"wf", "run", "ev", store.Uint64(7)}, {"a:b", "%", "", "::%%"}, {"", ""}} {
		k := store.Key(comps...)
		require.Equal(t, len(k), cap(k), "%q", comps)
		p := store.KeyPrefix(comps...)
		require.Equal(t, len(p), cap(p), "%q", comps)
		require.Equal(t, string(k)+string(store.Separator), string(p))
		require.InDelta(t, 1, testing.AllocsPerRun(20, func() { _ = store.Key(comps...) }), 0, "%q", comps)
	}
}

// The numeric components are persisted in keys: Uint64 is n's big-endian
// bytes in lower-case hex, Int64 the same with the sign bit flipped, Time
// the Int64 of its Unix nanoseconds — byte for byte as before they were
// built on the caller's stack.
func TestNumericComponents_KeepTheirPersistedEncoding(t *testing.T) {
	t.Parallel()
	be := func(n uint64) string {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], n)
		return hex.EncodeToString(b[:])
	}
	for _, n := range []uint64{0, 1, 0xf, 0x10, 0xdeadbeef, 1 << 63, math.MaxUint64, 0x0123456789abcdef} {
		require.Equal(t, be(n), store.Uint64(n))
		require.Equal(t, be(n^(1<<63)), store.Int64(int64(n)))
	}
	for _, at := range []time.Time{time.Unix(0, 0), time.Date(2026, 11, 28, 5, 30, 0, 123, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)} {
		require.Equal(t, store.Int64(at.UnixNano()), store.Time(at))
		require.Equal(t, be(uint64(at.UnixNano())^(1<<63)), store.Time(at))
	}
	require.Equal(t, "00000000000000ff", store.Uint64(255))
}

// A numeric component built into a key allocates nothing of its own: the
// key is the one allocation.
func TestNumericComponents_AllocateNothingInsideAKey(t *testing.T) {
	at := time.Date(2026, 11, 28, 5, 30, 0, 0, time.UTC)
	allocs := testing.AllocsPerRun(100, func() { _ = store.Key("t", store.Time(at), store.Uint64(7), store.Int64(-7)) })
	require.Equal(t, 1.0, allocs)
}
