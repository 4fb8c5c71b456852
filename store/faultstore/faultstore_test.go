package faultstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
)

func newStore(t testing.TB, cfg faultstore.Config) *faultstore.Store {
	s, err := faultstore.New(memstore.New(memstore.Config{}), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance_WithoutFaultsIsTransparent(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		return &storetest.Instance{Store: newStore(t, faultstore.Config{})}
	}})
}

func putBatch(key string) *store.Batch {
	return &store.Batch{Ops: []store.Op{store.Put([]byte(key), []byte("v"))}}
}

func TestBeforeCommit_WritesNothing(t *testing.T) {
	t.Parallel()
	s := newStore(t, faultstore.Config{})
	s.InjectNext(faultstore.BeforeCommit)
	_, err := s.Commit(context.Background(), putBatch("k"))
	require.ErrorIs(t, err, faultstore.ErrInjected)
	require.NotErrorIs(t, err, store.ErrOutcomeUnknown)
	_, err = s.Get(context.Background(), []byte("k"))
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestAfterCommit_WritesButReportsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	s := newStore(t, faultstore.Config{})
	s.InjectNext(faultstore.AfterCommit)
	_, err := s.Commit(context.Background(), putBatch("k"))
	var unknown *store.OutcomeUnknownError
	require.True(t, errors.As(err, &unknown), "got %v", err)
	require.ErrorIs(t, err, faultstore.ErrInjected)
	item, err := s.Get(context.Background(), []byte("k"))
	require.NoError(t, err, "re-reading resolves the unknown outcome: the batch was applied")
	require.Equal(t, []byte("v"), item.Value)
}

func TestRetryable_WritesNothingAndIsRetryable(t *testing.T) {
	t.Parallel()
	s := newStore(t, faultstore.Config{})
	s.InjectNext(faultstore.Retryable)
	_, err := s.Commit(context.Background(), putBatch("k"))
	require.ErrorIs(t, err, store.ErrRetryable)
	_, err = s.Get(context.Background(), []byte("k"))
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.Commit(context.Background(), putBatch("k"))
	require.NoError(t, err, "the queued fault is consumed once")
}

func TestRates_InjectRoughlyTheChosenShare(t *testing.T) {
	t.Parallel()
	s := newStore(t, faultstore.Config{BeforeCommitRate: 0.1, AfterCommitRate: 0.1, RetryableRate: 0.2, Seed: 42})
	const n = 5000
	for range n {
		_, _ = s.Commit(context.Background(), putBatch("k"))
	}
	st := s.Stats()
	require.Equal(t, n, st.Commits)
	require.InDelta(t, 0.1*n, st.BeforeCommit, 0.03*n)
	require.InDelta(t, 0.1*n, st.AfterCommit, 0.03*n)
	require.InDelta(t, 0.2*n, st.Retryable, 0.03*n)
}

func TestConfig_RejectsImpossibleRates(t *testing.T) {
	t.Parallel()
	for _, cfg := range []faultstore.Config{{BeforeCommitRate: -0.1}, {RetryableRate: 1.5}, {BeforeCommitRate: 0.6, AfterCommitRate: 0.6}} {
		_, err := faultstore.New(memstore.New(memstore.Config{}), cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestConditionalBatch_ConcurrentIncrementsSurviveRetryableFaults(t *testing.T) {
	t.Parallel()
	// A CAS loop that re-reads after retryable faults still loses nothing.
	s := newStore(t, faultstore.Config{RetryableRate: 0.3, Seed: 7})
	key := []byte("n")
	for i := range 200 {
		for {
			cond := store.IfAbsent(key)
			if item, err := s.Get(context.Background(), key); err == nil {
				cond = store.IfVersion(key, item.Version)
			}
			_, err := s.Commit(context.Background(), &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(key, []byte{byte(i)})}})
			if err == nil {
				break
			}
			require.ErrorIs(t, err, store.ErrRetryable)
		}
	}
	require.Greater(t, s.Stats().Retryable, 20)
}
