package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/retention"
	"github.com/weft-dev/weft/engine/runstate"
)

// rerun asks for a rerun of runID from step, idempotently under id when it is not "".
func (b *bundle) rerun(runID, step, id string) (*ControlResult, error) {
	b.t.Helper()
	p := ControlParams{TenantID: tenant, RunID: runID, ActionID: step, Actor: "op", Reason: "incident 7"}
	if id != "" {
		p.SignalID = &id
	}
	return b.eng.RerunRun(b.ctx, p)
}

// failedInTheMiddle runs seq(a, b, c) until b fails for good: the run is FAILED.
func failedInTheMiddle(t *testing.T, b *bundle) string {
	t.Helper()
	def := seq("a", "b", "c")
	def.Actions[1].Retry.MaxAttempts = 1
	run := b.submit(def)
	b.complete(b.poll("act-a"), `{"n":1}`)
	b.fail(b.poll("act-b"), definition.ErrorValidation)
	require.Equal(t, runstate.RunFailed, b.run(run.RunID).Status)
	return run.RunID
}

func scenarioRerun_AFailedRunRerunsFromAMiddleStepAndKeepsUpstreamAndEveryAttempt(t *testing.T, b *bundle) {
	runID := failedInTheMiddle(t, b)
	res, err := b.rerun(runID, "b", "")
	require.NoError(t, err)
	require.Equal(t, runstate.RunRunning, res.Run.Status)
	require.Equal(t, 0, res.Run.FailedSteps(), "b's failure is reopened")
	require.Equal(t, runstate.StepSucceeded, res.Run.Step("a").Status, "upstream kept")
	require.JSONEq(t, `{"n":1}`, string(res.Run.Step("a").Output))

	b.pollNone("act-a") // upstream is not executed again
	tb := b.poll("act-b")
	require.Equal(t, 2, tb.LogicalAttempt, "a new logical attempt")
	require.Equal(t, 1, tb.EngineAttempt)
	require.JSONEq(t, `{"n":1}`, string(tb.UpstreamOutputs["a"]), "the kept upstream output is the new attempt's input")
	b.complete(tb, `2`)
	b.complete(b.poll("act-c"), `3`)

	snap := b.run(runID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	st := snap.Step("b")
	require.Len(t, st.Attempts, 2, "the failed attempt stays on the step")
	require.Equal(t, 1, st.Attempts[0].LogicalAttempt)
	require.Equal(t, runstate.AttemptFailed, st.Attempts[0].Outcome)
	require.Equal(t, 2, st.Attempts[1].LogicalAttempt)
	require.Equal(t, 1, snap.Step("a").LogicalAttempt)
	require.Equal(t, 1, countEvents(b, runID, runstate.EvRunFailed), "the log keeps the first end")
	require.Equal(t, 1, countEvents(b, runID, runstate.EvRunRerun))
	require.Equal(t, 1, countEvents(b, runID, runstate.EvRunCompleted))
	require.Equal(t, 1, countEvents(b, runID, runstate.EvStepFailed), "both logical attempts of b are in the log")
	require.Equal(t, 4, countEvents(b, runID, runstate.EvStepStarted), "a once, b twice, c once")
	retried := b.eventAt(runID, runstate.EvStepRetried, "b")
	require.True(t, retried.Data.Rerun)
	require.Equal(t, 2, retried.LogicalAttempt)
	rerun := b.runEventOf(runID, runstate.EvRunRerun)
	require.Equal(t, "b", rerun.Data.RerunFrom)
	require.Equal(t, []string{"b"}, rerun.Data.Reopened, "c never ran: nothing of it to set aside")
	require.Equal(t, "op", rerun.Data.Actor)
}

func scenarioRerun_ACompletedRunRerunsAStepAndEverythingDownstreamOfIt(t *testing.T, b *bundle) {
	run := b.submit(dag())
	drainDAG(t, b)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	res, err := b.rerun(run.RunID, "b", "")
	require.NoError(t, err)
	rerun := b.runEventOf(run.RunID, runstate.EvRunRerun)
	require.Equal(t, []string{"b", "d"}, rerun.Data.Reopened, "b and what depends on it; a and c are kept")
	require.Equal(t, runstate.StepSucceeded, res.Run.Step("c").Status)
	require.Empty(t, res.Run.Step("d").Output, "a reopened step's earlier output is set aside")
	drainDAG(t, b)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, 2, countEvents(b, run.RunID, runstate.EvRunCompleted), "the second end is a new event with its own key")
	require.Equal(t, 1, snap.Step("a").LogicalAttempt)
	require.Equal(t, 2, snap.Step("b").LogicalAttempt)
	require.Equal(t, 2, snap.Step("d").LogicalAttempt)
}

// drainDAG completes every ready task of dag() until none is left.
func drainDAG(t *testing.T, b *bundle) {
	t.Helper()
	for range 10 {
		tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"x"}, MaxTasks: 10})
		require.NoError(t, err)
		if len(tasks) == 0 {
			return
		}
		for _, task := range tasks {
			b.complete(task, `"`+task.ActionID+`"`)
		}
	}
}

func scenarioRerun_ARetriedRequestAnswersTheFirstRerun(t *testing.T, b *bundle) {
	runID := failedInTheMiddle(t, b)
	first, err := b.rerun(runID, "b", "rerun-1")
	require.NoError(t, err)
	again, err := b.rerun(runID, "b", "rerun-1")
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, first.Result, again.Result)
	require.Equal(t, 1, countEvents(b, runID, runstate.EvRunRerun), "reran once")
	require.Equal(t, 2, b.run(runID).Step("b").LogicalAttempt)
}

func scenarioRerun_TheRerunRunLeavesTheExpiryIndexUntilItEndsAgain(t *testing.T, b *bundle) {
	runID := failedInTheMiddle(t, b)
	require.Equal(t, 1, b.expiryEntries(runID))
	_, err := b.rerun(runID, "b", "")
	require.NoError(t, err)
	require.Equal(t, 0, b.expiryEntries(runID), "a running run does not expire")
	b.complete(b.poll("act-b"), `2`)
	b.complete(b.poll("act-c"), `3`)
	require.Equal(t, 1, b.expiryEntries(runID), "it expires from its new end")
}

// expiryEntries counts the run's entries in retention's expiry index.
func (b *bundle) expiryEntries(runID string) int {
	b.t.Helper()
	expired, err := retention.ExpiredAt(b.ctx, b.store, b.clock.Now().Add(1000*24*time.Hour))
	require.NoError(b.t, err)
	n := 0
	for _, x := range expired {
		if x.RunID == runID {
			n++
		}
	}
	return n
}

// runEventOf answers the run's first event of type typ.
func (b *bundle) runEventOf(runID, typ string) runstate.Event {
	b.t.Helper()
	for _, ev := range b.runEvents(runID) {
		if ev.Type == typ {
			return ev
		}
	}
	b.t.Fatalf("run %s has no %s", runID, typ)
	return runstate.Event{}
}

// TestRerun_AllowedOnlyFromAnEndedRunAndAfterDoneUpstreamSteps is the
// rerun's table of docs/semantics.md#rerun: the run's statuses it allows
// and refuses, and the upstream that must be done.
func TestRerun_AllowedOnlyFromAnEndedRunAndAfterDoneUpstreamSteps(t *testing.T) {
	cases := []struct {
		name    string
		arrange func(t *testing.T, b *bundle) string
		from    string
		allowed bool
	}{
		{"FAILED", failedInTheMiddle, "b", true},
		{"COMPLETED", func(t *testing.T, b *bundle) string {
			run := b.submit(seq("a", "b"))
			b.complete(b.poll("act-a"), `1`)
			b.complete(b.poll("act-b"), `2`)
			return run.RunID
		}, "a", true},
		{"CANCELLED", func(t *testing.T, b *bundle) string {
			run := b.submit(seq("a", "b"))
			_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
			require.NoError(t, err)
			return run.RunID
		}, "a", true},
		{"RUNNING", func(t *testing.T, b *bundle) string { return b.submit(seq("a", "b")).RunID }, "a", false},
		{"PENDING", func(t *testing.T, b *bundle) string {
			res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), SubmittedBy: "alice"})
			require.NoError(t, err)
			return res.Run.RunID
		}, "a", false},
		{"PAUSED", func(t *testing.T, b *bundle) string {
			run := b.submit(seq("a", "b"))
			_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
			require.NoError(t, err)
			return run.RunID
		}, "a", false},
		{"BLOCKED", func(t *testing.T, b *bundle) string {
			def := seq("a")
			def.Actions[0].OnFailure, def.Actions[0].Retry.MaxAttempts = definition.OnFailureHold, 1
			run := b.submit(def)
			b.fail(b.poll("act-a"), definition.ErrorValidation)
			return run.RunID
		}, "a", false},
		{"FAILED, from a step after the failed one", failedInTheMiddle, "c", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			runID := tc.arrange(t, b)
			before := b.run(runID)
			res, err := b.rerun(runID, tc.from, "")
			if tc.allowed {
				require.NoError(t, err)
				require.Equal(t, runstate.RunRunning, res.Run.Status)
				return
			}
			require.Error(t, err)
			require.Equal(t, CodeIllegalTransition, CodeOf(err), "%v", err)
			after := b.run(runID)
			require.Equal(t, before.Status, after.Status, "a refused rerun changes nothing")
			require.Equal(t, runstate.EvSignalRejected, b.eventTypes(runID)[len(b.eventTypes(runID))-1], "the refusal is logged")
		})
	}
	t.Run("an unknown step", func(t *testing.T) {
		b := setup(t)
		runID := failedInTheMiddle(t, b)
		_, err := b.rerun(runID, "nope", "")
		require.Error(t, err)
		require.Equal(t, runstate.RunFailed, b.run(runID).Status)
	})
	t.Run("no step", func(t *testing.T) {
		b := setup(t)
		runID := failedInTheMiddle(t, b)
		_, err := b.rerun(runID, "", "")
		require.Equal(t, CodeInvalidArgument, CodeOf(err))
	})
}

// TestRerun_AStepWhoseAttemptMayHaveLeftASideEffectIsVerifiedFirst is the
// rerun's verify table of docs/semantics.md#rerun: by the reconciliation
// record the ended attempt left, whether the reopened step's first task is
// a verify task; and what the verifier's answer does with it.
func TestRerun_AStepWhoseAttemptMayHaveLeftASideEffectIsVerifiedFirst(t *testing.T) {
	cases := []struct {
		record decide.ReconStatus
		end    func(t *testing.T, b *bundle, task *Task, runID string)
		verify bool
	}{
		{decide.ReconFailed, func(t *testing.T, b *bundle, task *Task, _ string) {
			_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", ErrorClass: definition.ErrorValidation, ReconciliationKey: "charge-key"})
			require.NoError(t, err)
		}, false},
		{decide.ReconIndeterminate, func(t *testing.T, b *bundle, task *Task, _ string) {
			_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", ErrorClass: definition.ErrorValidation, SideEffectPossible: true, ReconciliationKey: "charge-key"})
			require.NoError(t, err)
		}, true},
		{decide.ReconTimedOut, func(t *testing.T, b *bundle, _ *Task, _ string) {
			b.clock.Advance(10 * time.Second)
			b.tick()
		}, true},
		{decide.ReconCompleted, func(t *testing.T, b *bundle, task *Task, _ string) {
			_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", Output: json.RawMessage(`"ch_1"`), ReconciliationKey: "charge-key"})
			require.NoError(t, err)
			b.complete(b.poll("act-ship"), `"shipped"`) // the run COMPLETED
		}, true},
		{decide.ReconCancelled, func(t *testing.T, b *bundle, _ *Task, runID string) {
			_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op"})
			require.NoError(t, err)
		}, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.record), func(t *testing.T) {
			for _, backend := range scenarioBackends {
				t.Run(backend.name, func(t *testing.T) {
					b := setupWith(t, backend.open(t))
					def := seq("charge", "ship")
					def.Actions[0].Timeout, def.Actions[0].Retry.MaxAttempts = definition.Ms(10_000), 1
					run := b.submit(def)
					tasks := b.pollVerifiable("act-charge")
					require.Len(t, tasks, 1)
					tc.end(t, b, tasks[0], run.RunID)
					require.Equal(t, tc.record, b.recon(run.RunID, "act-charge", "charge").Status)
					require.True(t, b.run(run.RunID).Status.Terminal())

					_, err := b.rerun(run.RunID, "charge", "")
					require.NoError(t, err)
					if !tc.verify {
						again := b.pollVerifiable("act-charge")
						require.Len(t, again, 1)
						require.Equal(t, TaskActivity, again[0].Kind, "a definite failure left no side effect: dispatched at once")
						require.Equal(t, 2, again[0].LogicalAttempt)
						return
					}
					b.pollNone("act-charge") // no blind redispatch, not even to a worker that cannot verify
					vt := b.pollVerifiable("act-charge")
					require.Len(t, vt, 1)
					require.Equal(t, TaskVerify, vt[0].Kind, "verified before it is dispatched again")
					require.Equal(t, 2, vt[0].LogicalAttempt)
					if tc.record != decide.ReconTimedOut && tc.record != decide.ReconCancelled {
						require.Equal(t, "charge-key", vt[0].ReconciliationKey, "the verifier checks the earlier attempt's key")
					}
					_, err = b.eng.ReportVerification(b.ctx, VerifyParams{TenantID: tenant, Token: vt[0].Token, WorkerID: "vw",
						State: runstate.VerifyCompletedWithResult, Result: json.RawMessage(`"ch_1"`)})
					require.NoError(t, err)
					b.pollNone("act-charge") // the side effect happened: never repeated
					st := b.run(run.RunID).Step("charge")
					require.Equal(t, runstate.StepSucceeded, st.Status)
					require.JSONEq(t, `"ch_1"`, string(st.Output))
					b.complete(b.poll("act-ship"), `"shipped"`)
					require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
				})
			}
		})
	}
}

func scenarioRerun_AVerifyThatFindsNoSideEffectDispatchesTheStepAgain(t *testing.T, b *bundle) {
	def := seq("charge")
	def.Actions[0].Retry.MaxAttempts = 1
	run := b.submit(def)
	task := b.pollVerifiable("act-charge")[0]
	_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", ErrorClass: definition.ErrorValidation, SideEffectPossible: true, ReconciliationKey: "k"})
	require.NoError(t, err)
	_, err = b.rerun(run.RunID, "charge", "")
	require.NoError(t, err)
	vt := b.pollVerifiable("act-charge")
	require.Len(t, vt, 1)
	require.Equal(t, TaskVerify, vt[0].Kind)
	_, err = b.eng.ReportVerification(b.ctx, VerifyParams{TenantID: tenant, Token: vt[0].Token, WorkerID: "vw", State: runstate.VerifyNotCompleted})
	require.NoError(t, err)
	again := b.pollVerifiable("act-charge")
	require.Len(t, again, 1)
	require.Equal(t, TaskActivity, again[0].Kind, "no side effect: dispatched again")
	require.Equal(t, 2, again[0].LogicalAttempt)
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: again[0].Token, WorkerID: "vw", Output: json.RawMessage(`"ok"`), ReconciliationKey: "k"})
	require.NoError(t, err)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, 1, countEvents(b, run.RunID, runstate.EvStepScheduled)-1, "one StepScheduled per logical attempt")
}
