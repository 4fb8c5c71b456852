package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// onceCheckedStore holds the engine to store.DeleteOnce's promise: a key it
// removes with DeleteOnce was put at most once since it was last deleted.
// Every test that uses setup runs on one, so each claim, report, timeout,
// cancellation and removal path in this package proves the promise of the
// keys it deletes so (clearTimer's attempt timers). A broken promise would
// let the Pebble store bring back an older value of the key.
type onceCheckedStore struct {
	store.Store
	mu sync.Mutex
	// puts counts each key's puts since it was last deleted.
	puts       map[string]int
	onces      int // DeleteOnce ops committed
	violations []string
}

func newOnceChecked(st store.Store) *onceCheckedStore {
	return &onceCheckedStore{Store: st, puts: map[string]int{}}
}

func (s *onceCheckedStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.mu.Lock() // one commit at a time, so the counts follow the order of application
	defer s.mu.Unlock()
	res, err := s.Store.Commit(ctx, b)
	if err != nil {
		return res, err
	}
	for _, op := range b.Ops {
		k := string(op.Key)
		switch {
		case op.Kind == store.OpPut:
			s.puts[k]++
		case op.Once && s.puts[k] > 1:
			s.onces++
			s.violations = append(s.violations, fmt.Sprintf("%s: put %d times, then deleted once", op.Key, s.puts[k]))
			delete(s.puts, k)
		default:
			if op.Once {
				s.onces++
			}
			delete(s.puts, k)
		}
	}
	return res, nil
}

func (s *onceCheckedStore) requireKept(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Empty(t, s.violations, "store.DeleteOnce of a key put more than once since its last delete")
}

// setupOnceChecked is setup's store: a memstore checked for DeleteOnce's
// promise when the test ends.
func setupOnceChecked(t *testing.T) store.Store {
	st := newOnceChecked(memstore.New(memstore.Config{}))
	t.Cleanup(func() {
		if !t.Failed() {
			st.requireKept(t)
		}
	})
	return st
}

// The checker itself: it must see a key put twice and then deleted once,
// and accept put, delete, put, DeleteOnce.
func TestDeleteOnce_CheckerCatchesAKeyPutTwice(t *testing.T) {
	st := newOnceChecked(memstore.New(memstore.Config{}))
	ctx := context.Background()
	commit := func(ops ...store.Op) {
		_, err := st.Commit(ctx, &store.Batch{Ops: ops})
		require.NoError(t, err)
	}
	k := keyspace.Timer.Key("k")
	commit(store.Put(k, []byte("1")))
	commit(store.Delete(k))
	commit(store.Put(k, []byte("2")))
	commit(store.DeleteOnce(k))
	commit(store.DeleteOnce(k)) // a second delete of the one put is kept too
	require.Empty(t, st.violations)
	commit(store.Put(k, []byte("3")))
	commit(store.Put(k, []byte("4")))
	commit(store.DeleteOnce(k))
	require.Len(t, st.violations, 1)
}

// Attempt timers are deleted with DeleteOnce, and a claim that ends by its
// report leaves none behind: a claim writes one only past its run's deadline
// index (TestDeadlineIndex_PastEightBucketsAClaimWritesItsAttemptTimer
// counts its DeleteOnce). An indexed claim writes none and its report
// deletes none.
func TestDeleteOnce_AnIndexedClaimsReportDeletesNoAttemptTimer(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	b.complete(ta, `{"a":1}`)
	tb := b.poll("act-b")
	b.complete(tb, `{"b":1}`)
	st := b.store.(*onceCheckedStore)
	st.mu.Lock()
	defer st.mu.Unlock()
	require.Empty(t, st.violations)
	require.Zero(t, st.onces, "no attempt timer to delete")
	for k, n := range st.puts {
		require.NotContains(t, k, ":attempt:", "attempt timer %s (%d puts) outlived its claim", k, n)
	}
}
