package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
)

// forEachScenarios are the fan-out rules (docs/semantics.md#for-each), each
// run on every store backend.
var forEachScenarios = map[string]func(*testing.T, *bundle){
	"ForEach_OneItemPerElementEachWithItsInputAndTheOutputInItemOrder":       scenarioForEach_OneItemPerElementEachWithItsInputAndTheOutputInItemOrder,
	"ForEach_AtMostMaxConcurrencyInFlightTheNextDispatchedInTheSameDecision": scenarioForEach_AtMostMaxConcurrencyInFlightTheNextDispatchedInTheSameDecision,
	"ForEach_AnEmptyListCompletesTheStepWithAnEmptyList":                     scenarioForEach_AnEmptyListCompletesTheStepWithAnEmptyList,
	"ForEach_EachItemHasItsOwnAttemptsRetriesAndIdempotencyKey":              scenarioForEach_EachItemHasItsOwnAttemptsRetriesAndIdempotencyKey,
	"ForEach_AFailedItemStopsNewItemsAndFailsTheStepOnceInFlightItemsEnd":    scenarioForEach_AFailedItemStopsNewItemsAndFailsTheStepOnceInFlightItemsEnd,
	"ForEach_AListOverTheCapFailsTheStepValidationNamingPathAndRule":         scenarioForEach_AListOverTheCapFailsTheStepValidationNamingPathAndRule,
	"ForEach_AnEvaluationErrorFailsTheStepValidationNamingItsPath":           scenarioForEach_AnEvaluationErrorFailsTheStepValidationNamingItsPath,
	"ForEach_PauseStopsNewItemsAndResumeDispatchesThem":                      scenarioForEach_PauseStopsNewItemsAndResumeDispatchesThem,
	"ForEach_CancelCancelsInFlightAndPendingItems":                           scenarioForEach_CancelCancelsInFlightAndPendingItems,
	"ForEach_ARerunReRunsItsItemsOverTheListEvaluatedAgain":                  scenarioForEach_ARerunReRunsItsItemsOverTheListEvaluatedAgain,
	"ForEach_RetryStepOfAHeldFanOutRunsAgainOnlyTheItemsThatDidNotSucceed":   scenarioForEach_RetryStepOfAHeldFanOutRunsAgainOnlyTheItemsThatDidNotSucceed,
	"ForEach_CompensationCompensatesEachCompletedItemInReverseOrder":         scenarioForEach_CompensationCompensatesEachCompletedItemInReverseOrder,
	"ForEach_OverASubWorkflowStartsOneChildPerItem":                          scenarioForEach_OverASubWorkflowStartsOneChildPerItem,
	"ForEach_AnotherStepsFailFastCancelsThePendingItemsAndTheStep":           scenarioForEach_AnotherStepsFailFastCancelsThePendingItemsAndTheStep,
	"ForEach_ControlsNamingAnItemAreRefused":                                 scenarioForEach_ControlsNamingAnItemAreRefused,
	"ForEach_WhenFalseSkipsTheWholeFanOut":                                   scenarioForEach_WhenFalseSkipsTheWholeFanOut,
	"ForEach_TwoHundredItemsFiveAtATimeNeverMoreInFlightOutputInItemOrder":   scenarioForEach_TwoHundredItemsFiveAtATimeNeverMoreInFlightOutputInItemOrder,
	"ForEach_TheStepsConcurrencyKeyHoldsEachItemsTask":                       scenarioForEach_TheStepsConcurrencyKeyHoldsEachItemsTask,
}

func TestForEachScenarios(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			for name, scenario := range forEachScenarios {
				t.Run(name, func(t *testing.T) {
					scenario(t, setupWith(t, backend.open(t)))
				})
			}
		})
	}
}

// fanOut answers a sequence a → ship → b whose ship fans out over list
// (a CEL list) with maxConcurrency n, each item's input reading item and
// index.
func fanOut(list string, n int) definition.Definition {
	d := seq("a", "ship", "b")
	s := &d.Actions[1]
	s.ForEach, s.MaxConcurrency = list, n
	s.Input = json.RawMessage(`{"line":"${{ item }}","at":"${{ index }}"}`)
	return d
}

// itemsOf answers the item steps of the run's forEach step, by index.
func itemsOf(snap *runstate.Snapshot, step string) []runstate.StepState {
	var out []runstate.StepState
	for _, st := range snap.Steps {
		if st.Parent == step {
			out = append(out, st)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// itemsInFlight counts the items of step the log shows in flight at its
// end: scheduled and not yet ended.
func itemsInFlightMax(events []runstate.Event, step string) int {
	open, most := map[string]bool{}, 0
	for _, ev := range events {
		parent, _, ok := definition.ParseItemID(ev.StepID)
		if !ok || parent != step {
			continue
		}
		switch ev.Type {
		case runstate.EvStepScheduled:
			open[ev.StepID] = true
		case runstate.EvStepCompleted, runstate.EvStepFailed, runstate.EvStepCancelled:
			delete(open, ev.StepID)
		}
		most = max(most, len(open))
	}
	return most
}

func scenarioForEach_OneItemPerElementEachWithItsInputAndTheOutputInItemOrder(t *testing.T, b *bundle) {
	def := fanOut("steps.a.output.lines", 10)
	def.Actions[1].Input = json.RawMessage(`{"line":"${{ item }}","at":"${{ index }}","who":"${{ input.user }}"}`)
	run := b.submitInput(def, `{"user":"ada"}`)
	b.complete(b.poll("act-a"), `{"lines":["x","y","z"]}`)
	tasks := b.pollAll("act-ship", 10)
	require.Len(t, tasks, 3)
	byID := map[string]*Task{}
	for _, task := range tasks {
		byID[task.ActionID] = task
	}
	for i, line := range []string{"x", "y", "z"} {
		id := fmt.Sprintf("ship[%d]", i)
		task := byID[id]
		require.NotNil(t, task, id)
		require.JSONEq(t, fmt.Sprintf(`{"line":%q,"at":%d,"who":"ada"}`, line, i), string(task.Input))
		require.JSONEq(t, fmt.Sprintf("%q", line), string(task.Item))
		require.Equal(t, i, task.Index)
		require.Equal(t, "ship", task.ItemOf)
		require.Equal(t, run.RunID+":"+id, task.IdempotencyKey, "each item has its own key")
		sched := b.stepEvents(run.RunID, id, runstate.EvStepScheduled)
		require.Len(t, sched, 1)
		require.JSONEq(t, string(task.Input), string(sched[0].Data.Input), "StepScheduled records the item's input")
	}
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepRunning, snap.Step("ship").Status)
	fanned := b.stepEvents(run.RunID, "ship", runstate.EvStepFannedOut)
	require.Len(t, fanned, 1)
	require.Equal(t, 3, fanned[0].Data.ItemCount)
	require.Len(t, itemsOf(snap, "ship"), 3, "GetRun shows each item as a step with its parent and index")
	// Out of order: the output is in item order all the same.
	b.complete(byID["ship[2]"], `"Z"`)
	b.complete(byID["ship[0]"], `"X"`)
	b.pollNone("act-b")
	b.complete(byID["ship[1]"], `"Y"`)
	snap = b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("ship").Status)
	require.JSONEq(t, `["X","Y","Z"]`, string(snap.Step("ship").Output))
	next := b.poll("act-b")
	require.JSONEq(t, `["X","Y","Z"]`, string(next.UpstreamOutputs["ship"]), "steps.ship.output downstream is the list")
	b.complete(next, `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioForEach_AtMostMaxConcurrencyInFlightTheNextDispatchedInTheSameDecision(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("lists.range(7)", 3), `{}`)
	b.complete(b.poll("act-a"), `null`)
	first := b.pollAll("act-ship", 10)
	require.Equal(t, []string{"ship[0]", "ship[1]", "ship[2]"}, ids(first), "the first maxConcurrency indexes")
	b.complete(first[1], `10`)
	next := b.pollAll("act-ship", 10)
	require.Equal(t, []string{"ship[3]"}, ids(next), "the item's end dispatched the next index")
	b.fail(first[0], definition.ErrorTransient) // a retry keeps its place
	require.Empty(t, b.pollAll("act-ship", 10), "an item waiting for its retry is in flight")
	b.clock.Advance(definition.DefaultInitialBackoff.D())
	b.tick()
	left := append(b.pollAll("act-ship", 10), first[2], next[0])
	for len(left) > 0 {
		task := left[0]
		b.complete(task, fmt.Sprint(task.Index*10))
		left = append(left[1:], b.pollAll("act-ship", 10)...)
	}
	snap := b.run(run.RunID)
	require.JSONEq(t, `[0,10,20,30,40,50,60]`, string(snap.Step("ship").Output))
	require.LessOrEqual(t, itemsInFlightMax(b.runEvents(run.RunID), "ship"), 3)
}

func scenarioForEach_AnEmptyListCompletesTheStepWithAnEmptyList(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("input.none", 10), `{"none":[]}`)
	b.complete(b.poll("act-a"), `null`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("ship").Status)
	require.JSONEq(t, `[]`, string(snap.Step("ship").Output))
	require.JSONEq(t, `[]`, string(b.poll("act-b").UpstreamOutputs["ship"]))
}

func scenarioForEach_EachItemHasItsOwnAttemptsRetriesAndIdempotencyKey(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("[1, 2]", 10), `{}`)
	b.complete(b.poll("act-a"), `null`)
	tasks := b.pollAll("act-ship", 10)
	require.Len(t, tasks, 2)
	b.fail(tasks[0], definition.ErrorTransient)
	b.complete(tasks[1], `"b"`)
	b.clock.Advance(definition.DefaultInitialBackoff.D())
	b.tick()
	again := b.poll("act-ship")
	require.Equal(t, "ship[0]", again.ActionID)
	require.Equal(t, 2, again.EngineAttempt)
	require.Equal(t, tasks[0].IdempotencyKey, again.IdempotencyKey)
	require.NotEqual(t, tasks[1].IdempotencyKey, again.IdempotencyKey)
	require.JSONEq(t, string(tasks[0].Input), string(again.Input), "a retry runs with the recorded input")
	b.complete(again, `"a"`)
	snap := b.run(run.RunID)
	items := itemsOf(snap, "ship")
	require.Len(t, items[0].Attempts, 2)
	require.Len(t, items[1].Attempts, 1)
	require.JSONEq(t, `["a","b"]`, string(snap.Step("ship").Output))
}

func scenarioForEach_AFailedItemStopsNewItemsAndFailsTheStepOnceInFlightItemsEnd(t *testing.T, b *bundle) {
	def := fanOut("lists.range(5)", 2)
	def.Actions[1].Retry.MaxAttempts = 1
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("act-a"), `null`)
	tasks := b.pollAll("act-ship", 10)
	require.Len(t, tasks, 2)
	b.fail(tasks[0], definition.ErrorValidation)
	require.Empty(t, b.pollAll("act-ship", 10), "no new item starts")
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("ship").Status, "the item in flight may finish")
	b.complete(tasks[1], `1`)
	snap := b.run(run.RunID)
	st := snap.Step("ship")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorValidation, st.Error.Class, "the item's class")
	require.Equal(t, "item ship[0] failed: boom", st.Error.Message)
	require.Equal(t, runstate.RunFailed, snap.Status, "on_failure abort")
	items := itemsOf(snap, "ship")
	require.Equal(t, runstate.StepFailed, items[0].Status)
	require.Equal(t, runstate.StepSucceeded, items[1].Status)
	for _, it := range items[2:] {
		require.Equal(t, runstate.StepCancelled, it.Status, it.ActionID)
	}
	require.Len(t, b.stepEvents(run.RunID, "ship", runstate.EvStepFailed), 1)
}

func scenarioForEach_AListOverTheCapFailsTheStepValidationNamingPathAndRule(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("input.lines", 10), `{"lines":`+jsonRange(definition.DefaultMaxFanOut+1)+`}`)
	b.complete(b.poll("act-a"), `null`)
	snap := b.run(run.RunID)
	st := snap.Step("ship")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorValidation, st.Error.Class)
	require.Equal(t, "for_each_cap", st.Error.Code)
	require.Contains(t, st.Error.Message, "steps[1].forEach")
	require.Contains(t, st.Error.Message, "fan-out cap of 1000")
	require.Empty(t, itemsOf(snap, "ship"), "no item is created")
	b.pollNone("act-ship")
}

// jsonRange answers the JSON list [0, …, n-1].
func jsonRange(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func scenarioForEach_AnEvaluationErrorFailsTheStepValidationNamingItsPath(t *testing.T, b *bundle) {
	for _, tc := range []struct{ list, input, why string }{
		{"input.lines", `{"secret-payload":1}`, "a missing key"},
		{"input.lines", `{"lines":"secret-payload"}`, "not a list"},
	} {
		run := b.submitInput(fanOut(tc.list, 10), tc.input)
		b.complete(b.poll("act-a"), `null`)
		st := b.run(run.RunID).Step("ship")
		require.Equal(t, runstate.StepFailed, st.Status, tc.why)
		require.Equal(t, definition.ErrorValidation, st.Error.Class, tc.why)
		require.Contains(t, st.Error.Message, "steps[1].forEach", tc.why)
		require.NotContains(t, st.Error.Message, "secret-payload", "%s: no payload in the message", tc.why)
	}
}

func scenarioForEach_PauseStopsNewItemsAndResumeDispatchesThem(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("lists.range(3)", 1), `{}`)
	b.complete(b.poll("act-a"), `null`)
	first := b.poll("act-ship")
	b.pause(run.RunID)
	b.complete(first, `0`)
	b.pollNone("act-ship")
	b.resume(run.RunID)
	second := b.poll("act-ship")
	require.Equal(t, "ship[1]", second.ActionID)
	b.complete(second, `1`)
	b.complete(b.poll("act-ship"), `2`)
	require.JSONEq(t, `[0,1,2]`, string(b.run(run.RunID).Step("ship").Output))
}

func scenarioForEach_CancelCancelsInFlightAndPendingItems(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("lists.range(4)", 2), `{}`)
	b.complete(b.poll("act-a"), `null`)
	tasks := b.pollAll("act-ship", 10)
	require.Len(t, tasks, 2)
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCancelled, snap.Status)
	require.Equal(t, runstate.StepCancelled, snap.Step("ship").Status)
	for _, it := range itemsOf(snap, "ship") {
		require.Equal(t, runstate.StepCancelled, it.Status, it.ActionID)
	}
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
	require.Error(t, err, "a cancelled item's task is retired")
}

func scenarioForEach_ARerunReRunsItsItemsOverTheListEvaluatedAgain(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("steps.a.output", 10), `{}`)
	b.complete(b.poll("act-a"), `[1,2]`)
	for _, task := range b.pollAll("act-ship", 10) {
		b.complete(task, fmt.Sprint(task.Index))
	}
	b.complete(b.poll("act-b"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	_, err := b.rerun(run.RunID, "ship[0]", "")
	require.Error(t, err, "a rerun names the forEach step, not an item")
	_, err = b.rerun(run.RunID, "a", "r1")
	require.NoError(t, err)
	b.complete(b.poll("act-a"), `[7,8,9]`)
	tasks := b.pollAll("act-ship", 10)
	require.Equal(t, []string{"ship[0]", "ship[1]", "ship[2]"}, ids(tasks), "the list is evaluated again")
	for _, task := range tasks {
		require.Equal(t, 2, task.LogicalAttempt, "a new logical attempt per item")
		b.complete(task, fmt.Sprint(task.Index+100))
	}
	require.JSONEq(t, `[100,101,102]`, string(b.run(run.RunID).Step("ship").Output))
	b.complete(b.poll("act-b"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioForEach_RetryStepOfAHeldFanOutRunsAgainOnlyTheItemsThatDidNotSucceed(t *testing.T, b *bundle) {
	def := fanOut("lists.range(3)", 10)
	def.Actions[1].Retry.MaxAttempts = 1
	def.Actions[1].OnFailure = definition.OnFailureHold
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("act-a"), `null`)
	tasks := b.pollAll("act-ship", 10)
	b.complete(tasks[0], `0`)
	b.fail(tasks[1], definition.ErrorExternal)
	b.complete(tasks[2], `2`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunBlocked, snap.Status)
	require.Equal(t, runstate.StepFailed, snap.Step("ship").Status)
	_, err := b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "ship[1]", Actor: "op"})
	require.Error(t, err, "RETRY_STEP names the forEach step")
	_, err = b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "ship", Actor: "op"})
	require.NoError(t, err)
	again := b.pollAll("act-ship", 10)
	require.Equal(t, []string{"ship[1]"}, ids(again), "only the item that did not succeed runs again")
	require.Equal(t, 2, again[0].LogicalAttempt)
	b.complete(again[0], `1`)
	require.JSONEq(t, `[0,1,2]`, string(b.run(run.RunID).Step("ship").Output))
	b.complete(b.poll("act-b"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioForEach_CompensationCompensatesEachCompletedItemInReverseOrder(t *testing.T, b *bundle) {
	def := fanOut("lists.range(3)", 10)
	def.Actions[1].Compensation = &definition.CompensationHook{Operation: "unship",
		Input: json.RawMessage(`{"item":"${{ item }}","at":"${{ index }}","shipped":"${{ steps.ship.output }}"}`)}
	def.Actions[2].OnFailure = definition.OnFailureCompensate
	def.Actions[2].Retry.MaxAttempts = 1
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("act-a"), `null`)
	tasks := b.pollAll("act-ship", 10)
	b.complete(tasks[1], `1`)
	b.complete(tasks[0], `0`)
	b.complete(tasks[2], `2`)
	b.fail(b.poll("act-b"), definition.ErrorValidation)
	require.Equal(t, runstate.RunCompensating, b.run(run.RunID).Status)
	var order []string
	for range 3 {
		tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Compensations: []string{"unship"}, MaxTasks: 5})
		require.NoError(t, err)
		require.Len(t, tasks, 1, "one hook at a time")
		task := tasks[0]
		require.Equal(t, decide.CompensationKey(run.RunID, task.ActionID), task.IdempotencyKey)
		require.JSONEq(t, fmt.Sprintf(`{"item":%d,"at":%d,"shipped":%d}`, task.Index, task.Index, task.Index), string(task.Input),
			"an item's hook reads its item, its index and its own output")
		order = append(order, task.ActionID)
		b.complete(task, `null`)
	}
	require.Equal(t, []string{"ship[2]", "ship[0]", "ship[1]"}, order, "each completed item, in reverse completion order")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.CompensationRolledBack, snap.CompensationOutcome)
	_, err := b.rerun(run.RunID, "b", "r1")
	require.Error(t, err, "a rerun keeps the steps upstream, and the fan-out's items were compensated")
	require.Contains(t, err.Error(), "ship was compensated")
	_, err = b.rerun(run.RunID, "ship", "r2")
	require.NoError(t, err)
	require.Len(t, b.pollAll("act-ship", 10), 3, "a rerun from the fan-out runs its items again")
}

func scenarioForEach_OverASubWorkflowStartsOneChildPerItem(t *testing.T, b *bundle) {
	child := inlineChild()
	def := seq("a", "ship", "b")
	s := &def.Actions[1]
	s.Activity, s.ForEach, s.MaxConcurrency = "", "lists.range(3)", 2
	s.Workflow = &definition.SubWorkflow{Definition: &child, Input: json.RawMessage(`{"n":"${{ index * 10 }}"}`)}
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("act-a"), `null`)
	b.tick()
	b.tick() // a start fired twice finds the same child
	kids := b.childrenOf(run.RunID)
	require.Len(t, kids, 2, "maxConcurrency children")
	for _, kid := range kids {
		_, index, ok := definition.ParseItemID(kid.ParentStep)
		require.True(t, ok, kid.ParentStep)
		require.Equal(t, decide.ChildRequestID(run.RunID, kid.ParentStep, 1), kid.RunRequestID, "the child's request id names the item")
		require.JSONEq(t, fmt.Sprintf(`{"n":%d}`, index*10), string(kid.Input))
	}
	for range 3 {
		task := b.poll("act-c1")
		b.complete(task, fmt.Sprintf(`{"from":%q}`, task.RunID))
		b.tick()
		b.tick()
	}
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("ship").Status)
	kids = b.childrenOf(run.RunID)
	require.Len(t, kids, 3, "exactly one child per item")
	var out []map[string]string
	require.NoError(t, json.Unmarshal(snap.Step("ship").Output, &out))
	for i, it := range itemsOf(snap, "ship") {
		require.Equal(t, it.ChildRunID, out[i]["from"], "the output is in item order")
	}
	require.Equal(t, 3, countEvents(b, run.RunID, runstate.EvChildRunStarted))
	b.complete(b.poll("act-b"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	_, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	for _, kid := range kids {
		_, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: kid.RunID})
		require.Equal(t, CodeNotFound, CodeOf(err), "deleting the parent deletes each item's child")
	}
}

func scenarioForEach_AnotherStepsFailFastCancelsThePendingItemsAndTheStep(t *testing.T, b *bundle) {
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "root", Order: 1, Activity: "x"},
		{ID: "ship", Order: 2, Activity: "act-ship", DependsOn: []string{"root"}, ForEach: "lists.range(4)", MaxConcurrency: 1},
		{ID: "other", Order: 3, Activity: "act-other", DependsOn: []string{"root"}, Retry: definition.RetryPolicy{MaxAttempts: 1}},
	}}
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("x"), `null`)
	item := b.poll("act-ship")
	b.fail(b.poll("act-other"), definition.ErrorValidation)
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Step("ship").Status, "its item in flight may finish")
	b.complete(item, `0`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.StepCancelled, snap.Step("ship").Status)
	items := itemsOf(snap, "ship")
	require.Equal(t, runstate.StepSucceeded, items[0].Status)
	for _, it := range items[1:] {
		require.Equal(t, runstate.StepCancelled, it.Status)
	}
}

func scenarioForEach_ControlsNamingAnItemAreRefused(t *testing.T, b *bundle) {
	run := b.submitInput(fanOut("lists.range(2)", 1), `{}`)
	b.complete(b.poll("act-a"), `null`)
	_, err := b.eng.SkipStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "ship[1]", Actor: "op"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "forEach step ship")
	require.Equal(t, runstate.StepPending, itemsOf(b.run(run.RunID), "ship")[1].Status)
}

func scenarioForEach_WhenFalseSkipsTheWholeFanOut(t *testing.T, b *bundle) {
	def := fanOut("lists.range(3)", 1)
	def.Actions[1].When = "input.go"
	run := b.submitInput(def, `{"go":false}`)
	b.complete(b.poll("act-a"), `null`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSkipped, snap.Step("ship").Status)
	require.Empty(t, itemsOf(snap, "ship"))
	b.complete(b.poll("act-b"), `null`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// A fan-out of 200 items with maxConcurrency 5, its tasks claimed by two
// workers and reported in a random order, some failing once and retried:
// its event log never shows more than 5 items in flight (scheduled and not
// ended), every item is scheduled once, and the output list is in item order.
func scenarioForEach_TwoHundredItemsFiveAtATimeNeverMoreInFlightOutputInItemOrder(t *testing.T, b *bundle) {
	const n = 200
	def := fanOut(fmt.Sprintf("lists.range(%d)", n), 5)
	def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 3, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(1000)}
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("act-a"), `null`)
	rng := rand.New(rand.NewPCG(uint64(len(run.RunID)), 200))
	failed := map[string]bool{}
	var held []*Task
	for range 20 * n {
		held = append(held, b.pollAll("act-ship", 3)...)
		if len(held) == 0 {
			if b.run(run.RunID).Step("ship").Status != runstate.StepRunning {
				break
			}
			b.clock.Advance(time.Second) // a retry's backoff
			b.tick()
			continue
		}
		require.LessOrEqual(t, len(held), 5, "at most maxConcurrency tasks to claim")
		k := rng.IntN(len(held))
		task := held[k]
		held = append(held[:k], held[k+1:]...)
		if !failed[task.ActionID] && rng.IntN(8) == 0 {
			failed[task.ActionID] = true
			b.fail(task, definition.ErrorTransient)
			continue
		}
		b.complete(task, fmt.Sprintf(`{"i":%d}`, task.Index))
	}
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("ship").Status)
	var out []map[string]int
	require.NoError(t, json.Unmarshal(snap.Step("ship").Output, &out))
	require.Len(t, out, n)
	for i, o := range out {
		require.Equal(t, i, o["i"], "the output list is in item order")
	}
	events := b.runEvents(run.RunID)
	require.LessOrEqual(t, itemsInFlightMax(events, "ship"), 5, "never more than maxConcurrency items in flight")
	require.Equal(t, 5, itemsInFlightMax(events, "ship"), "the fan-out used its concurrency")
	scheduled := map[string]int{}
	for _, ev := range events {
		if ev.Type == runstate.EvStepScheduled {
			scheduled[ev.StepID]++
		}
	}
	for i := range n {
		require.Equal(t, 1, scheduled[definition.ItemID("ship", i)], "item %d scheduled once", i)
	}
	require.NotEmpty(t, failed, "some items were retried")
}

// The step's flow control applies to each item's task: with a concurrency
// key of limit 2, at most two of the five items dispatched are claimed at
// once (docs/semantics.md#for-each, #step-concurrency).
func scenarioForEach_TheStepsConcurrencyKeyHoldsEachItemsTask(t *testing.T, b *bundle) {
	def := fanOut("lists.range(5)", 5)
	def.Actions[1].Concurrency = &definition.StepConcurrency{Key: "run.id", Limit: 2}
	run := b.submitInput(def, `{}`)
	b.complete(b.poll("act-a"), `null`)
	first := b.pollAll("act-ship", 10)
	require.Len(t, first, 2, "the key's limit holds the other items' tasks")
	b.complete(first[0], `0`)
	left := append(first[1:], b.pollAll("act-ship", 10)...)
	require.Len(t, left, 2)
	for len(left) > 0 {
		b.complete(left[0], fmt.Sprint(left[0].Index))
		left = append(left[1:], b.pollAll("act-ship", 10)...)
		require.LessOrEqual(t, len(left), 2)
	}
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("ship").Status)
	require.Len(t, itemsOf(snap, "ship"), 5)
}

// A fan-out's item has its step's flow control and fairness: the compiled
// rules of the forEach step are found for each item's id, as each item's
// task is created and claimed (docs/semantics.md#for-each).
func TestForEach_AnItemHasItsStepsFlowControlAndFairness(t *testing.T) {
	def := fanOut("lists.range(3)", 2)
	def.Actions[1].Concurrency = &definition.StepConcurrency{Key: "run.id", Limit: 2}
	def.Actions[1].Fairness = &definition.Fairness{Key: "'tenant-a'"}
	def = def.WithDefaults()
	require.NoError(t, def.Validate())
	run := &record.Run{RunID: "r", Definition: def, PlanSHA256: "fan-out-flow"}
	require.NotNil(t, flowStepOf(run, "ship"))
	require.NotNil(t, fairStepOf(run, "ship"))
	for _, id := range []string{"ship[0]", "ship[2]"} {
		require.Same(t, flowStepOf(run, "ship"), flowStepOf(run, id), id)
		require.Same(t, fairStepOf(run, "ship"), fairStepOf(run, id), id)
	}
	require.Nil(t, fairStepOf(run, "a[0]"), "a step without a fan-out has no items")
}
