package engine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// stepScenarios are the rules of a step's expressions and kinds
// (docs/semantics.md#input-expressions, #when, #repeat, #sleep), each run on
// every store backend like scenarios.
var stepScenarios = map[string]func(*testing.T, *bundle){
	"Input_ExpressionsAreEvaluatedWhenTheTaskIsCreatedAndRecordedInStepScheduled": scenarioInput_ExpressionsAreEvaluatedWhenTheTaskIsCreatedAndRecordedInStepScheduled,
	"Input_ARetryRunsWithTheRecordedValue":                                        scenarioInput_ARetryRunsWithTheRecordedValue,
	"Input_ARerunKeepsTheRecordedValue":                                           scenarioInput_ARerunKeepsTheRecordedValue,
	"Input_AnEvaluationErrorFailsTheStepValidationNamingItsPath":                  scenarioInput_AnEvaluationErrorFailsTheStepValidationNamingItsPath,
	"When_TrueRunsTheStep":                                                        scenarioWhen_TrueRunsTheStep,
	"When_FalseSkipsWithReasonConditionAndASequenceGoesOn":                        scenarioWhen_FalseSkipsWithReasonConditionAndASequenceGoesOn,
	"When_FalseInADAGSkipsItsDependantsAsAfterAnySkip":                            scenarioWhen_FalseInADAGSkipsItsDependantsAsAfterAnySkip,
	"When_AnEvaluationErrorFailsTheStepValidationNamingItsPath":                   scenarioWhen_AnEvaluationErrorFailsTheStepValidationNamingItsPath,
	"Repeat_RunsAgainEachIterationANewLogicalAttemptUntilTheConditionHolds":       scenarioRepeat_RunsAgainEachIterationANewLogicalAttemptUntilTheConditionHolds,
	"Repeat_HittingMaxIterationsFailsTheStep":                                     scenarioRepeat_HittingMaxIterationsFailsTheStep,
	"Sleep_CompletesWhenTheTimeComesFromADurableTimer":                            scenarioSleep_CompletesWhenTheTimeComesFromADurableTimer,
	"Sleep_SleepUntilWaitsForTheTimeItsExpressionAnswers":                         scenarioSleep_SleepUntilWaitsForTheTimeItsExpressionAnswers,
	"Sleep_APausedRunResumesItsSleepWhereItWas":                                   scenarioSleep_APausedRunResumesItsSleepWhereItWas,
	"Sleep_ADueSleepOfAPausedRunCompletesWhenItResumes":                           scenarioSleep_ADueSleepOfAPausedRunCompletesWhenItResumes,
	"Sleep_ACancelledSleepNeverFires":                                             scenarioSleep_ACancelledSleepNeverFires,
	"Sleep_AFailFastCancelsASleepLikeAnUnstartedTask":                             scenarioSleep_AFailFastCancelsASleepLikeAnUnstartedTask,
	"Sleep_ARerunSleepsAgainFromItsOwnTime":                                       scenarioSleep_ARerunSleepsAgainFromItsOwnTime,
	"Repeat_AFailedAttemptIsRetriedWithinItsIteration":                            scenarioRepeat_AFailedAttemptIsRetriedWithinItsIteration,
	"Repeat_AnUntilThatCannotBeEvaluatedFailsTheStepValidation":                   scenarioRepeat_AnUntilThatCannotBeEvaluatedFailsTheStepValidation,
	"When_IsEvaluatedAgainWhenARerunReopensTheStep":                               scenarioWhen_IsEvaluatedAgainWhenARerunReopensTheStep,
	"Repeat_ASubWorkflowStepStartsANewChildEachIteration":                         scenarioRepeat_ASubWorkflowStepStartsANewChildEachIteration,
}

func TestStepScenarios(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			for name, scenario := range stepScenarios {
				t.Run(name, func(t *testing.T) {
					scenario(t, setupWith(t, backend.open(t)))
				})
			}
		})
	}
}

// submitInput submits def with the run input in.
func (b *bundle) submitInput(def definition.Definition, in string) *runstate.Snapshot {
	b.t.Helper()
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice", Input: json.RawMessage(in)})
	require.NoError(b.t, err)
	return res.Run
}

// stepEvents answers the events of one step of the run, of type typ.
func (b *bundle) stepEvents(runID, stepID, typ string) []runstate.Event {
	b.t.Helper()
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(b.t, err)
	var out []runstate.Event
	for _, ev := range res.Events {
		if ev.StepID == stepID && ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// templated is a sequence a → b whose b reads a's output and the run's input.
func templated() definition.Definition {
	d := seq("a", "b")
	d.Actions[1].Input = json.RawMessage(`{"total":"${{ steps.a.output.n * 2 }}","who":"${{ input.user }}","run":"${{ run.id }}","lit":"$${{ kept }}","n":[1,"x"]}`)
	return d
}

func scenarioInput_ExpressionsAreEvaluatedWhenTheTaskIsCreatedAndRecordedInStepScheduled(t *testing.T, b *bundle) {
	run := b.submitInput(templated(), `{"user":"ada"}`)
	b.complete(b.poll("act-a"), `{"n":21}`)
	task := b.poll("act-b")
	want := `{"total":42,"who":"ada","run":"` + run.RunID + `","lit":"${{ kept }}","n":[1,"x"]}`
	require.JSONEq(t, want, string(task.Input))
	sched := b.stepEvents(run.RunID, "b", runstate.EvStepScheduled)
	require.Len(t, sched, 1)
	require.JSONEq(t, want, string(sched[0].Data.Input), "StepScheduled records the value")
	require.JSONEq(t, want, string(b.run(run.RunID).Step("b").Input), "GetRun shows it")
	require.Empty(t, b.stepEvents(run.RunID, "a", runstate.EvStepScheduled)[0].Data.Input, "an input without an expression records nothing")
	b.complete(task, `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioInput_ARetryRunsWithTheRecordedValue(t *testing.T, b *bundle) {
	run := b.submitInput(templated(), `{"user":"ada"}`)
	b.complete(b.poll("act-a"), `{"n":1}`)
	first := b.poll("act-b")
	b.fail(first, definition.ErrorTransient)
	b.clock.Advance(definition.DefaultInitialBackoff.D())
	b.tick()
	second := b.poll("act-b")
	require.Equal(t, 2, second.EngineAttempt)
	require.JSONEq(t, string(first.Input), string(second.Input))
	require.Len(t, b.stepEvents(run.RunID, "b", runstate.EvStepScheduled), 1, "the value is evaluated once per logical attempt")
}

func scenarioInput_ARerunKeepsTheRecordedValue(t *testing.T, b *bundle) {
	run := b.submitInput(templated(), `{"user":"ada"}`)
	b.complete(b.poll("act-a"), `{"n":21}`)
	first := b.poll("act-b")
	b.complete(first, `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	_, err := b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "a", Actor: "op"})
	require.NoError(t, err)
	b.complete(b.poll("act-a"), `{"n":5}`)
	again := b.poll("act-b")
	require.Equal(t, 2, again.LogicalAttempt)
	require.JSONEq(t, string(first.Input), string(again.Input), "a rerun runs the step with the value recorded for it (docs/semantics.md#input-expressions)")
	b.complete(again, `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioInput_AnEvaluationErrorFailsTheStepValidationNamingItsPath(t *testing.T, b *bundle) {
	d := templated()
	d.Actions[1].OnFailure = definition.OnFailureAbort
	run := b.submitInput(d, `{"user":"ada"}`)
	b.complete(b.poll("act-a"), `{"m":"secret-value"}`)
	b.pollNone("act-b")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	st := snap.Step("b")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorValidation, st.Error.Class)
	require.Contains(t, st.Error.Message, "steps[1].input.total")
	require.NotContains(t, st.Error.Message, "secret-value", "no payload in an error")
}

// conditional is a sequence a → b → c whose b runs when input.amount > 0.
func conditional() definition.Definition {
	d := seq("a", "b", "c")
	d.Actions[1].When = "input.amount > 0 && steps.a.output.ok"
	return d
}

func scenarioWhen_TrueRunsTheStep(t *testing.T, b *bundle) {
	run := b.submitInput(conditional(), `{"amount":5}`)
	b.complete(b.poll("act-a"), `{"ok":true}`)
	b.complete(b.poll("act-b"), `null`)
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Empty(t, b.stepEvents(run.RunID, "b", runstate.EvStepSkipped))
}

func scenarioWhen_FalseSkipsWithReasonConditionAndASequenceGoesOn(t *testing.T, b *bundle) {
	run := b.submitInput(conditional(), `{"amount":0}`)
	b.complete(b.poll("act-a"), `{"ok":true}`)
	b.pollNone("act-b")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSkipped, snap.Step("b").Status)
	require.Equal(t, "condition", snap.Step("b").Reason)
	skipped := b.stepEvents(run.RunID, "b", runstate.EvStepSkipped)
	require.Len(t, skipped, 1)
	require.Equal(t, "condition", skipped[0].Data.Reason)
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioWhen_FalseInADAGSkipsItsDependantsAsAfterAnySkip(t *testing.T, b *bundle) {
	d := dag()
	d.Actions[1].When = "steps.a.output > 1" // b
	run := b.submitInput(d, `{}`)
	b.complete(b.poll("x"), `1`)
	c := b.pollAll("x", 10)
	require.Equal(t, []string{"c"}, ids(c), "b is skipped; c, which does not need it, runs")
	b.complete(c[0], `null`)
	snap := b.run(run.RunID)
	require.Equal(t, "condition", snap.Step("b").Reason)
	require.Equal(t, runstate.StepSkipped, snap.Step("d").Status)
	require.Equal(t, "dependency b was SKIPPED", snap.Step("d").Reason)
	require.Equal(t, runstate.RunCompleted, snap.Status)
}

func scenarioWhen_AnEvaluationErrorFailsTheStepValidationNamingItsPath(t *testing.T, b *bundle) {
	d := conditional()
	d.Actions[1].OnFailure = definition.OnFailureAbort
	run := b.submitInput(d, `{"amount":3}`)
	b.complete(b.poll("act-a"), `{}`) // no ok: the expression cannot be evaluated
	snap := b.run(run.RunID)
	st := snap.Step("b")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorValidation, st.Error.Class)
	require.Contains(t, st.Error.Message, "steps[1].when")
	require.Equal(t, runstate.RunFailed, snap.Status)
	b.pollNone("act-b", "act-c")
}

// A mistake in an expression is refused at submit, invalid_argument, naming
// the expression's path; nothing is stored.
func TestSubmit_AnExpressionMistakeIsRefusedNamingItsPath(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*definition.Definition)
		field string
	}{
		{"when", func(d *definition.Definition) { d.Actions[1].When = "inptu.amount > 0" }, "definition.actions[1].when"},
		{"input", func(d *definition.Definition) { d.Actions[1].Input = json.RawMessage(`{"x":"${{ steps.b.output }}"}`) }, "definition.actions[1].input.x"},
		{"sleepUntil", func(d *definition.Definition) {
			d.Actions[1] = definition.Action{ID: "b", Order: 2, SleepUntil: "1 + 1"}
		}, "definition.actions[1].sleep_until"},
		{"repeat.until", func(d *definition.Definition) {
			d.Actions[1].Repeat = &definition.Repeat{Until: "steps.b.output.done ||", MaxIterations: 2}
		}, "definition.actions[1].repeat.until"},
		{"forEach", func(d *definition.Definition) { d.Actions[1].ForEach = "steps.a.output.n + 1" }, "definition.actions[1].for_each"},
		{"forEach with sleep", func(d *definition.Definition) {
			d.Actions[1] = definition.Action{ID: "b", Order: 2, Sleep: definition.Ms(1000), ForEach: "[1]"}
		}, "definition.actions[1].for_each"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			d := seq("a", "b")
			c.edit(&d)
			_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true})
			require.Equal(t, CodeInvalidArgument, CodeOf(err), "%v", err)
			require.Contains(t, err.Error(), c.field)
		})
	}
}

// polling is a one-step run that repeats until its output says done.
func polling(max int) definition.Definition {
	d := seq("a")
	d.Actions[0].Repeat = &definition.Repeat{Until: "steps.a.output.done", MaxIterations: max}
	d.ResultActionID = "a"
	return d
}

func scenarioRepeat_RunsAgainEachIterationANewLogicalAttemptUntilTheConditionHolds(t *testing.T, b *bundle) {
	run := b.submit(polling(5))
	first := b.poll("act-a")
	require.Equal(t, 1, first.LogicalAttempt)
	require.Equal(t, 1, b.run(run.RunID).Step("a").Iteration)
	b.complete(first, `{"done":false,"n":1}`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunRunning, snap.Status)
	require.Equal(t, 2, snap.Step("a").Iteration)
	second := b.poll("act-a")
	require.Equal(t, 2, second.LogicalAttempt, "each iteration is a new logical attempt")
	require.JSONEq(t, `{"done":false,"n":1}`, string(second.UpstreamOutputs["a"]), "the previous iteration's output is visible")
	b.complete(second, `{"done":false,"n":2}`)
	third := b.poll("act-a")
	b.complete(third, `{"done":true,"n":3}`)
	snap = b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, runstate.StepSucceeded, snap.Step("a").Status)
	require.JSONEq(t, `{"done":true,"n":3}`, string(snap.Step("a").Output), "the checkpoint keeps the last iteration's output")
	require.Equal(t, 3, snap.Step("a").LogicalAttempt)
	require.Len(t, snap.Step("a").Attempts, 3)
	iterated := b.stepEvents(run.RunID, "a", runstate.EvStepIterated)
	require.Len(t, iterated, 2, "the log keeps every iteration")
	for i, ev := range iterated {
		require.Equal(t, i+1, ev.Data.Iteration)
		require.Equal(t, i+1, ev.LogicalAttempt)
		require.JSONEq(t, `{"done":false,"n":`+string(rune('1'+i))+`}`, string(ev.Data.Output))
	}
	require.JSONEq(t, `{"done":true,"n":3}`, string(snap.RunResult()))
}

func scenarioRepeat_HittingMaxIterationsFailsTheStep(t *testing.T, b *bundle) {
	d := polling(2)
	d.Actions[0].OnFailure = definition.OnFailureAbort
	run := b.submit(d)
	b.complete(b.poll("act-a"), `{"done":false}`)
	b.complete(b.poll("act-a"), `{"done":false}`)
	b.pollNone("act-a")
	snap := b.run(run.RunID)
	st := snap.Step("a")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, "repeat_max_iterations", st.Error.Code)
	require.Contains(t, st.Error.Message, "after 2 iterations")
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Len(t, b.stepEvents(run.RunID, "a", runstate.EvStepIterated), 1)
}

// napping is a sequence a → nap (a 10-minute sleep) → c.
func napping() definition.Definition {
	d := seq("a", "nap", "c")
	d.Actions[1] = definition.Action{ID: "nap", Order: 2, Sleep: definition.Duration(10 * time.Minute)}
	return d
}

func scenarioSleep_CompletesWhenTheTimeComesFromADurableTimer(t *testing.T, b *bundle) {
	run := b.submit(napping())
	b.complete(b.poll("act-a"), `null`)
	wake := b.clock.Now().Add(10 * time.Minute)
	st := b.run(run.RunID).Step("nap")
	require.Equal(t, runstate.StepRunning, st.Status)
	require.True(t, wake.Equal(st.WakeAt), "GetRun shows the wake time: %v", st.WakeAt)
	sleeping := b.stepEvents(run.RunID, "nap", runstate.EvStepSleeping)
	require.Len(t, sleeping, 1)
	require.True(t, wake.Equal(sleeping[0].Data.WakeAt))
	b.clock.Advance(10*time.Minute - time.Millisecond)
	b.tick()
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("nap").Status)
	b.pollNone("act-c")
	b.clock.Advance(time.Millisecond)
	b.tick()
	require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Step("nap").Status)
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Len(t, b.stepEvents(run.RunID, "nap", runstate.EvStepCompleted), 1, "the sleep fires once")
}

func scenarioSleep_SleepUntilWaitsForTheTimeItsExpressionAnswers(t *testing.T, b *bundle) {
	d := napping()
	d.Actions[1] = definition.Action{ID: "nap", Order: 2, SleepUntil: "${{ timestamp(input.at) + duration('1h') }}"}
	at := b.clock.Now().Add(time.Hour).UTC()
	run := b.submitInput(d, `{"at":"`+at.Format(time.RFC3339Nano)+`"}`)
	b.complete(b.poll("act-a"), `null`)
	require.True(t, at.Add(time.Hour).Equal(b.run(run.RunID).Step("nap").WakeAt))
	b.clock.Advance(2*time.Hour - time.Second)
	b.tick()
	b.pollNone("act-c")
	b.clock.Advance(2 * time.Second)
	b.tick()
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func (b *bundle) pause(runID string) {
	b.t.Helper()
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op"})
	require.NoError(b.t, err)
}

func (b *bundle) resume(runID string) {
	b.t.Helper()
	_, err := b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op"})
	require.NoError(b.t, err)
}

func scenarioSleep_APausedRunResumesItsSleepWhereItWas(t *testing.T, b *bundle) {
	run := b.submit(napping())
	b.complete(b.poll("act-a"), `null`)
	wake := b.run(run.RunID).Step("nap").WakeAt
	b.clock.Advance(3 * time.Minute)
	b.pause(run.RunID)
	b.clock.Advance(time.Minute)
	b.resume(run.RunID)
	st := b.run(run.RunID).Step("nap")
	require.Equal(t, runstate.StepRunning, st.Status)
	require.True(t, wake.Equal(st.WakeAt), "the wake time is kept across the pause")
	b.clock.Advance(6*time.Minute - time.Millisecond)
	b.tick()
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("nap").Status)
	b.clock.Advance(time.Millisecond)
	b.tick()
	require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Step("nap").Status)
	b.complete(b.poll("act-c"), `null`)
}

func scenarioSleep_ADueSleepOfAPausedRunCompletesWhenItResumes(t *testing.T, b *bundle) {
	run := b.submit(napping())
	b.complete(b.poll("act-a"), `null`)
	b.pause(run.RunID)
	b.clock.Advance(time.Hour)
	b.tick() // the timer fires while the run is paused: the step keeps sleeping
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("nap").Status)
	b.pollNone("act-c")
	b.resume(run.RunID)
	require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Step("nap").Status)
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Len(t, b.stepEvents(run.RunID, "nap", runstate.EvStepCompleted), 1)
}

func scenarioSleep_ACancelledSleepNeverFires(t *testing.T, b *bundle) {
	run := b.submit(napping())
	b.complete(b.poll("act-a"), `null`)
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, runstate.StepCancelled, b.run(run.RunID).Step("nap").Status)
	b.clock.Advance(time.Hour)
	b.tick()
	require.Empty(t, b.stepEvents(run.RunID, "nap", runstate.EvStepCompleted))
	require.Equal(t, runstate.RunCancelled, b.run(run.RunID).Status)
}

func scenarioSleep_AFailFastCancelsASleepLikeAnUnstartedTask(t *testing.T, b *bundle) {
	d := dag() // a; b and c need a; d needs both
	d.Actions[1] = definition.Action{ID: "b", Order: 2, DependsOn: []string{"a"}, Sleep: definition.Duration(time.Hour)}
	d.Actions[2].OnFailure = definition.OnFailureAbort
	run := b.submit(d)
	b.complete(b.poll("x"), `null`)
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("b").Status)
	b.fail(b.poll("x"), definition.ErrorValidation) // c fails for good
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.StepCancelled, snap.Step("b").Status)
	require.Equal(t, "fail-fast after c failed", snap.Step("b").Reason)
	b.clock.Advance(2 * time.Hour)
	b.tick()
	require.Empty(t, b.stepEvents(run.RunID, "b", runstate.EvStepCompleted))
}

func scenarioSleep_ARerunSleepsAgainFromItsOwnTime(t *testing.T, b *bundle) {
	run := b.submit(napping())
	b.complete(b.poll("act-a"), `null`)
	b.clock.Advance(10 * time.Minute)
	b.tick()
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	b.clock.Advance(time.Hour)
	_, err := b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "nap", Actor: "op"})
	require.NoError(t, err)
	st := b.run(run.RunID).Step("nap")
	require.Equal(t, runstate.StepRunning, st.Status)
	require.Equal(t, 2, st.LogicalAttempt)
	require.True(t, b.clock.Now().Add(10*time.Minute).Equal(st.WakeAt), "sleep's duration counts from the rerun")
	b.pollNone("act-c")
	b.clock.Advance(10 * time.Minute)
	b.tick()
	b.complete(b.poll("act-c"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Len(t, b.stepEvents(run.RunID, "nap", runstate.EvStepSleeping), 2)
}

func scenarioRepeat_AFailedAttemptIsRetriedWithinItsIteration(t *testing.T, b *bundle) {
	run := b.submit(polling(3))
	b.complete(b.poll("act-a"), `{"done":false}`)
	b.fail(b.poll("act-a"), definition.ErrorTransient)
	b.clock.Advance(definition.DefaultInitialBackoff.D())
	b.tick()
	retry := b.poll("act-a")
	require.Equal(t, 2, retry.LogicalAttempt, "the second iteration's")
	require.Equal(t, 2, retry.EngineAttempt)
	require.JSONEq(t, `{"done":false}`, string(retry.UpstreamOutputs["a"]))
	b.complete(retry, `{"done":true}`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, 2, snap.Step("a").Iteration)
}

func scenarioRepeat_AnUntilThatCannotBeEvaluatedFailsTheStepValidation(t *testing.T, b *bundle) {
	d := polling(3)
	d.Actions[0].OnFailure = definition.OnFailureAbort
	run := b.submit(d)
	b.complete(b.poll("act-a"), `{"status":"secret"}`) // no done
	st := b.run(run.RunID).Step("a")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorValidation, st.Error.Class)
	require.Contains(t, st.Error.Message, "steps[0].repeat.until")
	require.NotContains(t, st.Error.Message, "secret")
}

func scenarioWhen_IsEvaluatedAgainWhenARerunReopensTheStep(t *testing.T, b *bundle) {
	d := seq("a", "b")
	d.Actions[1].When = "steps.a.output.go"
	run := b.submit(d)
	b.complete(b.poll("act-a"), `{"go":false}`)
	require.Equal(t, "condition", b.run(run.RunID).Step("b").Reason)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	_, err := b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "a", Actor: "op"})
	require.NoError(t, err)
	b.complete(b.poll("act-a"), `{"go":true}`)
	b.complete(b.poll("act-b"), `null`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Equal(t, runstate.StepSucceeded, snap.Step("b").Status)
}

// A repeat on a sub-workflow step starts a new child each iteration, until
// the child's result satisfies until (docs/semantics.md#repeat).
func scenarioRepeat_ASubWorkflowStepStartsANewChildEachIteration(t *testing.T, b *bundle) {
	def := withChild(inlineChild(), `{}`)
	def.Actions[1].Repeat = &definition.Repeat{Until: "steps.child.output.done", MaxIterations: 3}
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	for i, out := range []string{`{"done":false}`, `{"done":true}`} {
		b.tick()
		child := b.childOf(run.RunID, "child")
		require.Equal(t, i+1, b.run(run.RunID).Step("child").Iteration)
		b.complete(b.poll("act-c1"), out)
		require.Equal(t, runstate.RunCompleted, b.run(child.RunID).Status)
		b.tick()
	}
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("child").Status)
	require.JSONEq(t, `{"done":true}`, string(snap.Step("child").Output))
	require.Len(t, b.childrenOf(run.RunID), 2, "one child per iteration")
	require.Len(t, b.stepEvents(run.RunID, "child", runstate.EvStepIterated), 1)
	b.complete(b.poll("act-b"), `null`)
	b.tick()
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
