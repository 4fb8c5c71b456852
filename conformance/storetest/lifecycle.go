package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

var lifecycleRules = []rule{
	{"TestDurability_CommittedBatchesSurviveReopen", testDurabilitySurvivesReopen},
	{"TestDurability_VersionsNeverRepeatAcrossReopen", testDurabilityVersionsAcrossReopen},
	{"TestClose_LaterCallsFailWithErrClosed", testCloseLaterCallsFail},
}

// reopen closes inst.Store and opens the same storage again, skipping the
// rule for backends that are not durable.
func reopen(t *testing.T, inst *Instance) store.Store {
	t.Helper()
	caps := inst.Store.Capabilities()
	if !caps.Durable {
		t.Skipf("backend %q is not durable: nothing survives a restart by design", caps.Backend)
	}
	require.NotNil(t, inst.Reopen, "a durable backend's harness must provide Reopen")
	require.NoError(t, inst.Store.Close())
	s := inst.Reopen(t)
	inst.Store = s
	return s
}

func testDurabilitySurvivesReopen(t *testing.T, h Harness) {
	inst := h.Open(t)
	s := inst.Store
	kept := put(t, s, store.Key("wf", "1"), []byte("kept"))
	put(t, s, store.Key("wf", "2"), []byte("deleted"))
	del(t, s, store.Key("wf", "2"))
	res, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{
		store.Put(store.Key("wf", "3"), []byte("a")),
		store.Put(store.Key("wf", "4"), []byte("b")),
	}})
	require.NoError(t, err)

	s = reopen(t, inst)
	require.Equal(t, store.Item{Key: store.Key("wf", "1"), Value: []byte("kept"), Version: kept}, get(t, s, store.Key("wf", "1")))
	requireAbsent(t, s, store.Key("wf", "2"))
	require.Equal(t, res.Versions[0], get(t, s, store.Key("wf", "3")).Version)
	require.Equal(t, res.Versions[1], get(t, s, store.Key("wf", "4")).Version)
	require.Len(t, scanAll(t, s, store.ScanParams{Prefix: store.KeyPrefix("wf")}), 3)
}

func testDurabilityVersionsAcrossReopen(t *testing.T, h Harness) {
	inst := h.Open(t)
	key := []byte("aba")
	seen := map[uint64]bool{}
	for range 3 {
		v := put(t, inst.Store, key, []byte("x"))
		require.False(t, seen[v], "version %d reused across a restart", v)
		seen[v] = true
		del(t, inst.Store, key)
		reopen(t, inst)
	}
}

func testCloseLaterCallsFail(t *testing.T, h Harness) {
	s := h.Open(t).Store
	put(t, s, []byte("k"), []byte("v"))
	require.NoError(t, s.Close())
	_, err := s.Get(ctx(t), []byte("k"))
	require.ErrorIs(t, err, store.ErrClosed)
	_, err = s.Scan(ctx(t), &store.ScanParams{})
	require.ErrorIs(t, err, store.ErrClosed)
	_, err = s.Commit(ctx(t), &store.Batch{Ops: []store.Op{store.Delete([]byte("k"))}})
	require.ErrorIs(t, err, store.ErrClosed)
	require.NoError(t, s.Close(), "Close is idempotent")
}
