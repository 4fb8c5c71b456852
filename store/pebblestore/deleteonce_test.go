package pebblestore_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

func commitOps(t *testing.T, s store.Store, ops ...store.Op) {
	t.Helper()
	_, err := s.Commit(context.Background(), &store.Batch{Ops: ops})
	require.NoError(t, err)
}

func requireValue(t *testing.T, s store.Store, key []byte, want string) {
	t.Helper()
	it, err := s.Get(context.Background(), key)
	if want == "" {
		require.ErrorIs(t, err, store.ErrNotFound, "key %s", key)
		return
	}
	require.NoError(t, err)
	require.Equal(t, want, string(it.Value))
}

// A key put once and removed with DeleteOnce leaves nothing in the tables:
// the single delete and the put vanish together in the flush, where a plain
// delete leaves a tombstone to carry down the levels.
func TestDeleteOnce_VanishesWithItsPutInAFlush(t *testing.T) {
	t.Parallel()
	count := func(del func([]byte) store.Op) (tombstones, entries uint64) {
		s, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
		require.NoError(t, err)
		defer s.Close()
		for i := range 100 {
			key := store.Key("ob", fmt.Sprint(i))
			commitOps(t, s, store.Put(key, []byte("entry")))
			commitOps(t, s, del(key))
		}
		commitOps(t, s, store.Put(store.Key("kept"), []byte("v")))
		tombstones, entries, err = pebblestore.LevelEntries(s)
		require.NoError(t, err)
		return tombstones, entries
	}
	tombstones, entries := count(store.Delete)
	require.Equal(t, uint64(100), tombstones, "a plain delete leaves its tombstone in the flushed table")
	require.Greater(t, entries, uint64(100))
	tombstones, entries = count(store.DeleteOnce)
	require.Zero(t, tombstones, "a single delete that met its put leaves no tombstone")
	require.Equal(t, uint64(3), entries, "only the kept key, the layout version and the version counter remain")
}

// DeleteOnce removes the key wherever its one put lies: in the memtable, in
// a flushed table, or compacted into the last level; and a key put again
// after it reads the new value. Below a plain delete, an older value never
// comes back.
func TestDeleteOnce_RemovesThePutWhereverItLies(t *testing.T) {
	t.Parallel()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	defer s.Close()
	key := store.Key("op", "q", "1")
	settle := []func() error{
		func() error { return nil },
		func() error { return pebblestore.Flush(s) },
		func() error { _, err := pebblestore.CompactAll(s); return err },
	}
	for round := range 3 {
		for i, afterPut := range settle {
			for j, afterDelete := range settle {
				value := fmt.Sprintf("v%d-%d-%d", round, i, j)
				// An older history under a plain delete: put, put, delete.
				commitOps(t, s, store.Put(key, []byte("old-1")))
				commitOps(t, s, store.Put(key, []byte("old-2")))
				require.NoError(t, afterPut())
				commitOps(t, s, store.Delete(key))
				commitOps(t, s, store.Put(key, []byte(value)))
				require.NoError(t, afterPut())
				requireValue(t, s, key, value)
				commitOps(t, s, store.DeleteOnce(key))
				requireValue(t, s, key, "")
				require.NoError(t, afterDelete())
				requireValue(t, s, key, "")
				_, err := pebblestore.CompactAll(s)
				require.NoError(t, err)
				requireValue(t, s, key, "")
				res, err := s.Scan(context.Background(), &store.ScanParams{Prefix: store.KeyPrefix("op")})
				require.NoError(t, err)
				require.Empty(t, res.Items)
			}
		}
	}
}

// A put and its DeleteOnce in one group commit (two batches folded into one
// Pebble batch) leave the key absent, and so does a DeleteOnce of a key
// never put.
func TestDeleteOnce_InOneGroupAndOfAnAbsentKey(t *testing.T) {
	t.Parallel()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	defer s.Close()
	key := store.Key("ob", "g")
	commitOps(t, s, store.DeleteOnce(store.Key("ob", "never")))
	release, entered := make(chan struct{}), make(chan int, 2)
	pebblestore.SetBeforeApply(s, func(n int) error { entered <- n; <-release; return nil })
	first := make(chan error, 1)
	go func() { // holds the lead in its apply while the next two queue
		_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(store.Key("x"), nil)}})
		first <- err
	}()
	require.Equal(t, 1, <-entered) // the leader is in its apply
	done := make(chan error, 2)
	go func() {
		_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(key, []byte("v"))}})
		done <- err
	}()
	for pebblestore.QueueLen(s) != 1 {
		runtime.Gosched()
	}
	go func() {
		_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.DeleteOnce(key)}})
		done <- err
	}()
	for pebblestore.QueueLen(s) != 2 {
		runtime.Gosched()
	}
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	require.Equal(t, 2, <-entered, "the put and its DeleteOnce were folded into one group")
	requireValue(t, s, key, "")
	_, err = pebblestore.CompactAll(s)
	require.NoError(t, err)
	requireValue(t, s, key, "")
	requireValue(t, s, store.Key("ob", "never"), "")
}

// A DeleteOnce that was synced survives a crash, both before and after the
// memtable holding it was flushed; one that the crash lost leaves the put.
func TestDeleteOnce_SurvivesACrash(t *testing.T) {
	t.Parallel()
	for _, flush := range []bool{false, true} {
		fs := vfs.NewCrashableMem()
		s, err := pebblestore.OpenFS("db", pebblestore.Config{}, fs)
		require.NoError(t, err)
		for i := range 50 {
			commitOps(t, s, store.Put(store.Key("ob", fmt.Sprint(i)), []byte("e")))
		}
		if flush {
			require.NoError(t, pebblestore.Flush(s))
		}
		for i := range 25 {
			commitOps(t, s, store.DeleteOnce(store.Key("ob", fmt.Sprint(i))))
		}
		crashed := fs.CrashClone(vfs.CrashCloneCfg{})
		require.NoError(t, s.Close())
		s, err = pebblestore.OpenFS("db", pebblestore.Config{}, crashed)
		require.NoError(t, err)
		for i := range 50 {
			want := "e"
			if i < 25 {
				want = ""
			}
			requireValue(t, s, store.Key("ob", fmt.Sprint(i)), want)
		}
		_, err = pebblestore.CompactAll(s)
		require.NoError(t, err)
		for i := range 50 {
			want := "e"
			if i < 25 {
				want = ""
			}
			requireValue(t, s, store.Key("ob", fmt.Sprint(i)), want)
		}
		require.NoError(t, s.Close())
	}
}
