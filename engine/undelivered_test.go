package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// endingStore ends a call (runs end) right after the next commit that
// succeeds once armed: the moment a claim has committed and its answer has
// not been given.
type endingStore struct {
	store.Store
	mu  sync.Mutex
	end func()
}

func (s *endingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	res, err := s.Store.Commit(ctx, b)
	s.mu.Lock()
	end := s.end
	if err == nil {
		s.end = nil
	}
	s.mu.Unlock()
	if err == nil && end != nil {
		end()
	}
	return res, err
}

// endAfterNextCommit arms s.
func (s *endingStore) endAfterNextCommit(end func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.end = end
}

func setupEnding(t *testing.T) (*bundle, *endingStore) {
	t.Helper()
	es := &endingStore{Store: memstore.New(memstore.Config{})}
	return setupWith(t, es), es
}

// requireReadyAgain checks that the task of action is ready, unclaimed, under
// its first engine attempt, and answers it claimed by another poll.
func (b *bundle) requireReadyAgain(activity, action string) *Task {
	b.t.Helper()
	require.Equal(b.t, 1, b.readyEntries(), "the task is back in its queue")
	task := b.poll(activity)
	require.Equal(b.t, action, task.ActionID)
	require.Equal(b.t, 1, task.EngineAttempt, "no attempt was spent: no worker ran it")
	return task
}

// startedEvents counts the run's StepStarted events for action.
func (b *bundle) startedEvents(runID, action string) int {
	b.t.Helper()
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(b.t, err)
	n := 0
	for _, ev := range res.Events {
		if ev.Type == runstate.EvStepStarted && ev.StepID == action {
			n++
		}
	}
	return n
}

func TestUndelivered_AHandOffToAPollWhoseCallEndedGoesBackToItsQueue(t *testing.T) {
	b, es := setupEnding(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	pollCtx, endPoll := context.WithCancel(b.ctx)
	polled := b.longPoll(pollCtx, "w2", 1, "act-b")

	es.endAfterNextCommit(endPoll) // the completion's commit, which hands b to w2's poll
	b.complete(ta, `{"a":1}`)
	requireCanceledEmpty(t, polled)

	tb := b.requireReadyAgain("act-b", "b")
	b.complete(tb, `{"b":2}`)
	got := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, got.Status)
	require.Len(t, got.Steps[1].Attempts, 1, "one attempt, by the worker that received the task")
	require.Equal(t, "w1", got.Steps[1].Attempts[0].WorkerID)
	require.Equal(t, 1, b.startedEvents(run.RunID, "b"), "the first claim's StepStarted stands; the re-claim records none")
}

func TestUndelivered_ATaskAPollsOwnScanClaimedGoesBackWhenItsCallEnded(t *testing.T) {
	b, es := setupEnding(t)
	run := b.submit(seq("a"))
	ctx, end := context.WithCancel(b.ctx)
	defer end()

	es.endAfterNextCommit(end) // the scan's claim
	tasks, err := b.eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w2", Activities: []string{"act-a"}})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, tasks, "an ended call is never answered its tasks")

	ta := b.requireReadyAgain("act-a", "a")
	b.complete(ta, `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func TestUndelivered_AnEagerTaskForACompletionWhoseCallEndedGoesBack(t *testing.T) {
	b, es := setupEnding(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	ctx, end := context.WithCancel(b.ctx)
	defer end()

	es.endAfterNextCommit(end) // the result's commit, with b claimed for w1
	report := ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-b"}}}
	res, err := b.eng.CompleteTask(ctx, report)
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, res)
	require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Steps[0].Status, "the result itself is recorded")

	report.Next = nil
	again, err := b.eng.CompleteTask(b.ctx, report)
	require.NoError(t, err)
	require.True(t, again.Duplicate, "the worker's retried report is answered duplicate")

	tb := b.requireReadyAgain("act-b", "b")
	b.complete(tb, `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func TestUndelivered_TheGivenBackTaskGoesStraightToAWaitingPoll(t *testing.T) {
	b, es := setupEnding(t)
	b.submit(seq("a"))
	ctx, end := context.WithCancel(b.ctx)
	defer end()
	var waiting <-chan pollResult
	es.endAfterNextCommit(func() { // w2's claim committed: w3 starts waiting, then w2's call ends
		waiting = b.longPoll(b.ctx, "w3", 1, "act-a")
		end()
	})
	_, err := b.eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w2", Activities: []string{"act-a"}})
	require.ErrorIs(t, err, context.Canceled)
	tasks := received(t, waiting)
	require.Len(t, tasks, 1, "giving back hands the task to the poll waiting for it")
	require.Zero(t, b.readyEntries())
}

func TestUndelivered_GivingBackATaskThatMovedOnChangesNothing(t *testing.T) {
	b := setup(t)
	b.noProjectionCheck = true
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	b.complete(ta, `{}`) // reported: done
	tb := b.poll("act-b")
	b.clock.Advance(definition.DefaultAttemptTimeout.D() + time.Second)
	b.eng.Tick(b.ctx) // timed out: lost, and a new attempt is scheduled
	before := normalised(t, b.store, run.RunID)

	giveBack(b.eng, []*Task{ta, tb})
	require.Equal(t, before, normalised(t, b.store, run.RunID))
}

// scenarioUndelivered_AClaimWhoseCallEndedIsReadyAgainUnderTheSameAttempt
// runs on every store backend (scenarios_registry_test.go): a poll's claim
// committed, its call ended before the answer, and the task is given back and
// run once, under its first engine attempt.
func scenarioUndelivered_AClaimWhoseCallEndedIsReadyAgainUnderTheSameAttempt(t *testing.T, b *bundle) {
	run := b.submit(seq("a"))
	ctx, end := context.WithCancel(b.ctx)
	p := PollParams{TenantID: tenant, WorkerID: "w2", Queue: definition.DefaultQueue, Activities: []string{"act-a"}, MaxTasks: 1}
	slot := slotFor(ctx, b.eng, p)
	claimed, err := claimReady(ctx, b.eng, p, slot)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	end()
	tasks, err := b.eng.dispatch.Answer(slot, claimed, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, tasks)

	ta := b.requireReadyAgain("act-a", "a")
	late, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: claimed[0].Token, WorkerID: "w2", Output: json.RawMessage(`{}`)})
	require.Equal(t, CodeTaskClaimLost, CodeOf(err), "the undelivered claim's token is revoked")
	require.Nil(t, late)
	b.complete(ta, `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Equal(t, 1, b.startedEvents(run.RunID, "a"))
}

// A pause that drains waits for the tasks in flight; a claim given back is no
// longer in flight, so the run is drained at once instead of waiting out the
// drain timeout.
func TestUndelivered_AClaimGivenBackDuringADrainingPauseEndsTheDrain(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	ta := b.poll("act-a") // claimed; its answer will not be delivered
	res, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, "DRAINING", res.Run.Substatus)

	require.NoError(t, giveBackOne(b.ctx, b.eng, ta))
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunPaused, snap.Status)
	require.Empty(t, snap.Substatus, "drained: nothing is in flight")
	require.Contains(t, b.eventTypes(run.RunID), string(runstate.EvRunDrained))

	_, err = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.complete(b.requireReadyAgain("act-a", "a"), `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
