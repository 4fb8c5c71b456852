package pebblestore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// heardPuts records what a WatchPuts callback heard, and whether each put
// was already visible when it heard of it.
type heardPuts struct {
	mu      sync.Mutex
	st      *pebblestore.Store
	least   []string
	visible []bool
}

func (h *heardPuts) fn(least []byte) {
	// A Get from the callback would deadlock nothing (reads take no lock);
	// it proves the put is visible before anyone is told.
	_, err := h.st.Get(context.Background(), least)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.least = append(h.least, string(least))
	h.visible = append(h.visible, err == nil)
}

func (h *heardPuts) got() ([]string, []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.least...), append([]bool(nil), h.visible...)
}

func openPebble(t *testing.T) *pebblestore.Store {
	t.Helper()
	s, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestWatchPuts_HearsTheLeastPutUnderItsPrefixOnceVisible(t *testing.T) {
	t.Parallel()
	s := openPebble(t)
	h := &heardPuts{st: s}
	cancel := s.WatchPuts(store.KeyPrefix("ob"), h.fn)
	ctx := context.Background()

	_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{
		store.Put(store.Key("ob", "run-b", "2"), []byte("x")),
		store.Put(store.Key("ob", "run-a", "7"), []byte("x")),
		store.Put(store.Key("ev", "run-0"), []byte("x")), // another prefix, below
	}})
	require.NoError(t, err)
	_, err = s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(store.Key("obr", "run-a"), []byte("x"))}})
	require.NoError(t, err, "a longer first component is not under the prefix")
	_, err = s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Delete(store.Key("ob", "run-a", "7"))}})
	require.NoError(t, err, "a delete inserts nothing")
	_, err = s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(store.Key("ob", "run-b", "2"))},
		Ops: []store.Op{store.Put(store.Key("ob", "run-0", "1"), []byte("x"))}})
	require.ErrorIs(t, err, store.ErrConditionFailed, "a refused batch puts nothing")

	least, visible := h.got()
	require.Equal(t, []string{string(store.Key("ob", "run-a", "7"))}, least)
	require.Equal(t, []bool{true}, visible)

	cancel()
	_, err = s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(store.Key("ob", "run-c", "1"), []byte("x"))}})
	require.NoError(t, err)
	least, _ = h.got()
	require.Len(t, least, 1, "nothing heard after cancel")
}

func TestWatchPuts_HearsAGroupWhoseApplyFailed(t *testing.T) {
	t.Parallel()
	s := openPebble(t)
	h := &heardPuts{st: s}
	s.WatchPuts(store.KeyPrefix("ob"), h.fn)
	pebblestore.SetBeforeApply(s, func(int) error { return errors.New("disk gone") })
	_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(store.Key("ob", "run-a", "1"), []byte("x"))}})
	require.ErrorIs(t, err, store.ErrOutcomeUnknown)
	least, _ := h.got()
	require.Equal(t, []string{string(store.Key("ob", "run-a", "1"))}, least,
		"a put whose outcome is unknown may be there: a watcher must hear of it")
}

func TestWatchPuts_EveryPutOfConcurrentCommittersIsHeardBeforeItsCommitReturns(t *testing.T) {
	t.Parallel()
	s := openPebble(t)
	var mu sync.Mutex
	var least []string
	s.WatchPuts(store.KeyPrefix("ob"), func(k []byte) {
		mu.Lock()
		defer mu.Unlock()
		least = append(least, string(k))
	})
	heardAtOrBelow := func(key []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range least {
			if l <= string(key) {
				return true
			}
		}
		return false
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				key := store.Key("ob", string(rune('a'+g)), store.Uint64(uint64(i)))
				_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(key, []byte("x"))}})
				if !(err == nil && heardAtOrBelow(key)) {
					t.Errorf("put of %q (err %v) not heard when its commit returned", key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
