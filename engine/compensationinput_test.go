package engine

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// The compensation-input scenarios (docs/semantics.md#compensation-input)
// run on every store backend, with the others (TestScenarios).
func init() {
	for name, s := range map[string]func(*testing.T, *bundle){
		"CompensationInput_IsEvaluatedWhenTheHookStartsAndRecordedInCompensationStarted": scenarioCompensationInput_IsEvaluatedWhenTheHookStartsAndRecordedInCompensationStarted,
		"CompensationInput_ARetryAndARestartedWeftdRunTheHookWithTheRecordedValue":       scenarioCompensationInput_ARetryAndARestartedWeftdRunTheHookWithTheRecordedValue,
		"CompensationInput_AnEvaluationErrorFailsTheHookValidationAndTheOthersRun":       scenarioCompensationInput_AnEvaluationErrorFailsTheHookValidationAndTheOthersRun,
		"CompensationInput_ARerunsCompensationIsEvaluatedOverTheRerunsOutput":            scenarioCompensationInput_ARerunsCompensationIsEvaluatedOverTheRerunsOutput,
		"CompensationInput_AnItemsHookReadsItsItemIndexAndOwnOutput":                     scenarioCompensationInput_AnItemsHookReadsItsItemIndexAndOwnOutput,
	} {
		scenarios[name] = s
	}
}

// refundable is a sequence reserve → charge → ship whose ship compensates
// on failure; charge's refund reads its own output, reserve's output, the
// run's input and id, and reserve's release has a plain input.
func refundable() definition.Definition {
	d := seq("reserve", "charge", "ship")
	d.Actions[0].Compensation = &definition.CompensationHook{Operation: "release", Input: json.RawMessage(`{"why":"rollback"}`)}
	d.Actions[1].Compensation = &definition.CompensationHook{Operation: "refund", Input: json.RawMessage(
		`{"charge":"${{ steps.charge.output.id }}","hold":"${{ steps.reserve.output.hold }}","order":"${{ input.order }}","run":"${{ run.id }}","lit":"$${{ kept }}","n":[1]}`)}
	d.Actions[2].OnFailure = definition.OnFailureCompensate
	d.Actions[2].Retry.MaxAttempts = 1
	return d
}

// compensationTask claims one hook task of op.
func (b *bundle) hookTask(op string) *Task {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{op}})
	require.NoError(b.t, err)
	require.Len(b.t, tasks, 1, "expected one %s task", op)
	return tasks[0]
}

// failShip runs reserve and charge with the given outputs, then fails ship.
func (b *bundle) failShip(hold, charge string) {
	b.t.Helper()
	b.complete(b.poll("act-reserve"), `{"hold":"`+hold+`"}`)
	b.complete(b.poll("act-charge"), `{"id":"`+charge+`"}`)
	b.fail(b.poll("act-ship"), definition.ErrorValidation)
}

func scenarioCompensationInput_IsEvaluatedWhenTheHookStartsAndRecordedInCompensationStarted(t *testing.T, b *bundle) {
	run := b.submitInput(refundable(), `{"order":"o-7"}`)
	b.failShip("h-1", "ch-1")
	want := `{"charge":"ch-1","hold":"h-1","order":"o-7","run":"` + run.RunID + `","lit":"${{ kept }}","n":[1]}`
	refund := b.hookTask("refund")
	require.Equal(t, "charge", refund.ActionID)
	require.JSONEq(t, want, string(refund.Input), "the hook's task carries the value")
	started := b.stepEvents(run.RunID, "charge", runstate.EvCompensationStarted)
	require.Len(t, started, 1)
	require.JSONEq(t, want, string(started[0].Data.Input), "CompensationStarted records the value")
	require.JSONEq(t, want, string(b.run(run.RunID).Step("charge").CompInput), "the step keeps it")
	b.complete(refund, `null`)
	release := b.hookTask("release")
	require.JSONEq(t, `{"why":"rollback"}`, string(release.Input), "an input without an expression is passed as written")
	require.Empty(t, b.stepEvents(run.RunID, "reserve", runstate.EvCompensationStarted)[0].Data.Input, "and records nothing")
	b.complete(release, `null`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.CompensationRolledBack, snap.CompensationOutcome)
}

func scenarioCompensationInput_ARetryAndARestartedWeftdRunTheHookWithTheRecordedValue(t *testing.T, b *bundle) {
	run := b.submitInput(refundable(), `{"order":"o-7"}`)
	b.failShip("h-1", "ch-1")
	first := b.hookTask("refund")
	b.fail(first, definition.ErrorTransient)
	// Another weftd on the same store, with nothing cached: the retry it
	// hands out comes from the checkpoint.
	other := setupWith(t, b.store)
	other.clock.Set(b.clock.Now().Add(time.Minute))
	other.tick()
	second := other.hookTask("refund")
	require.Equal(t, 2, second.EngineAttempt)
	require.JSONEq(t, string(first.Input), string(second.Input))
	require.Len(t, other.stepEvents(run.RunID, "charge", runstate.EvCompensationStarted), 1, "the value is evaluated once")
}

func scenarioCompensationInput_AnEvaluationErrorFailsTheHookValidationAndTheOthersRun(t *testing.T, b *bundle) {
	bad := refundable()
	bad.Actions[1].Compensation.Input = json.RawMessage(`{"charge":"${{ steps.ship.output.id }}"}`)
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: bad, Start: true})
	var fe *Error
	require.ErrorAs(t, err, &fe, "what can be known at submit is refused there")
	require.Equal(t, CodeInvalidArgument, fe.Code)
	require.Equal(t, "definition.actions[1].compensation.input.charge", fe.Violations[0].Field)
	run := b.submitInput(refundable(), `{"order":"o-7"}`)
	b.complete(b.poll("act-reserve"), `{"hold":"h-1"}`)
	b.complete(b.poll("act-charge"), `{"amount":"secret-value"}`) // no id
	b.fail(b.poll("act-ship"), definition.ErrorValidation)
	release := b.hookTask("release") // the failed hook did not stop the others
	b.complete(release, `null`)
	b.pollNoneCompensation("refund")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.CompensationPartial, snap.CompensationOutcome)
	st := snap.Step("charge")
	require.Equal(t, runstate.CompFailed, st.CompStatus)
	require.Equal(t, definition.ErrorValidation, st.CompError.Class)
	require.Equal(t, "expression", st.CompError.Code)
	require.Contains(t, st.CompError.Message, "steps[1].compensation.input.charge")
	require.NotContains(t, st.CompError.Message, "secret-value", "no payload in an error")
	require.Len(t, b.stepEvents(run.RunID, "charge", runstate.EvCompensationFailed), 1)
}

func scenarioCompensationInput_ARerunsCompensationIsEvaluatedOverTheRerunsOutput(t *testing.T, b *bundle) {
	run := b.submitInput(refundable(), `{"order":"o-7"}`)
	b.failShip("h-1", "ch-1")
	first := b.hookTask("refund")
	b.complete(first, `null`)
	b.complete(b.hookTask("release"), `null`)
	require.Equal(t, runstate.RunFailed, b.run(run.RunID).Status)
	_, err := b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "reserve", Actor: "op"})
	require.NoError(t, err)
	require.Empty(t, b.run(run.RunID).Step("charge").CompInput, "a rerun sets the compensation aside with the step's attempt")
	b.failShip("h-2", "ch-2")
	again := b.hookTask("refund")
	require.JSONEq(t, `{"charge":"ch-2","hold":"h-2","order":"o-7","run":"`+run.RunID+`","lit":"${{ kept }}","n":[1]}`, string(again.Input),
		"the reopened step's hook undoes what the rerun did")
	require.Len(t, b.stepEvents(run.RunID, "charge", runstate.EvCompensationStarted), 2)
}

func (b *bundle) pollNoneCompensation(op string) {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{op}})
	require.NoError(b.t, err)
	require.Empty(b.t, tasks)
}

func scenarioCompensationInput_AnItemsHookReadsItsItemIndexAndOwnOutput(t *testing.T, b *bundle) {
	def := fanOut("input.lines", 10)
	def.Actions[1].Compensation = &definition.CompensationHook{Operation: "unship", Input: json.RawMessage(
		`{"sku":"${{ item.sku }}","at":"${{ index }}","parcel":"${{ steps.ship.output.parcel }}","order":"${{ input.order }}"}`)}
	def.Actions[2].OnFailure = definition.OnFailureCompensate
	def.Actions[2].Retry.MaxAttempts = 1
	run := b.submitInput(def, `{"order":"o-7","lines":[{"sku":"A"},{"sku":"B"}]}`)
	b.complete(b.poll("act-a"), `null`)
	for _, task := range b.pollAll("act-ship", 10) {
		var in struct {
			At int `json:"at"`
		}
		require.NoError(t, json.Unmarshal(task.Input, &in))
		b.complete(task, `{"parcel":"p-`+strconv.Itoa(in.At)+`"}`)
	}
	b.fail(b.poll("act-b"), definition.ErrorValidation)
	got := map[string]string{}
	for range 2 {
		task := b.hookTask("unship")
		got[task.ActionID] = string(task.Input)
		b.complete(task, `null`)
	}
	require.JSONEq(t, `{"sku":"A","at":0,"parcel":"p-0","order":"o-7"}`, got["ship[0]"], "each item's hook undoes that item")
	require.JSONEq(t, `{"sku":"B","at":1,"parcel":"p-1","order":"o-7"}`, got["ship[1]"])
	require.Len(t, b.stepEvents(run.RunID, "ship[1]", runstate.EvCompensationStarted), 1)
	require.Equal(t, runstate.CompensationRolledBack, b.run(run.RunID).CompensationOutcome)
}
