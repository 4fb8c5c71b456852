package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// A submission with start persists the run and triggers it in one commit
// (docs/semantics.md#submission): the log still records RunSubmitted
// (PENDING) before the trigger's events, and nothing transient is left —
// no pending-trigger marker, no status index entry but the run's status.
func TestSubmit_WithStartPersistsAndTriggersTheRunInOneCommit(t *testing.T) {
	cs := &countingStore{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, cs)
	before := cs.commits.Load()
	run := b.submit(seq("a", "b"))
	require.Equal(t, int64(1), cs.commits.Load()-before, "persisting and triggering share one commit")
	require.Equal(t, runstate.RunRunning, run.Status)
	require.Equal(t, []string{runstate.EvRunSubmitted, runstate.EvRunQueued, runstate.EvRunStarted, runstate.EvStepScheduled},
		b.eventTypes(run.RunID))

	_, err := cs.Get(b.ctx, record.PendingTriggerKey(run.RunID))
	require.True(t, errors.Is(err, store.ErrNotFound), "no pending-trigger marker: there is no trigger left to finish")
	for _, op := range cs.last.Ops {
		require.NotEqual(t, string(record.PendingTriggerKey(run.RunID)), string(op.Key), "the batch neither writes nor deletes the marker")
	}
	for _, status := range []runstate.RunStatus{runstate.RunPending, runstate.RunQueued} {
		_, err := cs.Get(b.ctx, record.RunStatusKey(tenant, status, run.CreatedAt, run.RunID))
		require.True(t, errors.Is(err, store.ErrNotFound), "no %s index entry", status)
		for _, op := range cs.last.Ops {
			require.NotEqual(t, string(record.RunStatusKey(tenant, status, run.CreatedAt, run.RunID)), string(op.Key),
				"the batch neither writes nor deletes the %s index entry it passed through", status)
		}
	}
	_, err = cs.Get(b.ctx, record.RunStatusKey(tenant, runstate.RunRunning, run.CreatedAt, run.RunID))
	require.NoError(t, err)

	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// The one commit of a submission with start hands the first task to a poll
// waiting for it, as any decision that makes a task ready does.
func TestSubmit_WithStartHandsTheFirstTaskToAWaitingPollInItsOneCommit(t *testing.T) {
	cs := &countingStore{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, cs)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	polled := b.longPoll(ctx, "w1", 1, "act-a")
	before := cs.commits.Load()
	run := b.submit(seq("a"))
	tasks := received(t, polled)
	require.Len(t, tasks, 1)
	require.Equal(t, run.RunID, tasks[0].RunID)
	require.Equal(t, int64(1), cs.commits.Load()-before, "submission, trigger and claim share one commit")
	require.Zero(t, b.readyEntries(), "the handed-off task never had a ready entry")
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("a").Status)
	b.complete(tasks[0], `1`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// A run that needs approval is persisted by a submission with start, and its
// trigger refused as StartRun's would be; the run stays PENDING.
func TestSubmit_WithStartOfARunNeedingApprovalPersistsItAndRefusesTheTrigger(t *testing.T) {
	b := setup(t)
	def := seq("a")
	def.RequiresApproval = true
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, RunRequestID: "r1", SubmittedBy: "alice"})
	require.Equal(t, CodeIllegalTransition, CodeOf(err))
	again, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, RunRequestID: "r1", SubmittedBy: "alice"})
	require.NoError(t, err)
	require.True(t, again.Existing, "the run was persisted before its trigger was refused")
	require.Equal(t, runstate.RunPending, again.Run.Status)
}

// readCountingStore counts the store's point reads.
type readCountingStore struct {
	store.Store
	gets atomic.Int64
}

func (s *readCountingStore) Get(ctx context.Context, key []byte) (store.Item, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

// A submission answers the run as its own commit left it, without reading
// it back: the same snapshot GetRun answers while nothing else happened.
// (The engine's first submission of a plan reads whether the plan's record
// is stored: the run before the one counted submits the plan.)
func TestSubmit_AnswersTheRunItsCommitLeftWithoutReadingItBack(t *testing.T) {
	for _, start := range []bool{true, false} {
		rs := &readCountingStore{Store: memstore.New(memstore.Config{})}
		b := setupWith(t, rs)
		_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a", "b"), SubmittedBy: "alice"})
		require.NoError(t, err)
		before := rs.gets.Load()
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a", "b"), Start: start, SubmittedBy: "alice"})
		require.NoError(t, err)
		require.Zero(t, rs.gets.Load()-before, "start=%v: nothing read back", start)
		require.Equal(t, b.run(res.Run.RunID), res.Run, "start=%v: the answer is the run as stored", start)
	}
}
