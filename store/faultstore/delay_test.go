package faultstore_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/faultstore"
)

// The delays run on synctest's fake clock: no test waits for real time.

func TestCommitDelay_PastTheDeadlineWritesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t, faultstore.Config{CommitDelay: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := s.Commit(ctx, putBatch("k"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, store.ErrOutcomeUnknown)
		_, err = s.Get(context.Background(), []byte("k"))
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestCommitDelay_WithinTheDeadlineWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t, faultstore.Config{CommitDelay: 2 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := s.Commit(ctx, putBatch("k"))
		require.NoError(t, err)
		require.Equal(t, 2*time.Second, time.Since(start), "the commit waited the delay on the bubble's clock")
		_, err = s.Get(context.Background(), []byte("k"))
		require.NoError(t, err)
	})
}

func TestAckDelay_PastTheDeadlineWritesButReportsOutcomeUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t, faultstore.Config{AckDelay: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := s.Commit(ctx, putBatch("k"))
		require.ErrorIs(t, err, store.ErrOutcomeUnknown)
		_, err = s.Get(context.Background(), []byte("k"))
		require.NoError(t, err, "the write stands")
		s.SetDelays(0, 0)
		_, err = s.Commit(context.Background(), putBatch("k2"))
		require.NoError(t, err)
	})
}
