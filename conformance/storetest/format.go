package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

var formatRules = []rule{
	{"TestKeyCodec_ReservedCharactersNeverCollideInStore", testKeyCodecNoCollisions},
	{"TestScan_UnknownPrefixesUntouchedByKnownOnes", testScanUnknownPrefixesUntouched},
	{"TestValue_UpToMaximumRoundTrips", testValueUpToMaximum},
	{"TestValue_BeyondMaximumIsRejectedWithoutWriting", testValueBeyondMaximum},
}

// collisionTuples would share keys under a naive join or a lossy escaping.
var collisionTuples = [][]string{
	{"sig", "wf", "approve", "a:b"},
	{"sig", "wf", "approve:a", "b"},
	{"sig", "wf", "approve", "a", "b"},
	{"sig", "wf", "approve", "a%3Ab"},
	{"sig", "wf", "approve", "a%253Ab"},
	{"sig", "wf", "approve", "a%"},
	{"sig", "wf", "approve", "a%25"},
	{"sig", "wf", "approve", "a"},
	{"sig", "wf", "approve", ""},
	{"sig", "wf", "approve", ":"},
	{"sig", "wf", "approve", "::"},
	{"sig", "wf:approve", "a"},
	{"sig", "wf", "approve", "\xff\x00"},
}

func testKeyCodecNoCollisions(t *testing.T, h Harness) {
	s := h.Open(t).Store
	keys := make([][]byte, len(collisionTuples))
	for i, tuple := range collisionTuples {
		keys[i] = store.Key(tuple...)
	}
	commitAll(t, s, keys, func(i int) []byte { return []byte{byte(i)} })
	for i, tuple := range collisionTuples {
		item := get(t, s, keys[i])
		require.Equal(t, []byte{byte(i)}, item.Value, "tuple %q was overwritten by another", tuple)
	}
	items := scanAll(t, s, store.ScanParams{Prefix: store.KeyPrefix("sig")})
	require.Len(t, items, len(collisionTuples))
	for _, it := range items {
		parts, err := store.SplitKey(it.Key)
		require.NoError(t, err)
		require.Equal(t, collisionTuples[it.Value[0]], parts, "stored key decodes to its own tuple")
	}
	// Children of ("sig","wf","approve") only: not "approve:a" nor "wf:approve".
	children := scanAll(t, s, store.ScanParams{Prefix: store.KeyPrefix("sig", "wf", "approve")})
	want := 0
	for _, tuple := range collisionTuples {
		if len(tuple) > 3 && tuple[1] == "wf" && tuple[2] == "approve" {
			want++
		}
	}
	require.Len(t, children, want)
}

// unknownRecords stand for prefixes written by a newer Weft (or someone
// else) that this version does not know.
var unknownRecords = map[string]string{
	"wfx:1":        "newer kind that shares the letters of wf",
	"wf":           "bare prefix word without separator",
	"tier0:act:1":  "additive Tier-0 record",
	"zz:\xff":      "binary tail",
	"sigx:wf:1":    "sibling of sig",
	"\x00internal": "low byte",
}

func testScanUnknownPrefixesUntouched(t *testing.T, h Harness) {
	s := h.Open(t).Store
	before := map[string]uint64{}
	for k, v := range unknownRecords {
		before[k] = put(t, s, []byte(k), []byte(v))
	}
	wf := store.KeyPrefix("wf")
	for i := range 5 {
		put(t, s, store.Key("wf", store.Uint64(uint64(i))), []byte("run"))
	}
	items := scanAll(t, s, store.ScanParams{Prefix: wf})
	require.Len(t, items, 5)
	for _, it := range items {
		require.True(t, bytes.HasPrefix(it.Key, wf), "scan of wf: returned %q", it.Key)
	}
	// Work on the known prefix: rewrite, delete, scan and delete what it saw.
	for _, it := range items {
		put(t, s, it.Key, []byte("rewritten"))
	}
	for _, it := range scanAll(t, s, store.ScanParams{Prefix: wf}) {
		del(t, s, it.Key)
	}
	require.Empty(t, scanAll(t, s, store.ScanParams{Prefix: wf}))
	for k, v := range unknownRecords {
		item := get(t, s, []byte(k))
		require.Equal(t, []byte(v), item.Value, "unknown record %q changed", k)
		require.Equal(t, before[k], item.Version, "unknown record %q rewritten", k)
	}
}

func testValueUpToMaximum(t *testing.T, h Harness) {
	s := h.Open(t).Store
	limit := s.Capabilities().MaxValueBytes
	value := make([]byte, limit)
	for i := range value {
		value[i] = byte(i*7 + i>>11)
	}
	key := []byte("largest")
	v := put(t, s, key, value)
	item := get(t, s, key)
	require.Equal(t, v, item.Version)
	require.True(t, bytes.Equal(value, item.Value), "a value of exactly MaxValueBytes (%d) round-trips", limit)
}

func testValueBeyondMaximum(t *testing.T, h Harness) {
	s := h.Open(t).Store
	limit := s.Capabilities().MaxValueBytes
	value := bytes.Repeat([]byte("P"), limit+1)
	copy(value, "PAYLOAD-SECRET")
	key := []byte("too-large")
	_, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{store.Put([]byte("neighbour"), nil), store.Put(key, value)}})
	var tooLarge *store.ValueTooLargeError
	require.True(t, errors.As(err, &tooLarge), "got %v", err)
	require.ErrorIs(t, err, store.ErrValueTooLarge)
	require.Equal(t, key, tooLarge.Key)
	require.Equal(t, limit+1, tooLarge.Size)
	require.Equal(t, limit, tooLarge.Limit)
	require.NotContains(t, err.Error(), "PAYLOAD", "errors never carry value bytes")
	requireAbsent(t, s, key)
	requireAbsent(t, s, []byte("neighbour"))
}
