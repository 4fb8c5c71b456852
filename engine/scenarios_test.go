package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/runstate"
)

func dag() definition.Definition {
	// docs/semantics.md#dag-shape: b and c need a; d needs b and c.
	return definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "x"},
		{ID: "b", Order: 2, Activity: "x", DependsOn: []string{"a"}},
		{ID: "c", Order: 3, Activity: "x", DependsOn: []string{"a"}},
		{ID: "d", Order: 4, Activity: "x", DependsOn: []string{"b", "c"}},
	}}
}

func (b *bundle) pollAll(activity string, max int) []*Task {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{activity}, MaxTasks: max})
	require.NoError(b.t, err)
	for _, t := range tasks {
		b.claimed[t.TaskID] = t
	}
	return tasks
}

func ids(tasks []*Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.ActionID)
	}
	return out
}

func scenarioDAG_AllOfJoinWaitsForEveryPredecessor(t *testing.T, b *bundle) {
	run := b.submit(dag())
	require.Equal(t, []string{"a"}, ids(b.pollAll("x", 10)))
	b.complete(b.taskFor(b.run(run.RunID).Step("a")), `1`)
	bc := b.pollAll("x", 10)
	require.Equal(t, []string{"b", "c"}, ids(bc))
	b.complete(bc[0], `2`)
	require.Empty(t, b.pollAll("x", 10), "d must wait for c too")
	b.complete(bc[1], `3`)
	d := b.pollAll("x", 10)
	require.Equal(t, []string{"d"}, ids(d))
	require.Len(t, d[0].UpstreamOutputs, 2)
	b.complete(d[0], `4`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// taskFor answers the task claimed earlier for a step.
func (b *bundle) taskFor(st *runstate.StepState) *Task {
	b.t.Helper()
	return b.claimed[st.TaskID]
}

func scenarioDispatch_OrderThenActionIDByteWise(t *testing.T, b *bundle) {
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "root", Order: 1, Activity: "x"},
		{ID: "b", Order: 3, Activity: "x", DependsOn: []string{"root"}},
		{ID: "Z", Order: 2, Activity: "x", DependsOn: []string{"root"}},
		{ID: "a", Order: 4, Activity: "x", DependsOn: []string{"root"}},
	}}
	b.submit(def)
	b.complete(b.pollAll("x", 1)[0], `null`)
	require.Equal(t, []string{"Z", "b", "a"}, ids(b.pollAll("x", 10)))
}

func scenarioRetry_RetryableFailureRunsAgainAfterBackoff(t *testing.T, b *bundle) {
	run := b.submit(seq("a"))
	res := b.fail(b.poll("act-a"), definition.ErrorTransient)
	require.True(t, res.WillRetry)
	b.pollNone("act-a")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepRunning, snap.Step("a").Status)
	require.Equal(t, b.clock.Now().Add(time.Second).Truncate(time.Millisecond), snap.Step("a").NextAttemptAt)
	b.clock.Advance(999 * time.Millisecond)
	b.tick()
	b.pollNone("act-a")
	b.clock.Advance(time.Millisecond)
	b.tick()
	task := b.poll("act-a")
	require.Equal(t, 2, task.EngineAttempt)
	require.Equal(t, 1, task.LogicalAttempt)
	require.Equal(t, run.RunID+":a", task.IdempotencyKey, "the action key is stable across retries")
	b.complete(task, `"ok"`)
	snap = b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Len(t, snap.Step("a").Attempts, 2)
	require.Equal(t, runstate.AttemptFailed, snap.Step("a").Attempts[0].Outcome)
}

func TestRetry_NonRetryableClassFailsTheStepAtOnce(t *testing.T) {
	for _, class := range []definition.ErrorClass{definition.ErrorValidation, definition.ErrorPolicyDeny, definition.ErrorAuthDeny, definition.ErrorBusinessConflict, definition.ErrorGovernance} {
		t.Run(string(class), func(t *testing.T) {
			b := setup(t)
			def := seq("a")
			def.Actions[0].OnFailure = definition.OnFailureAbort
			run := b.submit(def)
			res := b.fail(b.poll("act-a"), class)
			require.False(t, res.WillRetry)
			snap := b.run(run.RunID)
			require.Equal(t, runstate.RunFailed, snap.Status)
			require.Equal(t, runstate.StepFailed, snap.Step("a").Status)
			require.Equal(t, class, snap.Error.Error.Class)
		})
	}
}

func scenarioRetry_ExhaustedAttemptsFailTheStep(t *testing.T, b *bundle) {
	def := seq("a")
	def.Actions[0].Retry.MaxAttempts = 2
	run := b.submit(def)
	b.fail(b.poll("act-a"), definition.ErrorUnknown)
	b.clock.Advance(time.Second)
	b.tick()
	res := b.fail(b.poll("act-a"), definition.ErrorUnknown)
	require.False(t, res.WillRetry)
	require.Equal(t, runstate.RunFailed, b.run(run.RunID).Status)
}

func scenarioTimeout_AttemptTimeoutIsRetryableByDefault(t *testing.T, b *bundle) {
	def := seq("a")
	def.Actions[0].Timeout = definition.Ms(5000)
	run := b.submit(def)
	first := b.poll("act-a")
	b.clock.Advance(5 * time.Second)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.AttemptTimedOut, snap.Step("a").Attempts[0].Outcome)
	require.Equal(t, definition.ErrorTimeout, snap.Step("a").Attempts[0].Error.Class)
	_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: first.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
	require.Equal(t, CodeTaskClaimLost, CodeOf(err), "a late report after the timeout changes nothing")
	b.clock.Advance(time.Second)
	b.tick()
	b.complete(b.poll("act-a"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioTaskReport_DuplicateWithSameTokenChangesNothing(t *testing.T, b *bundle) {
	run := b.submit(seq("a", "b"))
	task := b.poll("act-a")
	b.complete(task, `1`)
	before := b.run(run.RunID).LastEventSeq
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	require.Equal(t, before, b.run(run.RunID).LastEventSeq)
	_, err = b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", ErrorClass: definition.ErrorUnknown})
	require.Equal(t, CodeTaskClaimLost, CodeOf(err))
}

func scenarioCompensation_RunsInReverseCompletionOrderThenFails(t *testing.T, b *bundle) {
	def := seq("a", "b", "c", "d")
	for i := range 3 {
		def.Actions[i].Compensation = &definition.CompensationHook{Operation: "undo"}
	}
	def.Actions[3].Retry.MaxAttempts = 1
	run := b.submit(def)
	for _, id := range []string{"a", "b", "c"} {
		b.complete(b.poll("act-"+id), `1`)
	}
	b.fail(b.poll("act-d"), definition.ErrorValidation)
	require.Equal(t, runstate.RunCompensating, b.run(run.RunID).Status)
	var order []string
	for range 3 {
		tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{"undo"}, MaxTasks: 5})
		require.NoError(t, err)
		require.Len(t, tasks, 1, "compensation runs one hook at a time")
		require.Equal(t, run.RunID+":"+tasks[0].ActionID+":compensate", tasks[0].IdempotencyKey)
		order = append(order, tasks[0].ActionID)
		b.complete(tasks[0], `null`)
	}
	require.Equal(t, []string{"c", "b", "a"}, order)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.CompensationRolledBack, snap.CompensationOutcome)
}

func scenarioCompensation_FailedHookDoesNotStopTheOthers(t *testing.T, b *bundle) {
	def := seq("a", "b", "c")
	def.Actions[0].Compensation = &definition.CompensationHook{Operation: "undo"}
	def.Actions[1].Compensation = &definition.CompensationHook{Operation: "undo"}
	def.Actions[2].OnFailure = definition.OnFailureCompensate
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `1`)
	b.fail(b.poll("act-c"), definition.ErrorValidation)
	comp := func() *Task {
		tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{"undo"}})
		require.NoError(t, err)
		require.Len(t, tasks, 1)
		return tasks[0]
	}
	first := comp()
	require.Equal(t, "b", first.ActionID)
	b.fail(first, definition.ErrorTransient)
	b.clock.Advance(time.Second)
	b.tick()
	again := comp()
	require.Equal(t, "b", again.ActionID)
	require.Equal(t, 2, again.EngineAttempt)
	b.fail(again, definition.ErrorTransient) // the hook's default policy: 2 attempts
	last := comp()
	require.Equal(t, "a", last.ActionID)
	b.complete(last, `null`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.CompensationPartial, snap.CompensationOutcome)
	require.Equal(t, runstate.CompFailed, snap.Step("b").CompStatus)
	require.Equal(t, runstate.CompSucceeded, snap.Step("a").CompStatus)
}

func scenarioOnFailureSkip_RecordsTheFailureThenSkipsDependants(t *testing.T, b *bundle) {
	def := dag()
	def.Actions[1].OnFailure = definition.OnFailureSkip // b
	def.Actions[1].Retry.MaxAttempts = 1
	run := b.submit(def)
	b.complete(b.pollAll("x", 1)[0], `1`)
	bc := b.pollAll("x", 10)
	b.fail(bc[0], definition.ErrorValidation)
	b.complete(bc[1], `1`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSkipped, snap.Step("b").Status)
	require.Equal(t, runstate.StepSkipped, snap.Step("d").Status, "d needs b")
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Contains(t, b.eventTypes(run.RunID), runstate.EvStepFailed)
}

// The run's failed-steps counter (docs/semantics.md#resync) counts every
// StepFailed: a step that failed and was then skipped — by on_failure skip,
// or by an operator's SKIP_STEP of a held step — still counts; a RETRY_STEP
// that reopens a failed step takes one away. The checkpoint and the log's
// projection agree (the bundle's end-of-test check compares them).
func scenarioFailedSteps_EveryStepFailedCountsAStepSkippedAfterItFailedToo(t *testing.T, b *bundle) {
	def := seq("a", "b", "c")
	def.Actions[0].OnFailure, def.Actions[0].Retry.MaxAttempts = definition.OnFailureSkip, 1
	def.Actions[1].OnFailure, def.Actions[1].Retry.MaxAttempts = definition.OnFailureHold, 1
	run := b.submit(def)
	b.fail(b.poll("act-a"), definition.ErrorValidation)
	require.Equal(t, runstate.StepSkipped, b.run(run.RunID).Step("a").Status)
	require.Equal(t, 1, b.run(run.RunID).FailedSteps(), "a failed, then on_failure skip skipped it")

	b.fail(b.poll("act-b"), definition.ErrorValidation)
	require.Equal(t, 2, b.run(run.RunID).FailedSteps())
	res, err := b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "b", Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, 1, res.Run.FailedSteps(), "RETRY_STEP reopened b")
	b.fail(b.poll("act-b"), definition.ErrorValidation)
	res, err = b.eng.SkipStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "b", Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, runstate.StepSkipped, res.Run.Step("b").Status)
	require.Equal(t, 2, res.Run.FailedSteps(), "b failed again, then the operator skipped it")

	b.complete(b.poll("act-c"), `1`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, 2, snap.FailedSteps())
	require.Equal(t, 2, countEvents(b, run.RunID, runstate.EvStepFailed)-countEvents(b, run.RunID, runstate.EvStepRetried))
}

func scenarioHold_BlocksUntilRetryStepOpensANewLogicalAttempt(t *testing.T, b *bundle) {
	def := seq("a", "b")
	def.Actions[0].OnFailure = definition.OnFailureHold
	def.Actions[0].Retry.MaxAttempts = 1
	run := b.submit(def)
	b.fail(b.poll("act-a"), definition.ErrorGovernance)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunBlocked, snap.Status)
	sid := "retry-1"
	res, err := b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "a", SignalID: &sid, Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, runstate.RunRunning, res.Run.Status)
	task := b.poll("act-a")
	require.Equal(t, 2, task.LogicalAttempt)
	require.Equal(t, 1, task.EngineAttempt)
	again, err := b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "a", SignalID: &sid, Actor: "op"})
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, res.Result, again.Result)
	b.complete(task, `1`)
	b.complete(b.poll("act-b"), `1`)
	snap = b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, runstate.AttemptFailed, snap.Step("a").Attempts[0].Outcome, "the failed attempt stays")
	require.Equal(t, 1, snap.Step("a").Attempts[0].LogicalAttempt)
}

func scenarioManual_WaitsWithAFreshTokenAndCompletesIdempotently(t *testing.T, b *bundle) {
	def := seq("approve", "b")
	def.Actions[0].Activity = ""
	def.Actions[0].Completion = definition.CompletionManual
	run := b.submit(def)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepWaitingManual, snap.Step("approve").Status)
	require.Equal(t, runstate.RunBlocked, snap.Status)
	token := snap.Step("approve").CompletionToken
	require.Len(t, token, 32)
	m := ManualCompletionParams{TenantID: tenant, RunID: run.RunID, ActionID: "approve", CompletionToken: token,
		Outcome: runstate.ManualSucceeded, ActorUserID: "bob", CompletedAt: b.clock.Now()}
	self := m
	self.ActorUserID = "alice"
	_, err := b.eng.CompleteManualAction(b.ctx, self)
	require.Equal(t, CodePermissionDenied, CodeOf(err), "separation of duties: the submitter may not complete it")
	wrong := m
	wrong.CompletionToken = "nope"
	_, err = b.eng.CompleteManualAction(b.ctx, wrong)
	require.Equal(t, CodeOperationConflict, CodeOf(err))
	first, err := b.eng.CompleteManualAction(b.ctx, m)
	require.NoError(t, err)
	require.False(t, first.Duplicate)
	require.Equal(t, runstate.RunRunning, b.run(run.RunID).Status)
	second, err := b.eng.CompleteManualAction(b.ctx, m)
	require.NoError(t, err, "a duplicate is recognised before the state check")
	require.True(t, second.Duplicate)
	require.Equal(t, first.Result, second.Result)
}

func scenarioSignal_WaitConsumesAcceptedSignalsInOrder(t *testing.T, b *bundle) {
	def := seq("w1", "w2")
	for i := range def.Actions {
		def.Actions[i].Activity = ""
		def.Actions[i].WaitForSignal = &definition.SignalWait{SignalName: "go"}
	}
	run := b.submit(def)
	for i, id := range []string{"s1", "s2"} {
		_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", SignalID: &id,
			Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		require.NoError(t, err)
	}
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.JSONEq(t, `{"i":0}`, string(snap.Step("w1").Output))
	require.JSONEq(t, `{"i":1}`, string(snap.Step("w2").Output))
}

func scenarioSignal_ConcurrentDuplicatesAcceptExactlyOnce(t *testing.T, b *bundle) {
	def := seq("w")
	def.Actions[0].Activity = ""
	def.Actions[0].WaitForSignal = &definition.SignalWait{SignalName: "go"}
	run := b.submit(def)
	id := "same:id"
	results := make([]*SignalResult, 64)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", SignalID: &id, Payload: json.RawMessage(`1`)})
			require.NoError(t, err)
			results[i] = r
		}()
	}
	wg.Wait()
	fresh := 0
	for _, r := range results {
		require.Equal(t, results[0].Result, r.Result)
		if !r.Duplicate {
			fresh++
		}
	}
	require.Equal(t, 1, fresh)
	accepted := 0
	for _, ty := range b.eventTypes(run.RunID) {
		if ty == runstate.EvSignalAccepted {
			accepted++
		}
	}
	require.Equal(t, 1, accepted)
}

func scenarioPause_DrainsInFlightThenResumeRunsOnlyWhatRemains(t *testing.T, b *bundle) {
	def := dag()
	run := b.submit(def)
	b.complete(b.pollAll("x", 1)[0], `1`)
	bc := b.pollAll("x", 1) // b claimed; c stays queued
	res, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, runstate.RunPaused, res.Run.Status)
	require.Equal(t, "DRAINING", res.Run.Substatus)
	require.Equal(t, "Workflow paused. Waiting for 1 in-flight tasks to complete.", res.Run.Message)
	require.Empty(t, b.pollAll("x", 10), "nothing newly starts while paused")
	b.complete(bc[0], `2`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunPaused, snap.Status)
	require.Empty(t, snap.Substatus)
	_, err = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	c := b.pollAll("x", 10)
	require.Equal(t, []string{"c"}, ids(c))
	b.complete(c[0], `3`)
	b.complete(b.pollAll("x", 10)[0], `4`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioCancel_IsRejectedWhileCompensatingAndLogged(t *testing.T, b *bundle) {
	def := seq("a", "b")
	def.Actions[0].Compensation = &definition.CompensationHook{Operation: "undo"}
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.fail(b.poll("act-b"), definition.ErrorValidation)
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.Equal(t, CodeIllegalTransition, CodeOf(err))
	_, err = b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.Equal(t, CodeIllegalTransition, CodeOf(err))
	require.Contains(t, b.eventTypes(run.RunID), runstate.EvSignalRejected)
	require.Equal(t, runstate.RunCompensating, b.run(run.RunID).Status)
}

func scenarioCancel_EndsTheRunAndRetiresItsTasks(t *testing.T, b *bundle) {
	run := b.submit(seq("a", "b"))
	task := b.poll("act-a")
	res, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op", Reason: "no longer needed"})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCancelled, res.Run.Status)
	require.Equal(t, "no longer needed", res.Run.Cancellation.Reason)
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: task.Token})
	require.NoError(t, err)
	require.True(t, hb.CancelRequested)
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1"})
	require.Equal(t, CodeTaskClaimLost, CodeOf(err), "cancellation wins over a completion not yet committed")
}

func scenarioTenancy_AnotherTenantsRunIsNotFound(t *testing.T, b *bundle) {
	run := b.submit(seq("a"))
	_, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: "tenant-b", RunID: run.RunID})
	require.Equal(t, CodeNotFound, CodeOf(err))
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: "tenant-b", WorkerID: "w", Activities: []string{"act-a"}})
	require.NoError(t, err)
	require.Empty(t, tasks)
}

func scenarioSubmit_RunRequestIDAnswersTheExistingRun(t *testing.T, b *bundle) {
	p := SubmitParams{TenantID: tenant, Definition: seq("a"), RunRequestID: "req-1", Start: true, SubmittedBy: "alice"}
	first, err := b.eng.SubmitRun(b.ctx, p)
	require.NoError(t, err)
	second, err := b.eng.SubmitRun(b.ctx, p)
	require.NoError(t, err)
	require.True(t, second.Existing)
	require.Equal(t, first.Run.RunID, second.Run.RunID)
	p.Definition = seq("a", "b")
	_, err = b.eng.SubmitRun(b.ctx, p)
	require.Equal(t, CodeOperationConflict, CodeOf(err))
}

func scenarioSubmit_WithoutStartStaysPendingUntilStartRun(t *testing.T, b *bundle) {
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a")})
	require.NoError(t, err)
	require.Equal(t, runstate.RunPending, res.Run.Status)
	b.pollNone("act-a")
	snap, err := b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: res.Run.RunID, Actor: "alice"})
	require.NoError(t, err)
	require.Equal(t, runstate.RunRunning, snap.Status)
	require.Equal(t, runstate.StepScheduled, snap.Step("a").Status, "SCHEDULED is persisted before a worker takes the task")
}

func scenarioSubmit_InvalidDefinitionNamesTheFieldAndWritesNothing(t *testing.T, b *bundle) {
	def := seq("a", "a")
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def})
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, CodeInvalidArgument, e.Code)
	require.Equal(t, "definition.actions[1].id", e.Violations[0].Field)
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
	require.NoError(t, err)
	require.Empty(t, list.Runs)
}

func scenarioWorkflowTimeout_FailsABlockedRun(t *testing.T, b *bundle) {
	def := seq("w")
	def.Actions[0].Activity = ""
	def.Actions[0].WaitForSignal = &definition.SignalWait{SignalName: "never"}
	def.Timeout = definition.Ms(60_000)
	run := b.submit(def)
	require.Equal(t, runstate.RunBlocked, b.run(run.RunID).Status)
	b.clock.Advance(time.Minute)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.True(t, snap.Error.WorkflowTimeout)
}

func scenarioDispatch_SharedOrderBreaksTiesByActionIDInASequence(t *testing.T, b *bundle) {
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "b", Order: 1, Activity: "x"},
		{ID: "a", Order: 1, Activity: "x"},
		{ID: "c", Order: 2, Activity: "x"},
	}}
	b.submit(def)
	var got []string
	for range 3 {
		tasks := b.pollAll("x", 10)
		require.Len(t, tasks, 1, "a sequence runs one action at a time")
		got = append(got, tasks[0].ActionID)
		b.complete(tasks[0], `null`)
	}
	require.Equal(t, []string{"a", "b", "c"}, got)
}

func scenarioYAMLDefinitions_AreDAGsWhoseRootsStartAtOnce(t *testing.T, b *bundle) {
	def, err := definition.LoadYAML([]byte("name: p\nsteps:\n  - name: one\n    agent: x\n  - name: two\n    agent: x\n"))
	require.NoError(t, err)
	def.Actions[0].Activity, def.Actions[1].Activity = "x", "x"
	b.submit(def)
	require.Equal(t, []string{"one", "two"}, ids(b.pollAll("x", 10)))
}

func scenarioHeartbeat_MissingHeartbeatTimesTheAttemptOut(t *testing.T, b *bundle) {
	def := seq("a")
	def.Actions[0].HeartbeatTimeout = definition.Ms(10_000)
	run := b.submit(def)
	task := b.poll("act-a")
	b.clock.Advance(8 * time.Second)
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: task.Token})
	require.NoError(t, err)
	require.False(t, hb.CancelRequested)
	b.clock.Advance(8 * time.Second) // 16 s after the claim, 8 s after the heartbeat
	b.tick()
	require.Len(t, b.run(run.RunID).Step("a").Attempts, 0, "a heartbeat in time keeps the claim")
	b.clock.Advance(3 * time.Second) // 11 s after the last heartbeat
	b.tick()
	snap := b.run(run.RunID)
	require.Len(t, snap.Step("a").Attempts, 1)
	require.Equal(t, runstate.AttemptTimedOut, snap.Step("a").Attempts[0].Outcome)
	hb, err = b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: task.Token})
	require.NoError(t, err)
	require.True(t, hb.CancelRequested, "the lost claim is told to stop")
}

func scenarioPause_DrainTimeoutForcesPausedAndLateCompletionIsApplied(t *testing.T, b *bundle) {
	def := seq("a", "b")
	def.Actions[0].Timeout = definition.Ms(3_600_000) // the attempt outlives the drain
	run := b.submit(def)
	task := b.poll("act-a")
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.clock.Advance(DefaultDrainTimeout)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunPaused, snap.Status)
	require.Empty(t, snap.Substatus)
	require.Equal(t, "Workflow paused. Drain timed out with 1 tasks still in flight.", snap.Message)
	b.complete(task, `1`) // the orphan completes after the drain timeout: accepted and applied (option A)
	snap = b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("a").Status)
	require.Equal(t, runstate.StepPending, snap.Step("b").Status, "nothing new starts while paused")
	_, err = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.complete(b.poll("act-b"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioSignal_ToATerminalRunIsRejected(t *testing.T, b *bundle) {
	run := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `1`)
	_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "late"})
	require.Equal(t, CodeIllegalTransition, CodeOf(err))
}

func scenarioSignal_InvalidIDsAreRejectedBeforeAnythingIsWritten(t *testing.T, b *bundle) {
	run := b.submit(seq("a"))
	before := b.run(run.RunID).LastEventSeq
	for _, id := range []string{"", string(make([]byte, 129))} {
		_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "s", SignalID: &id})
		require.Equal(t, CodeInvalidArgument, CodeOf(err))
	}
	require.Equal(t, before, b.run(run.RunID).LastEventSeq)
}

func scenarioSubmit_StartRacingRecoveryStartsTheRunOnce(t *testing.T, b *bundle) {
	def := seq("w")
	def.Actions[0].Activity, def.Actions[0].WaitForSignal = "", &definition.SignalWait{SignalName: "go"}
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, SubmittedBy: "alice"})
	require.NoError(t, err)
	// The recovery path triggers the run first (as the background loop may,
	// between a submission's two commits); the submission's own trigger follows.
	require.NoError(t, drive(b.ctx, b.eng, res.Run.RunID, triggerDecision((*decide.Decision).Trigger)))
	require.Equal(t, runstate.RunBlocked, b.run(res.Run.RunID).Status)
	snap, err := b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: res.Run.RunID, Actor: "alice"})
	require.NoError(t, err, "a second trigger is not an error")
	require.Equal(t, runstate.RunBlocked, snap.Status)
	require.Equal(t, 1, countEvents(b, res.Run.RunID, runstate.EvRunStarted))
}

func scenarioSignal_AcceptedBeforeItsWaitOpensStillUnblocksWhatFollows(t *testing.T, b *bundle) {
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "act-a"},
		{ID: "wait", Order: 2, WaitForSignal: &definition.SignalWait{SignalName: "go"}},
		{ID: "c", Order: 3, Activity: "act-c"},
	}}
	run := b.submit(def)
	task := b.poll("act-a")
	_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", Payload: json.RawMessage(`"early"`)})
	require.NoError(t, err)
	b.complete(task, `1`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("wait").Status, "the wait took the signal accepted before it opened")
	require.Equal(t, runstate.StepScheduled, snap.Step("c").Status, "and what follows it is dispatched in the same change")
	b.complete(b.poll("act-c"), `3`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
