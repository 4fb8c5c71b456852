package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// heldCommitStore counts commits and, once armed, holds the next commit until
// released.
type heldCommitStore struct {
	store.Store
	commits atomic.Int64
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *heldCommitStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.commits.Add(1)
	if s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
	}
	return s.Store.Commit(ctx, b)
}

func TestClaim_APollSkipsATaskAnotherPollOfTheProcessIsClaiming(t *testing.T) {
	gs := &heldCommitStore{Store: memstore.New(memstore.Config{}), entered: make(chan struct{}), release: make(chan struct{})}
	b := setupWith(t, gs)
	b.submit(seq("a")) // no poll waits: task a gets a ready entry
	require.Equal(t, 1, b.readyEntries())

	gs.armed.Store(true)
	first := make(chan pollResult, 1)
	go func() {
		tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-a"}})
		first <- pollResult{tasks: tasks, err: err}
	}()
	<-gs.entered // the first poll's claim is committing; the entry is still ready
	before := gs.commits.Load()

	second := make(chan pollResult, 1)
	go func() {
		tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w2", Activities: []string{"act-a"}})
		second <- pollResult{tasks: tasks, err: err}
	}()
	var got pollResult
	answered := false
	select {
	case got = <-second:
		answered = true
	case <-time.After(5 * time.Second):
		// It queued behind the first claim instead of skipping: let the
		// first commit, and the commit count below tells.
	}
	close(gs.release)
	if !answered {
		got = <-second
	}
	require.NoError(t, got.err)
	require.Empty(t, got.tasks, "the task is the first poll's")
	require.Zero(t, gs.commits.Load()-before, "the second poll made no claim of its own: it could only fail")

	res := <-first
	require.NoError(t, res.err)
	require.Len(t, res.tasks, 1)
	rec, _, err := b.eng.records.Task(b.ctx, res.tasks[0].TaskID)
	require.NoError(t, err)
	require.Equal(t, "w1", rec.WorkerID)
	require.Zero(t, b.readyEntries())
}

func TestClaim_ATaskWhoseClaimFailedStaysReadyForTheNextPoll(t *testing.T) {
	b, cs := setupCounting(t)
	b.submit(seq("a"))
	cs.failCommits(errors.New("injected: the database refused the claim"))
	_, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-a"}})
	require.Error(t, err)
	require.Equal(t, 1, b.readyEntries())
	task := b.poll("act-a")
	require.Equal(t, "a", task.ActionID, "the failed claim's mark did not outlive it")
}
