package store_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

func TestCloseGuard_EnterAfterCloseIsErrClosed(t *testing.T) {
	var g store.CloseGuard
	require.NoError(t, g.Enter(context.Background()))
	g.Leave()
	require.NoError(t, g.Close(func() error { return nil }))
	require.ErrorIs(t, g.Enter(context.Background()), store.ErrClosed)
}

func TestCloseGuard_ADoneContextIsItsOwnError(t *testing.T) {
	var g store.CloseGuard
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, g.Enter(ctx), context.Canceled)
}

func TestCloseGuard_ReleaseRunsOnceAndItsErrorIsClosesAnswer(t *testing.T) {
	var g store.CloseGuard
	var calls atomic.Int32
	boom := errors.New("release failed")
	release := func() error { calls.Add(1); return boom }
	require.ErrorIs(t, g.Close(release), boom)
	require.NoError(t, g.Close(release), "a second Close is a no-op")
	require.EqualValues(t, 1, calls.Load())
}

func TestCloseGuard_CloseWaitsForTheOperationsInFlight(t *testing.T) {
	var g store.CloseGuard
	require.NoError(t, g.Enter(context.Background()))
	var inFlight, releasedUnderIt atomic.Bool
	inFlight.Store(true)
	closing, done := make(chan struct{}), make(chan error)
	go func() {
		close(closing)
		done <- g.Close(func() error { releasedUnderIt.Store(inFlight.Load()); return nil })
	}()
	<-closing
	for range 1000 { // give a Close that does not wait every chance to run
		runtime.Gosched()
	}
	inFlight.Store(false)
	g.Leave()
	require.NoError(t, <-done)
	require.False(t, releasedUnderIt.Load(), "Close released the backend under a running operation")
}

func TestCloseGuard_EnteringAndLeavingAllocateNothing(t *testing.T) {
	var g store.CloseGuard
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(100, func() {
		if err := g.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		g.Leave()
	}); allocs != 0 {
		t.Fatalf("an operation entering and leaving the guard allocated %.0f times; want 0", allocs)
	}
}
