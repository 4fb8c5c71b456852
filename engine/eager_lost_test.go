package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
)

func TestEagerDispatch_ARetriedCompletionGivesBackTheNextTasksItsLostAnswerNamed(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	report := ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-a", "act-b"}}}
	first, err := b.eng.CompleteTask(b.ctx, report)
	require.NoError(t, err)
	require.Len(t, first.Tasks, 1, "the completion claims b for the worker")
	lost := first.Tasks[0] // this answer never reaches the worker

	again, err := b.eng.CompleteTask(b.ctx, report) // the worker retries, the same token
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	rec, _, err := b.eng.records.Task(b.ctx, lost.TaskID)
	require.NoError(t, err)
	require.Equal(t, record.TaskReady, rec.State, "b is ready again, not claimed by nobody until its timeout")

	tb := b.poll("act-b")
	require.Equal(t, lost.TaskID, tb.TaskID)
	require.Equal(t, lost.EngineAttempt, tb.EngineAttempt, "no retry is spent")
	require.NotEqual(t, lost.Token, tb.Token)
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: lost.Token})
	require.NoError(t, err)
	require.True(t, hb.CancelRequested, "the lost answer's token is revoked")
	b.complete(tb, `1`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)

	_, err = b.eng.CompleteTask(b.ctx, report) // a third report changes nothing more
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func TestEagerDispatch_ARetriedCompletionLeavesANextTaskAlreadyReportedAlone(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b", "c"))
	ta := b.poll("act-a")
	report := ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-b"}}}
	first, err := b.eng.CompleteTask(b.ctx, report)
	require.NoError(t, err)
	require.Len(t, first.Tasks, 1)
	b.complete(first.Tasks[0], `2`) // the answer did arrive, and b ran
	again, err := b.eng.CompleteTask(b.ctx, report)
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("b").Status)
	require.Len(t, snap.Step("b").Attempts, 1)
	require.Equal(t, runstate.StepScheduled, snap.Step("c").Status)
}
