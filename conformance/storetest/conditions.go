package storetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

var conditionRules = []rule{
	{"TestConditionalBatch_EachConditionKind", testConditionalBatchEachKind},
	{"TestConditionalBatch_AllOrNothingWhenAnyConditionFails", testConditionalBatchAllOrNothing},
	{"TestConditionalBatch_ChainsOnReturnedVersions", testConditionalBatchChains},
	{"TestConditionalBatch_ConditionsOnlyBatchWritesNothing", testConditionalBatchConditionsOnly},
	{"TestConditionalBatch_FailsFastWithoutCapability", testConditionalBatchFailsFast},
}

func testConditionalBatchEachKind(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireConditional(t, s)
	present := []byte("present")
	v := put(t, s, present, []byte("x"))
	missing := []byte("missing")
	cases := []struct {
		name  string
		cond  store.Condition
		holds bool
		found bool
	}{
		{"absent holds on missing key", store.IfAbsent(missing), true, false},
		{"absent fails on present key", store.IfAbsent(present), false, true},
		{"present holds on present key", store.IfPresent(present), true, true},
		{"present fails on missing key", store.IfPresent(missing), false, false},
		{"version holds on same version", store.IfVersion(present, v), true, true},
		{"version fails on other version", store.IfVersion(present, v+1000), false, true},
		{"version fails on missing key", store.IfVersion(missing, v), false, false},
	}
	for i, tc := range cases {
		out := store.Key("out", store.Uint64(uint64(i)))
		_, err := s.Commit(ctx(t), &store.Batch{Conditions: []store.Condition{tc.cond}, Ops: []store.Op{store.Put(out, []byte("w"))}})
		if tc.holds {
			require.NoError(t, err, tc.name)
			get(t, s, out)
			continue
		}
		var cf *store.ConditionFailedError
		require.True(t, errors.As(err, &cf), "%s: got %v", tc.name, err)
		require.Equal(t, tc.cond.Key, cf.Key, tc.name)
		require.Equal(t, tc.found, cf.Found, tc.name)
		if tc.found {
			require.Equal(t, v, cf.Version, "%s: the error carries the version found", tc.name)
		}
		requireAbsent(t, s, out)
	}
	require.Equal(t, v, get(t, s, present).Version, "conditions never write their key")
}

func testConditionalBatchAllOrNothing(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireConditional(t, s)
	a := put(t, s, []byte("a"), []byte("a0"))
	b := put(t, s, []byte("b"), []byte("b0"))
	_, err := s.Commit(ctx(t), &store.Batch{
		Conditions: []store.Condition{store.IfVersion([]byte("a"), a), store.IfVersion([]byte("b"), b+1000)},
		Ops:        []store.Op{store.Put([]byte("a"), []byte("a1")), store.Delete([]byte("b")), store.Put([]byte("c"), []byte("c1"))},
	})
	var cf *store.ConditionFailedError
	require.True(t, errors.As(err, &cf), "got %v", err)
	require.Equal(t, []byte("b"), cf.Key)
	require.Equal(t, b, cf.Version)
	require.Equal(t, store.Item{Key: []byte("a"), Value: []byte("a0"), Version: a}, get(t, s, []byte("a")))
	require.Equal(t, store.Item{Key: []byte("b"), Value: []byte("b0"), Version: b}, get(t, s, []byte("b")))
	requireAbsent(t, s, []byte("c"))
}

func testConditionalBatchChains(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireConditional(t, s)
	key := []byte("chain")
	cond := store.IfAbsent(key)
	for i := range 10 {
		res, err := s.Commit(ctx(t), &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(key, []byte{byte(i)})}})
		require.NoError(t, err, "step %d", i)
		cond = store.IfVersion(key, res.Versions[0])
	}
	require.Equal(t, []byte{9}, get(t, s, key).Value)
}

func testConditionalBatchConditionsOnly(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireConditional(t, s)
	v := put(t, s, []byte("k"), []byte("x"))
	res, err := s.Commit(ctx(t), &store.Batch{Conditions: []store.Condition{store.IfVersion([]byte("k"), v), store.IfAbsent([]byte("j"))}})
	require.NoError(t, err)
	require.Empty(t, res.Versions)
	require.Equal(t, v, get(t, s, []byte("k")).Version)
	requireAbsent(t, s, []byte("j"))
}

func testConditionalBatchFailsFast(t *testing.T, h Harness) {
	s := h.Open(t).Store
	caps := s.Capabilities()
	if caps.ConditionalBatch {
		t.Skipf("backend %q supports conditionalBatch: the fail-fast rule applies only to backends without it", caps.Backend)
	}
	_, err := s.Commit(ctx(t), &store.Batch{Conditions: []store.Condition{store.IfAbsent([]byte("k"))}, Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
	var ce *store.CapabilityError
	require.True(t, errors.As(err, &ce), "got %v", err)
	require.ErrorIs(t, err, store.ErrUnsupported)
	require.Equal(t, store.CapabilityConditionalBatch, ce.Capability)
	require.Equal(t, caps.Backend, ce.Backend)
	requireAbsent(t, s, []byte("k"))
	put(t, s, []byte("k"), []byte("unconditional batches still work"))
}
