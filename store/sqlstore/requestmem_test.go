package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

// poisonMark is a part of what a poisoned store fills the requests' memory
// it recycles with: no batch of these tests holds it.
var poisonMark = []byte("recycled-request")

// Recycled memory is never visible: with every request's memory poisoned
// when given back, callers that commit, lose compare-and-sets, give up
// while queued or while their group commits, and overwrite their batch's
// buffers as soon as Commit returns (as the engine does with its arenas)
// never see poison — not in their versions or errors, and not in what the
// store holds — and every key holds one of the values written to it.
func TestGroupCommit_RecycledRequestMemoryIsNeverVisible(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{})
	sqlstore.PoisonRecycledRequests(b.s)
	const workers, perWorker = 16, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { recyclingWorker(t, b.s, w, perWorker) })
	}
	wg.Wait()
	res, err := b.s.Scan(context.Background(), &store.ScanParams{Prefix: []byte{}, Limit: store.MaxScanLimit})
	require.NoError(t, err)
	require.NotEmpty(t, res.Items)
	for _, it := range res.Items {
		require.False(t, bytes.Contains(it.Key, poisonMark), "a key of recycled memory was written: %q", it.Key)
		require.False(t, bytes.Contains(it.Value, poisonMark), "a value of recycled memory was written under %q", it.Key)
	}
}

// Keys whose hashes collide (here every two keys) are kept apart as a
// shared key is, which changes no answer: callers on keys of their own, with
// several groups allowed in flight, commit, lose compare-and-sets and give
// up exactly as they do with distinct hashes, and every key holds one of
// the values written to it.
func TestGroupCommit_KeysWhoseHashesCollideCommitAsDistinctKeys(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 4})
	sqlstore.CollideKeyHashes(b.s)
	sqlstore.PoisonRecycledRequests(b.s)
	const workers, perWorker = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { recyclingWorker(t, b.s, w, perWorker) })
	}
	wg.Wait()
}

// recyclingWorker chains compare-and-sets on a key of its own, each with an
// event of its own; every third batch requires its key to be absent
// instead, which fails; every fourth runs on a context that ends at a random moment.
// Its batch lives in one buffer it overwrites after every Commit.
func recyclingWorker(t *testing.T, s store.Store, w, n int) {
	rng := rand.New(rand.NewPCG(uint64(w), 9))
	own := store.Key("wf", fmt.Sprint(w), "ckpt")
	arena := make([]byte, 0, 8<<10)
	var version uint64 // own's version; 0: absent
	var value []byte   // own's value
	for i := range n {
		arena = arena[:0]
		keyAt := len(arena)
		arena = append(arena, own...)
		want := fmt.Appendf(nil, "w%d-i%d-", w, i)
		want = append(want, bytes.Repeat([]byte{'v'}, rng.IntN(3000))...)
		valueAt := len(arena)
		arena = append(arena, want...)
		ev := store.Key("wf", fmt.Sprint(w), "ev", fmt.Sprint(i))
		evAt := len(arena)
		arena = append(arena, ev...)
		k, v, e := arena[keyAt:valueAt], arena[valueAt:evAt], arena[evAt:]
		cond := store.IfAbsent(k)
		if version != 0 {
			cond = store.IfVersion(k, version)
		}
		batch := &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(k, v), store.Put(e, v)}}
		fails := i%3 == 2 && version != 0
		if fails {
			batch.Conditions[0] = store.IfAbsent(k)
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		givesUp := i%4 == 3
		if givesUp {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(3000))*time.Microsecond)
		}
		res, err := s.Commit(ctx, batch)
		cancel()
		for j := range arena { // the caller reuses its buffers at once
			arena[j] = 'x'
		}
		var cf *store.ConditionFailedError
		switch {
		case err == nil:
			require.False(t, fails, "a batch whose condition fails committed")
			require.Len(t, res.Versions, 2)
			version, value = res.Versions[0], want
			requireValue(t, s, own, string(want), version)
			requireValue(t, s, ev, string(want), res.Versions[1])
		case errors.As(err, &cf):
			require.True(t, fails, "a condition that holds failed: %v", err)
			require.Equal(t, own, cf.Key)
			require.Equal(t, own, cf.Condition.Key)
			require.Equal(t, store.CondAbsent, cf.Condition.Kind)
			require.NotContains(t, cf.Error(), string(poisonMark))
			requireValue(t, s, own, string(value), version)
		case givesUp:
			// Given up on while queued (nothing written) or while committing
			// (written or not): once the group that may hold the key is done
			// (a batch on the key waits for it), the key holds the old value
			// or the new one.
			_, syncErr := s.Commit(context.Background(), &store.Batch{Conditions: []store.Condition{store.IfPresent(own)}})
			if !errors.Is(syncErr, store.ErrConditionFailed) {
				require.NoError(t, syncErr)
			}
			it, getErr := s.Get(context.Background(), own)
			if errors.Is(getErr, store.ErrNotFound) {
				require.Zero(t, version)
				continue
			}
			require.NoError(t, getErr)
			if it.Version != version {
				require.False(t, fails)
				require.Equal(t, string(want), string(it.Value))
				version, value = it.Version, want
			}
			require.Equal(t, string(value), string(it.Value))
		default:
			require.NoError(t, err)
		}
	}
}
