package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// completeEager completes task as worker, asking for up to one next task of
// the given activities, and answers the tasks handed back with the result.
func (b *bundle) completeEager(task *Task, worker string, activities ...string) []*Task {
	b.t.Helper()
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: worker,
		Output: json.RawMessage(`{}`), Next: &PollParams{TenantID: tenant, WorkerID: worker, Activities: activities}})
	require.NoError(b.t, err)
	require.False(b.t, res.Duplicate)
	return res.Tasks
}

func TestEagerDispatch_ACompletionHandsTheNextTaskToItsWorkerInTheSameCommit(t *testing.T) {
	b, cs := setupCounting(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")

	before := cs.commits.Load()
	next := b.completeEager(ta, "w1", "act-a", "act-b")
	require.Equal(t, int64(1), cs.commits.Load()-before, "the result and the next claim share one commit")
	require.Len(t, next, 1)
	tb := next[0]
	require.Equal(t, "b", tb.ActionID)
	require.Zero(t, b.readyEntries(), "an eagerly dispatched task never gets a ready entry")

	rec, _, err := b.eng.records.Task(b.ctx, tb.TaskID)
	require.NoError(t, err)
	require.Equal(t, record.TaskClaimed, rec.State)
	require.Equal(t, "w1", rec.WorkerID, "claimed for the worker that asked")
	require.Equal(t, tb.Token, rec.Token)
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Steps[1].Status)

	require.Empty(t, b.completeEager(tb, "w1", "act-a", "act-b"), "the last step makes nothing ready")
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func TestEagerDispatch_TheCompletingWorkerIsServedBeforeAWaitingPoll(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	polled := b.longPoll(ctx, "w2", 1, "act-b")

	next := b.completeEager(ta, "w1", "act-b")
	require.Len(t, next, 1)
	require.Equal(t, "b", next[0].ActionID)
	require.Equal(t, 1, waitingPolls(b.eng), "the waiting poll was not handed the task and still waits")
	cancel()
	requireCanceledEmpty(t, polled)
}

func TestEagerDispatch_ATaskTheWorkerDoesNotRunGoesToAWaitingPoll(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	polled := b.longPoll(b.ctx, "w2", 1, "act-b")

	require.Empty(t, b.completeEager(ta, "w1", "act-a"), "w1 does not run act-b")
	tasks := received(t, polled)
	require.Len(t, tasks, 1)
	require.Equal(t, "b", tasks[0].ActionID)
}

func TestEagerDispatch_ATaskNoPollWantsIsQueuedForTheNextPoll(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")

	require.Empty(t, b.completeEager(ta, "w1", "act-a"))
	require.Equal(t, 1, b.readyEntries(), "the task is ready in its queue")
	require.Equal(t, "b", b.poll("act-b").ActionID)
}

func TestEagerDispatch_AtMostMaxTasksAreHandedBack(t *testing.T) {
	b := setup(t)
	def := definition.Definition{PlanID: "fan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "root", Order: 1, Activity: "act"},
		{ID: "x", Order: 2, Activity: "act", DependsOn: []string{"root"}},
		{ID: "y", Order: 3, Activity: "act", DependsOn: []string{"root"}},
		{ID: "z", Order: 4, Activity: "act", DependsOn: []string{"root"}},
	}}
	b.submit(def)
	root := b.poll("act")
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: root.Token, WorkerID: "w1",
		Output: json.RawMessage(`{}`), Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act"}, MaxTasks: 2}})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 2, "three tasks became ready; the worker asked for two")
	require.Equal(t, 1, b.readyEntries(), "the third waits in its queue")
}

func TestEagerDispatch_ADuplicateCompletionHandsBackNothing(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	require.Len(t, b.completeEager(ta, "w1", "act-b"), 1)

	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1",
		Output: json.RawMessage(`{}`), Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-b"}}})
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	require.Empty(t, res.Tasks, "a repeated report decides nothing, so it claims nothing")
}

func TestEagerDispatch_AFailedCommitClaimsNothingAndTheRetryHandsTheTaskBack(t *testing.T) {
	b, cs := setupCounting(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	cs.failCommits(store.ErrRetryable) // lost and re-made within the same call

	next := b.completeEager(ta, "w1", "act-b")
	require.Len(t, next, 1, "the report's retry made the claim once")
	rec, _, err := b.eng.records.Task(b.ctx, next[0].TaskID)
	require.NoError(t, err)
	require.Equal(t, next[0].Token, rec.Token)
	require.Len(t, b.run(run.RunID).Steps[0].Attempts, 1, "the result is recorded once")
}
