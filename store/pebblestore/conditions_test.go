package pebblestore_test

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// commitOne commits b and answers its error.
func commitOne(t *testing.T, s store.Store, b *store.Batch) error {
	t.Helper()
	_, err := s.Commit(t.Context(), b)
	return err
}

func requireConditionFailed(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, store.ErrConditionFailed)
}

func deleteBatch(key []byte, conds ...store.Condition) *store.Batch {
	return &store.Batch{Conditions: conds, Ops: []store.Op{store.Delete(key)}}
}

// requireConditionsSeeStored checks every condition kind on a key that holds
// version (0: absent).
func requireConditionsSeeStored(t *testing.T, s store.Store, key []byte, version uint64) {
	t.Helper()
	probe := store.Key("probe", string(key))
	if version == 0 {
		require.NoError(t, commitOne(t, s, putBatch(probe, "v", store.IfAbsent(key))))
		requireConditionFailed(t, commitOne(t, s, putBatch(probe, "v", store.IfPresent(key))))
		requireConditionFailed(t, commitOne(t, s, putBatch(probe, "v", store.IfVersion(key, 1))))
		return
	}
	require.NoError(t, commitOne(t, s, putBatch(probe, "v", store.IfPresent(key))))
	require.NoError(t, commitOne(t, s, putBatch(probe, "v", store.IfVersion(key, version))))
	requireConditionFailed(t, commitOne(t, s, putBatch(probe, "v", store.IfVersion(key, version+1))))
	requireConditionFailed(t, commitOne(t, s, putBatch(probe, "v", store.IfAbsent(key))))
}

func TestConditions_OnKeysWrittenRecentlyAreDecidedWithoutReadingPebble(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	key := []byte("k")
	res, err := b.s.Commit(t.Context(), putBatch(key, "v"))
	require.NoError(t, err)
	before := pebblestore.StoredReads(b.s)
	requireConditionsSeeStored(t, b.s, key, res.Versions[0])
	res, err = b.s.Commit(t.Context(), putBatch(key, "w", store.IfVersion(key, res.Versions[0])))
	require.NoError(t, err)
	requireConditionsSeeStored(t, b.s, key, res.Versions[0])
	require.NoError(t, commitOne(t, b.s, deleteBatch(key, store.IfPresent(key))))
	requireConditionsSeeStored(t, b.s, key, 0)
	require.Equal(t, before, pebblestore.StoredReads(b.s), "the recent versions answer every condition on the key")
}

func TestConditions_AfterAFailedApplyReadPebbleAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	key := []byte("k")
	res, err := b.s.Commit(t.Context(), putBatch(key, "v"))
	require.NoError(t, err)
	g := hold(t, b.s)
	failed := startCommit(t.Context(), b.s, putBatch(key, "w", store.IfVersion(key, res.Versions[0])))
	require.Equal(t, 1, g.next(t))
	g.let(t, fmt.Errorf("injected: disk gone"))
	require.ErrorIs(t, await(t, failed).err, store.ErrOutcomeUnknown)

	before := pebblestore.StoredReads(b.s)
	ch := startCommit(t.Context(), b.s, putBatch([]byte("probe"), "v", store.IfVersion(key, res.Versions[0])))
	require.Equal(t, 1, g.next(t))
	g.let(t, nil)
	requireCommitted(t, ch)
	require.Equal(t, before+1, pebblestore.StoredReads(b.s), "after an apply of unknown outcome the store forgets what it wrote and reads Pebble")
}

func TestConditions_OnKeysPastTheRecentBoundReadPebbleAndStayCorrect(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	const n = 2*pebblestore.RecentCapacity + 10
	versions := make([]uint64, n)
	for lo := 0; lo < n; lo += 1000 {
		batch := &store.Batch{}
		for i := lo; i < min(lo+1000, n); i++ {
			batch.Ops = append(batch.Ops, store.Put(store.Key("k", fmt.Sprint(i)), []byte("v")))
		}
		res, err := b.s.Commit(t.Context(), batch)
		require.NoError(t, err)
		copy(versions[lo:], res.Versions)
	}
	require.NoError(t, commitOne(t, b.s, deleteBatch(store.Key("k", "1"))))
	before := pebblestore.StoredReads(b.s)
	requireConditionsSeeStored(t, b.s, store.Key("k", "0"), versions[0])
	require.Greater(t, pebblestore.StoredReads(b.s), before, "the oldest keys are no longer held")
	for _, i := range []int{2, n / 2, n - 1} {
		requireConditionsSeeStored(t, b.s, store.Key("k", fmt.Sprint(i)), versions[i])
	}
	requireConditionsSeeStored(t, b.s, store.Key("k", "1"), 0)
}

func TestConditions_AfterACrashSeeOnlyWhatWasSynced(t *testing.T) {
	t.Parallel()
	fs := vfs.NewCrashableMem()
	s, err := pebblestore.OpenFS("db", pebblestore.Config{}, fs)
	require.NoError(t, err)
	kept, gone := []byte("kept"), []byte("gone")
	res, err := s.Commit(t.Context(), putBatch(kept, "v"))
	require.NoError(t, err)
	require.NoError(t, commitOne(t, s, putBatch(gone, "v")))
	require.NoError(t, commitOne(t, s, deleteBatch(gone)))
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, s.Close())

	s, err = pebblestore.OpenFS("db", pebblestore.Config{}, crashed)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	requireConditionsSeeStored(t, s, kept, res.Versions[0])
	requireConditionsSeeStored(t, s, gone, 0)
}

// Most condition keys are absent (every event's idempotency key); once the
// tables reach the last level, its filters must still rule them out, which
// Pebble's own Get does not consult.
func TestConditions_OnAbsentKeysAreRuledOutByTheLastLevelsFilters(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	batch := &store.Batch{}
	for i := range 1000 {
		batch.Ops = append(batch.Ops, store.Put(store.Key("k", fmt.Sprint(i)), []byte("v")))
	}
	require.NoError(t, commitOne(t, b.s, batch))
	tables, err := pebblestore.CompactAll(b.s)
	require.NoError(t, err)
	require.Positive(t, tables, "the tables are in the last level")
	before := pebblestore.FilterHits(b.s)
	for i := range 100 {
		require.NoError(t, commitOne(t, b.s, putBatch(store.Key("probe", fmt.Sprint(i)), "v", store.IfAbsent(store.Key("absent", fmt.Sprint(i))))))
	}
	require.Greater(t, pebblestore.FilterHits(b.s)-before, int64(50), "absent keys must be ruled out by the last level's filters")
}
