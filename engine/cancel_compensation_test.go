package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// compensationTask claims the one compensation hook that is ready.
func (b *bundle) compensationTask() *Task {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{"undo"}, MaxTasks: 5})
	require.NoError(b.t, err)
	require.Len(b.t, tasks, 1, "compensation runs one hook at a time")
	return tasks[0]
}

// runEvents lists a run's events.
func (b *bundle) runEvents(runID string) []runstate.Event {
	b.t.Helper()
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(b.t, err)
	return res.Events
}

// eventOf answers the run's only event of type typ.
func (b *bundle) eventOf(runID, typ string) runstate.Event {
	b.t.Helper()
	var found []runstate.Event
	for _, ev := range b.runEvents(runID) {
		if ev.Type == typ {
			found = append(found, ev)
		}
	}
	require.Len(b.t, found, 1, "events of type %s", typ)
	return found[0]
}

// cancelCompensate cancels a run asking for compensation.
func (b *bundle) cancelCompensate(runID string) *ControlResult {
	b.t.Helper()
	res, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op", Reason: "customer withdrew", Compensate: true})
	require.NoError(b.t, err)
	return res
}

func scenarioCancelCompensate_UndoesSucceededStepsInReverseCompletionOrderThenEndsCancelled(t *testing.T, b *bundle) {
	def := dag() // b and c need a; d needs both
	def.Actions = append(def.Actions, definition.Action{ID: "e", Order: 5, Activity: "x", DependsOn: []string{"d"}})
	for i := range 4 {
		def.Actions[i].Compensation = &definition.CompensationHook{Operation: "undo"}
	}
	run := b.submit(def)
	b.complete(b.pollAll("x", 1)[0], `1`) // a
	bc := b.pollAll("x", 2)
	require.Equal(t, []string{"b", "c"}, ids(bc))
	b.complete(bc[1], `1`) // c completes before b: completion order a, c, b
	b.complete(bc[0], `1`)
	inFlight := b.pollAll("x", 1)[0]
	require.Equal(t, "d", inFlight.ActionID)

	res := b.cancelCompensate(run.RunID)
	require.Equal(t, runstate.RunCompensating, res.Run.Status)
	require.True(t, res.Run.Cancellation.Compensate)
	require.Equal(t, runstate.StepCancelled, res.Run.Step("d").Status, "in-flight work is cancelled as without compensation")
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: inFlight.Token})
	require.NoError(t, err)
	require.True(t, hb.CancelRequested)
	require.Equal(t, runstate.StepPending, res.Run.Step("e").Status)
	b.pollNone("x")

	_, err = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op", Compensate: true})
	require.Equal(t, CodeIllegalTransition, CodeOf(err), "a second cancel is refused while COMPENSATING")
	_, err = b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.Equal(t, CodeIllegalTransition, CodeOf(err), "pause is refused while COMPENSATING")

	var order []string
	for range 3 {
		task := b.compensationTask()
		require.Equal(t, run.RunID+":"+task.ActionID+":compensate", task.IdempotencyKey)
		order = append(order, task.ActionID)
		b.complete(task, `null`)
	}
	require.Equal(t, []string{"b", "c", "a"}, order, "reverse completion order, not definition order")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCancelled, snap.Status)
	require.Equal(t, runstate.CompensationRolledBack, snap.CompensationOutcome)
	require.Nil(t, snap.Error, "a cancelled run has no run error")
	require.NotContains(t, b.eventTypes(run.RunID), runstate.EvRunFailed)

	accepted := b.eventOf(run.RunID, runstate.EvSignalAccepted)
	require.Equal(t, runstate.SignalCancel, accepted.Data.SignalKind)
	require.True(t, accepted.Data.Compensate, "the cancel's acceptance records that compensation was asked")
	compensating := b.eventOf(run.RunID, runstate.EvRunCompensating)
	require.True(t, compensating.Data.CancelRequested)
	require.Equal(t, []string{"b", "c", "a"}, compensating.Data.CompensationOrder)
	cancelled := b.eventOf(run.RunID, runstate.EvRunCancelled)
	require.Equal(t, runstate.CompensationRolledBack, cancelled.Data.CompensationOutcome)
	require.True(t, cancelled.Data.Cancellation.Compensate)
	require.Equal(t, "customer withdrew", cancelled.Data.Cancellation.Reason)
}

func scenarioCancelCompensate_FailedHookIsBestEffortAndEndsPartial(t *testing.T, b *bundle) {
	def := seq("a", "b", "c")
	def.Actions[0].Compensation = &definition.CompensationHook{Operation: "undo"}
	def.Actions[1].Compensation = &definition.CompensationHook{Operation: "undo"}
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `1`)
	b.cancelCompensate(run.RunID)
	first := b.compensationTask()
	require.Equal(t, "b", first.ActionID)
	b.fail(first, definition.ErrorTransient)
	b.clock.Advance(time.Second)
	b.tick()
	again := b.compensationTask()
	require.Equal(t, "b", again.ActionID)
	require.Equal(t, 2, again.EngineAttempt, "the hook's retry defaults apply as on failure")
	b.fail(again, definition.ErrorTransient) // the hook's default policy: 2 attempts
	last := b.compensationTask()
	require.Equal(t, "a", last.ActionID, "a failed hook never stops the others")
	b.complete(last, `null`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCancelled, snap.Status)
	require.Equal(t, runstate.CompensationPartial, snap.CompensationOutcome)
	require.Equal(t, runstate.CompFailed, snap.Step("b").CompStatus)
	require.Equal(t, runstate.CompSucceeded, snap.Step("a").CompStatus)
	require.Equal(t, runstate.StepCancelled, snap.Step("c").Status)
	require.Equal(t, runstate.CompensationPartial, b.eventOf(run.RunID, runstate.EvRunCancelled).Data.CompensationOutcome)
}

func scenarioCancelCompensate_NothingToCompensateEndsCancelledWithNoOutcome(t *testing.T, b *bundle) {
	def := seq("a", "b")
	def.Actions[1].Compensation = &definition.CompensationHook{Operation: "undo"} // b never succeeds
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`) // a succeeded but has no hook
	res := b.cancelCompensate(run.RunID)
	require.Equal(t, runstate.RunCancelled, res.Run.Status)
	require.Empty(t, res.Run.CompensationOutcome)
	require.True(t, res.Run.Cancellation.Compensate)
	require.NotContains(t, b.eventTypes(run.RunID), runstate.EvRunCompensating)
	require.Empty(t, b.eventOf(run.RunID, runstate.EvRunCancelled).Data.CompensationOutcome)
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{"undo"}})
	require.NoError(t, err)
	require.Empty(t, tasks)
}

func scenarioCancel_WithoutCompensateLeavesSucceededStepsAlone(t *testing.T, b *bundle) {
	def := seq("a", "b")
	def.Actions[0].Compensation = &definition.CompensationHook{Operation: "undo"}
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	res, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCancelled, res.Run.Status)
	require.Empty(t, res.Run.CompensationOutcome)
	require.Empty(t, res.Run.Step("a").CompStatus)
	require.False(t, b.eventOf(run.RunID, runstate.EvSignalAccepted).Data.Compensate)
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{"undo"}})
	require.NoError(t, err)
	require.Empty(t, tasks)
}

// cancelCompensationScenarios join the scenarios every store backend runs.
var cancelCompensationScenarios = map[string]func(*testing.T, *bundle){
	"Cancel_WithoutCompensateLeavesSucceededStepsAlone":                              scenarioCancel_WithoutCompensateLeavesSucceededStepsAlone,
	"CancelCompensate_UndoesSucceededStepsInReverseCompletionOrderThenEndsCancelled": scenarioCancelCompensate_UndoesSucceededStepsInReverseCompletionOrderThenEndsCancelled,
	"CancelCompensate_FailedHookIsBestEffortAndEndsPartial":                          scenarioCancelCompensate_FailedHookIsBestEffortAndEndsPartial,
	"CancelCompensate_NothingToCompensateEndsCancelledWithNoOutcome":                 scenarioCancelCompensate_NothingToCompensateEndsCancelledWithNoOutcome,
}

func init() {
	for name, fn := range cancelCompensationScenarios {
		scenarios[name] = fn
	}
}
