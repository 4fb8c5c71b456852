package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

var basicRules = []rule{
	{"TestGet_MissingKeyIsNotFound", testGetMissingKeyIsNotFound},
	{"TestCommit_ReadAfterWrite", testCommitReadAfterWrite},
	{"TestCommit_EmptyValueRoundTrips", testCommitEmptyValueRoundTrips},
	{"TestCommit_VersionChangesOnEveryWrite", testCommitVersionChangesOnEveryWrite},
	{"TestCommit_VersionNeverRepeatsAfterDeleteAndRecreate", testCommitVersionNeverRepeatsAfterDeleteAndRecreate},
	{"TestCommit_ReturnsVersionPerOp", testCommitReturnsVersionPerOp},
	{"TestCommit_MixedPutsAndDeletesApplyTogether", testCommitMixedPutsAndDeletes},
	{"TestCommit_DeletingAbsentKeyIsNoError", testCommitDeletingAbsentKey},
	{"TestCommit_DeleteOnceRemovesLikeDelete", testCommitDeleteOnceRemovesLikeDelete},
	{"TestCommit_InvalidBatchWritesNothing", testCommitInvalidBatchWritesNothing},
	{"TestCommit_CanceledContextWritesNothing", testCommitCanceledContext},
	{"TestCapabilities_TrustedContractsDeclared", testCapabilitiesTrustedContracts},
}

func testGetMissingKeyIsNotFound(t *testing.T, h Harness) {
	s := h.Open(t).Store
	_, err := s.Get(ctx(t), []byte("missing"))
	require.ErrorIs(t, err, store.ErrNotFound)
	require.Contains(t, err.Error(), "missing", "not-found error names the key")
}

func testCommitReadAfterWrite(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireCapability(t, s, "readAfterWrite", func(c store.Capabilities) bool { return c.ReadAfterWrite })
	key := store.Key("wf", "raw-1")
	for i := range 20 {
		value := []byte{byte(i), 'v'}
		v := put(t, s, key, value)
		item := get(t, s, key)
		require.Equal(t, value, item.Value)
		require.Equal(t, v, item.Version)
		items := scanAll(t, s, store.ScanParams{Prefix: key})
		require.Len(t, items, 1)
		require.Equal(t, value, items[0].Value)
		require.Equal(t, v, items[0].Version)
	}
	del(t, s, key)
	requireAbsent(t, s, key)
	require.Empty(t, scanAll(t, s, store.ScanParams{Prefix: key}))
}

func testCommitEmptyValueRoundTrips(t *testing.T, h Harness) {
	s := h.Open(t).Store
	key := []byte("empty")
	v := put(t, s, key, nil)
	item := get(t, s, key)
	require.Empty(t, item.Value)
	require.Equal(t, v, item.Version)
}

func testCommitVersionChangesOnEveryWrite(t *testing.T, h Harness) {
	s := h.Open(t).Store
	key := []byte("k")
	seen := map[uint64]bool{}
	for range 10 {
		v := put(t, s, key, []byte("same value"))
		require.False(t, seen[v], "version %d repeated for one key", v)
		seen[v] = true
		require.Equal(t, v, get(t, s, key).Version)
	}
}

func testCommitVersionNeverRepeatsAfterDeleteAndRecreate(t *testing.T, h Harness) {
	s := h.Open(t).Store
	key := []byte("aba")
	seen := map[uint64]bool{}
	for range 5 {
		v := put(t, s, key, []byte("x"))
		require.False(t, seen[v], "version %d reused after delete: ABA is possible", v)
		seen[v] = true
		del(t, s, key)
	}
}

func testCommitReturnsVersionPerOp(t *testing.T, h Harness) {
	s := h.Open(t).Store
	put(t, s, []byte("b"), []byte("old"))
	res, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{
		store.Put([]byte("a"), []byte("1")),
		store.Delete([]byte("b")),
		store.Put([]byte("c"), []byte("3")),
	}})
	require.NoError(t, err)
	require.Len(t, res.Versions, 3)
	require.Equal(t, get(t, s, []byte("a")).Version, res.Versions[0])
	require.Zero(t, res.Versions[1], "deletes report version 0")
	require.Equal(t, get(t, s, []byte("c")).Version, res.Versions[2])
}

func testCommitMixedPutsAndDeletes(t *testing.T, h Harness) {
	s := h.Open(t).Store
	put(t, s, []byte("gone"), []byte("x"))
	put(t, s, []byte("kept"), []byte("x"))
	_, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{
		store.Delete([]byte("gone")),
		store.Put([]byte("new"), []byte("n")),
		store.Put([]byte("kept"), []byte("y")),
	}})
	require.NoError(t, err)
	requireAbsent(t, s, []byte("gone"))
	require.Equal(t, []byte("n"), get(t, s, []byte("new")).Value)
	require.Equal(t, []byte("y"), get(t, s, []byte("kept")).Value)
}

func testCommitDeletingAbsentKey(t *testing.T, h Harness) {
	s := h.Open(t).Store
	del(t, s, []byte("never-written"))
	requireAbsent(t, s, []byte("never-written"))
}

// DeleteOnce (a delete whose key was put at most once since it was last
// absent) removes the key as Delete does, on every backend, whether it is
// a backend's single delete or its plain one; the key can be put again.
func testCommitDeleteOnceRemovesLikeDelete(t *testing.T, h Harness) {
	s := h.Open(t).Store
	key := store.Key("tmr", "once")
	for i := range 3 {
		v := put(t, s, key, []byte{byte(i)})
		require.Equal(t, v, get(t, s, key).Version)
		res, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{store.DeleteOnce(key)}})
		require.NoError(t, err)
		require.Equal(t, []uint64{0}, res.Versions, "a delete has no version")
		requireAbsent(t, s, key)
		require.Empty(t, scanAll(t, s, store.ScanParams{Prefix: key}))
	}
	_, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{store.DeleteOnce(store.Key("tmr", "never"))}})
	require.NoError(t, err, "deleting an absent key once is no error")
}

func testCommitInvalidBatchWritesNothing(t *testing.T, h Harness) {
	s := h.Open(t).Store
	bad := []*store.Batch{
		{Ops: []store.Op{store.Put([]byte("ok"), nil), store.Put(nil, []byte("x"))}},
		{Ops: []store.Op{store.Put([]byte("ok"), nil), store.Put([]byte("dup"), nil), store.Delete([]byte("dup"))}},
		{Ops: []store.Op{store.Put([]byte("ok"), nil), store.Put(make([]byte, store.MaxKeyBytes+1), nil)}},
	}
	for i, b := range bad {
		_, err := s.Commit(ctx(t), b)
		require.ErrorIs(t, err, store.ErrInvalidArgument, "batch %d", i)
	}
	requireAbsent(t, s, []byte("ok"))
	_, err := s.Get(ctx(t), nil)
	require.ErrorIs(t, err, store.ErrInvalidArgument)
	longest := make([]byte, store.MaxKeyBytes)
	for i := range longest {
		longest[i] = byte('a' + i%26)
	}
	put(t, s, longest, []byte("longest key fits"))
	require.Equal(t, []byte("longest key fits"), get(t, s, longest).Value)
}

func testCommitCanceledContext(t *testing.T, h Harness) {
	s := h.Open(t).Store
	c, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Commit(c, &store.Batch{Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
	require.Error(t, err)
	require.True(t, errors.Is(err, context.Canceled) || errors.Is(err, store.ErrOutcomeUnknown), "got %v", err)
	requireAbsent(t, s, []byte("k"))
}

func testCapabilitiesTrustedContracts(t *testing.T, h Harness) {
	caps := h.Open(t).Store.Capabilities()
	require.NotEmpty(t, caps.Backend, "backends name themselves for diagnostics")
	require.Positive(t, caps.MaxValueBytes)
	// Spec 003: atomicBatch, readAfterWrite and scanConsistency are trusted
	// contracts that Weft cannot repair at run time. Every backend must hold them.
	require.True(t, caps.AtomicBatch, "atomicBatch")
	require.True(t, caps.ReadAfterWrite, "readAfterWrite")
	require.True(t, caps.ScanConsistency, "scanConsistency")
}
