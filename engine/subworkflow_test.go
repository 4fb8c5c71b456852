package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
)

// The sub-workflow scenarios (docs/semantics.md#sub-workflows) run on every
// store backend, with the others (TestScenarios).
func init() {
	for name, s := range map[string]func(*testing.T, *bundle){
		"SubWorkflow_TheStepStartsOneChildAndFinishesWithItsResult":                     scenarioSubWorkflow_TheStepStartsOneChildAndFinishesWithItsResult,
		"SubWorkflow_AFailedChildFailsTheStepWithItsClassAndNamesTheChild":              scenarioSubWorkflow_AFailedChildFailsTheStepWithItsClassAndNamesTheChild,
		"SubWorkflow_AStartFiredAgainAfterACrashFindsTheSameChild":                      scenarioSubWorkflow_AStartFiredAgainAfterACrashFindsTheSameChild,
		"SubWorkflow_ARetryOfTheStepStartsANewChild":                                    scenarioSubWorkflow_ARetryOfTheStepStartsANewChild,
		"SubWorkflow_CancellingTheParentCancelsItsChildUnlessAbandoned":                 scenarioSubWorkflow_CancellingTheParentCancelsItsChildUnlessAbandoned,
		"SubWorkflow_PausingAndResumingTheParentPausesAndResumesItsChild":               scenarioSubWorkflow_PausingAndResumingTheParentPausesAndResumesItsChild,
		"SubWorkflow_AChildPastTheDepthCapFailsTheStep":                                 scenarioSubWorkflow_AChildPastTheDepthCapFailsTheStep,
		"SubWorkflow_APlanReferenceIsPinnedAtSubmitAndAMissingOneRefused":               scenarioSubWorkflow_APlanReferenceIsPinnedAtSubmitAndAMissingOneRefused,
		"SubWorkflow_AFailFastParentStopsWaitingAndCancelsItsRunningChild":              scenarioSubWorkflow_AFailFastParentStopsWaitingAndCancelsItsRunningChild,
		"SubWorkflow_TheChildsInputExpressionsAreEvaluatedOnceAtDispatch":               scenarioSubWorkflow_TheChildsInputExpressionsAreEvaluatedOnceAtDispatch,
		"SubWorkflow_DeletingTheParentDeletesItsChildrenOnceTheyHaveEnded":              scenarioSubWorkflow_DeletingTheParentDeletesItsChildrenOnceTheyHaveEnded,
		"SubWorkflow_AChildStartedWhileItsParentIsPausedIsPausedToo":                    scenarioSubWorkflow_AChildStartedWhileItsParentIsPausedIsPausedToo,
		"SubWorkflow_AFailedChildWithRetriesLeftStartsANewChildUnderANewLogicalAttempt": scenarioSubWorkflow_AFailedChildWithRetriesLeftStartsANewChildUnderANewLogicalAttempt,
	} {
		scenarios[name] = s
	}
}

// withChild answers a sequence a, child, b whose middle step runs child
// inline with input.
func withChild(child definition.Definition, input string) definition.Definition {
	def := seq("a", "child", "b")
	def.Actions[1].Activity = ""
	def.Actions[1].Workflow = &definition.SubWorkflow{Definition: &child, Input: json.RawMessage(input)}
	return def
}

// inlineChild answers a child of one activity step c1 whose output is its result.
func inlineChild() definition.Definition {
	d := seq("c1")
	d.PlanID, d.PlanVersion, d.ResultActionID = "", "", "c1"
	return d
}

// childOf answers the child run of the parent's step, failing if it has none.
func (b *bundle) childOf(parentID, step string) *runstate.Snapshot {
	b.t.Helper()
	st := b.run(parentID).Step(step)
	require.NotEmpty(b.t, st.ChildRunID, "step %s has no child run", step)
	return b.run(st.ChildRunID)
}

// childrenOf answers the runs whose parent is parentID.
func (b *bundle) childrenOf(parentID string) []*runstate.Snapshot {
	b.t.Helper()
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(b.t, err)
	var out []*runstate.Snapshot
	for _, r := range list.Runs {
		if snap := b.run(r.RunID); snap.ParentRunID == parentID {
			out = append(out, snap)
		}
	}
	return out
}

func scenarioSubWorkflow_TheStepStartsOneChildAndFinishesWithItsResult(t *testing.T, b *bundle) {
	run := b.submit(withChild(inlineChild(), `{"n":1}`))
	b.complete(b.poll("act-a"), `1`)
	require.Equal(t, runstate.StepScheduled, b.run(run.RunID).Step("child").Status, "the intent is recorded with the dispatch")
	b.pollNone("act-c1")
	b.tick()
	parentStep := b.run(run.RunID).Step("child")
	require.Equal(t, runstate.StepRunning, parentStep.Status)
	child := b.childOf(run.RunID, "child")
	require.Equal(t, run.RunID, child.ParentRunID)
	require.Equal(t, "child", child.ParentStep)
	require.Equal(t, decide.ChildRequestID(run.RunID, "child", 1), child.RunRequestID)
	require.Equal(t, "plan.child", child.PlanID, "an inline child's plan id is the parent's and the step's")
	require.JSONEq(t, `{"n":1}`, string(child.Input))
	b.complete(b.poll("act-c1"), `{"x":2}`)
	require.Equal(t, runstate.RunCompleted, b.run(child.RunID).Status)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("child").Status)
	require.JSONEq(t, `{"x":2}`, string(snap.Step("child").Output), "the step's output is the child's result")
	task := b.poll("act-b")
	require.JSONEq(t, `{"x":2}`, string(task.UpstreamOutputs["child"]))
	b.complete(task, `3`)
	b.tick()
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Len(t, b.childrenOf(run.RunID), 1)
	require.Equal(t, 1, countEvents(b, run.RunID, runstate.EvChildRunStarted))
	require.Equal(t, 1, countEvents(b, run.RunID, runstate.EvChildRunEnded))
	require.Equal(t, 3, countEvents(b, run.RunID, runstate.EvStepCompleted))
}

func scenarioSubWorkflow_AFailedChildFailsTheStepWithItsClassAndNamesTheChild(t *testing.T, b *bundle) {
	child := inlineChild()
	child.Actions[0].OnFailure = definition.OnFailureAbort
	def := withChild(child, `{}`)
	def.Actions[1].OnFailure = definition.OnFailureAbort
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	b.fail(b.poll("act-c1"), definition.ErrorValidation)
	childID := b.run(run.RunID).Step("child").ChildRunID
	require.Equal(t, runstate.RunFailed, b.run(childID).Status)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	st := snap.Step("child")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorValidation, st.Error.Class, "the child's class is carried over")
	require.Equal(t, "child run "+childID+" failed at step c1: boom", st.Error.Message)
	require.Len(t, st.Attempts, 1, "the child is the step's attempt")
	require.Equal(t, definition.ErrorValidation, st.Attempts[0].Error.Class, "a validation failure is not retried")
	b.tick()
	require.Equal(t, 1, countEvents(b, run.RunID, runstate.EvStepFailed), "the child's end reaches the parent once")
}

func scenarioSubWorkflow_AStartFiredAgainAfterACrashFindsTheSameChild(t *testing.T, b *bundle) {
	run := b.submit(withChild(inlineChild(), `{}`))
	b.complete(b.poll("act-a"), `1`)
	// A weftd that submitted the child and died before recording it: the
	// timer is still there, and fires again.
	parent, err := b.eng.records.LoadRun(b.ctx, run.RunID)
	require.NoError(t, err)
	first, refusal, err := startChild(b.ctx, b.eng, parent, parent.Action("child"), 1, json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Nil(t, refusal)
	b.tick()
	require.Equal(t, first, b.run(run.RunID).Step("child").ChildRunID, "the second start answered the first child")
	require.Len(t, b.childrenOf(run.RunID), 1)
	b.tick()
	require.Len(t, b.childrenOf(run.RunID), 1)
}

func scenarioSubWorkflow_ARetryOfTheStepStartsANewChild(t *testing.T, b *bundle) {
	child := inlineChild()
	child.Actions[0].OnFailure = definition.OnFailureAbort
	def := withChild(child, `{}`)
	def.Actions[1].OnFailure = definition.OnFailureHold
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	first := b.run(run.RunID).Step("child").ChildRunID
	b.fail(b.poll("act-c1"), definition.ErrorValidation)
	b.tick()
	require.Equal(t, runstate.RunBlocked, b.run(run.RunID).Status)
	_, err := b.eng.RetryStep(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, ActionID: "child", Actor: "op"})
	require.NoError(t, err)
	b.tick()
	second := b.run(run.RunID).Step("child").ChildRunID
	require.NotEqual(t, first, second)
	require.Equal(t, decide.ChildRequestID(run.RunID, "child", 2), b.run(second).RunRequestID)
	b.complete(b.poll("act-c1"), `"again"`)
	b.tick()
	b.complete(b.poll("act-b"), `3`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Len(t, b.childrenOf(run.RunID), 2)
}

func scenarioSubWorkflow_CancellingTheParentCancelsItsChildUnlessAbandoned(t *testing.T, b *bundle) {
	for _, policy := range []definition.ParentClose{definition.ParentCloseCancel, definition.ParentCloseAbandon} {
		def := withChild(inlineChild(), `{}`)
		def.Actions[1].ParentClose = policy
		run := b.submit(def)
		b.complete(b.poll("act-a"), `1`)
		b.tick()
		childID := b.run(run.RunID).Step("child").ChildRunID
		_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
		require.NoError(t, err)
		require.Equal(t, runstate.StepCancelled, b.run(run.RunID).Step("child").Status)
		b.tick()
		child := b.run(childID)
		if policy == definition.ParentCloseAbandon {
			require.Equal(t, runstate.RunRunning, child.Status, "an abandoned child runs on")
			b.complete(b.poll("act-c1"), `1`)
			b.tick()
			require.Equal(t, runstate.RunCompleted, b.run(childID).Status)
			require.Equal(t, runstate.RunCancelled, b.run(run.RunID).Status, "its end changes nothing in the ended parent")
			continue
		}
		require.Equal(t, runstate.RunCancelled, child.Status, "parentClose %s", policy)
		require.Contains(t, child.Cancellation.Reason, "parent run "+run.RunID)
		b.pollNone("act-c1")
	}
}

func scenarioSubWorkflow_PausingAndResumingTheParentPausesAndResumesItsChild(t *testing.T, b *bundle) {
	run := b.submit(withChild(inlineChild(), `{}`))
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	childID := b.run(run.RunID).Step("child").ChildRunID
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.tick()
	require.Equal(t, runstate.RunPaused, b.run(childID).Status)
	b.pollNone("act-c1")
	_, err = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.tick()
	require.Equal(t, runstate.RunRunning, b.run(childID).Status)
	b.complete(b.poll("act-c1"), `1`)
	b.tick()
	b.complete(b.poll("act-b"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func scenarioSubWorkflow_AChildPastTheDepthCapFailsTheStep(t *testing.T, b *bundle) {
	// Three levels: the run (depth 0) starts a child (1), which starts a
	// grandchild (2), which starts a great-grandchild (3): past a cap of 8
	// only when nested deeper, so the cap is lowered for the test.
	b.eng.cfg.MaxWorkflowDepth = 2
	leaf := inlineChild()
	mid := withChild(leaf, `{}`)
	mid.PlanID, mid.PlanVersion, mid.ResultActionID = "", "", "b"
	inner := withChild(mid, `{}`)
	inner.PlanID, inner.PlanVersion = "", ""
	top := withChild(inner, `{}`)
	top.Actions[1].OnFailure = definition.OnFailureAbort
	inner.Actions[1].OnFailure = definition.OnFailureAbort
	top.Actions[1].Workflow.Definition = &inner
	run := b.submit(top)
	b.complete(b.poll("act-a"), `1`) // the run's a
	b.tick()
	b.complete(b.poll("act-a"), `1`) // the child's a
	b.tick()
	b.complete(b.poll("act-a"), `1`) // the grandchild's a: its child would be at depth 3
	b.tick()
	grandchild := b.childOf(b.childOf(run.RunID, "child").RunID, "child")
	st := grandchild.Step("child")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, "workflow_depth", st.Error.Code)
	require.Contains(t, st.Error.Message, "past the sub-workflow depth cap of 2")
	require.Empty(t, st.ChildRunID)
	for range 3 {
		b.tick() // the failure climbs one level per tick
	}
	require.Equal(t, runstate.RunFailed, b.run(run.RunID).Status)
}

func scenarioSubWorkflow_APlanReferenceIsPinnedAtSubmitAndAMissingOneRefused(t *testing.T, b *bundle) {
	refund := inlineChild()
	refund.PlanID, refund.PlanVersion = "refund", "1"
	b.putDefinition(refund)
	refund.PlanVersion = "2"
	refund.Actions[0].Activity = "act-c2"
	b.putDefinition(refund)
	def := seq("a", "child", "b")
	def.Actions[1].Activity = ""
	def.Actions[1].Workflow = &definition.SubWorkflow{PlanID: "refund"}
	run := b.submit(def)
	require.Equal(t, "2", run.Definition.Actions[1].Workflow.PlanVersion, "the latest version, pinned when the parent is submitted")
	refund.PlanVersion, refund.Actions[0].Activity = "3", "act-c3"
	b.putDefinition(refund) // a newer version stored after the submission
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	require.Equal(t, "2", b.childOf(run.RunID, "child").PlanVersion)
	b.complete(b.poll("act-c2"), `"refunded"`)
	b.tick()
	b.complete(b.poll("act-b"), `1`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)

	for _, tc := range []struct{ plan, version, field string }{
		{"nope", "", "definition.actions[1].workflow.plan_id"},
		{"refund", "9", "definition.actions[1].workflow.plan_version"},
	} {
		def.Actions[1].Workflow = &definition.SubWorkflow{PlanID: tc.plan, PlanVersion: tc.version}
		_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
		require.Equal(t, CodeInvalidArgument, CodeOf(err))
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, tc.field, e.Violations[0].Field)
	}
}

func scenarioSubWorkflow_AFailFastParentStopsWaitingAndCancelsItsRunningChild(t *testing.T, b *bundle) {
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", DAG: true, Actions: []definition.Action{
		{ID: "child", Order: 1, Workflow: &definition.SubWorkflow{Definition: new(inlineChild())}},
		{ID: "x", Order: 2, Activity: "act-x", OnFailure: definition.OnFailureAbort},
	}}
	run := b.submit(def)
	b.tick()
	childID := b.run(run.RunID).Step("child").ChildRunID
	require.NotEmpty(t, childID)
	b.fail(b.poll("act-x"), definition.ErrorValidation)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	require.Equal(t, runstate.StepCancelled, snap.Step("child").Status)
	b.tick()
	require.Equal(t, runstate.RunCancelled, b.run(childID).Status)
}

func scenarioSubWorkflow_TheChildsInputExpressionsAreEvaluatedOnceAtDispatch(t *testing.T, b *bundle) {
	run := b.submit(withChild(inlineChild(), `{"n":"${{ steps.a.output.n + 1 }}","who":"${{ run.id }}"}`))
	b.complete(b.poll("act-a"), `{"n":41}`)
	st := b.run(run.RunID).Step("child")
	require.JSONEq(t, `{"n":42,"who":"`+run.RunID+`"}`, string(st.Input), "recorded with the dispatch")
	b.tick()
	require.JSONEq(t, `{"n":42,"who":"`+run.RunID+`"}`, string(b.childOf(run.RunID, "child").Input))

	bad := withChild(inlineChild(), `{"n":"${{ steps.nope.output }}"}`)
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: bad, Start: true, SubmittedBy: "alice"})
	require.Equal(t, CodeInvalidArgument, CodeOf(err))
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "definition.actions[1].workflow.input.n", e.Violations[0].Field)
}

func scenarioSubWorkflow_DeletingTheParentDeletesItsChildrenOnceTheyHaveEnded(t *testing.T, b *bundle) {
	def := withChild(inlineChild(), `{}`)
	def.Actions[1].ParentClose = definition.ParentCloseAbandon
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	childID := b.run(run.RunID).Step("child").ChildRunID
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.tick()
	_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.Equal(t, CodeFailedPrecondition, CodeOf(err), "refused while the abandoned child runs")
	require.Contains(t, err.Error(), "child run "+childID)
	require.Equal(t, runstate.RunCancelled, b.run(run.RunID).Status, "nothing was removed")
	b.complete(b.poll("act-c1"), `1`)
	b.tick()
	_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	for _, id := range []string{run.RunID, childID} {
		_, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: id})
		require.Equal(t, CodeNotFound, CodeOf(err), id)
	}
}

func scenarioSubWorkflow_AChildStartedWhileItsParentIsPausedIsPausedToo(t *testing.T, b *bundle) {
	run := b.submit(withChild(inlineChild(), `{}`))
	b.complete(b.poll("act-a"), `1`) // the step is dispatched: its child-start timer is due
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.tick() // starts the child, which the parent's pause reaches next
	b.tick()
	child := b.childOf(run.RunID, "child")
	require.Equal(t, runstate.RunPaused, child.Status)
	b.pollNone("act-c1")
	_, err = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.tick()
	b.complete(b.poll("act-c1"), `1`)
	b.tick()
	b.complete(b.poll("act-b"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// TestSubWorkflow_CrashAroundTheChildsStartAndEndLeavesOneChildAndFinishesTheStepOnce
// kills the engine (or fails the store's acknowledgement) at every commit
// of a run whose middle step is a sub-workflow, on every backend: exactly
// one child is started, and the parent's step completes once.
func TestSubWorkflow_CrashAroundTheChildsStartAndEndLeavesOneChildAndFinishesTheStepOnce(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			clean := driveChildCrash(t, backend, 0, false)
			require.Greater(t, clean.commits, 8)
			for _, die := range []bool{false, true} {
				for killAt := 1; killAt <= clean.commits; killAt++ {
					out := driveChildCrash(t, backend, killAt, die)
					require.True(t, out.fired, "crash point %d (die %v) was never reached", killAt, die)
				}
			}
		})
	}
}

// driveChildCrash runs withChild(inlineChild()) to the end, interrupting at
// commit killAt (0: never), and checks what it recorded.
func driveChildCrash(t *testing.T, backend crashBackend, killAt int, die bool) crashOutcome {
	t.Helper()
	ctx := context.Background()
	inner, reopen := backend.open(t)
	clk := clock.NewManual(testStart)
	ks := &killSwitch{Store: inner, killAt: killAt, die: die}
	eng, err := New(Config{Store: ks, Clock: clk})
	require.NoError(t, err)
	var runID string
	total := 0
	activities := []string{"act-a", "act-c1", "act-b"}
	for range 400 {
		if ks.isDead() {
			total += ks.commits
			inner = reopen(inner)
			ks = &killSwitch{Store: inner}
			eng, err = New(Config{Store: ks, Clock: clk})
			require.NoError(t, err)
			ks.fired = true
		}
		if runID == "" {
			res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: withChild(inlineChild(), `{}`),
				RunRequestID: "crash", Start: true, SubmittedBy: "alice"})
			if err == nil {
				runID = res.Run.RunID
			}
			continue
		}
		_ = eng.Tick(ctx)
		snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
		if err == nil && snap.Status.Terminal() {
			break
		}
		tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 5})
		if len(tasks) == 0 {
			clk.Advance(time.Second)
			continue
		}
		for _, task := range tasks {
			_, _ = eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w",
				Output: json.RawMessage(`"` + task.ActionID + `"`)})
		}
	}
	require.NotEmpty(t, runID, "the run was never submitted")
	snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, snap.Status, "crash point %d", killAt)
	require.JSONEq(t, `"c1"`, string(snap.Step("child").Output))
	list, err := eng.Queries().ListRuns(ctx, ListRunsParams{TenantID: tenant, PageSize: 100})
	require.NoError(t, err)
	children := 0
	for _, r := range list.Runs {
		if strings.HasPrefix(r.RunRequestID, "child:") {
			children++
		}
	}
	require.Equal(t, 1, children, "exactly one child run (crash point %d)", killAt)
	page, err := eng.ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(t, err)
	counts := map[string]int{}
	for _, ev := range page.Events {
		if ev.StepID == "child" {
			counts[ev.Type]++
		}
	}
	for _, typ := range []string{runstate.EvStepScheduled, runstate.EvChildRunStarted, runstate.EvChildRunEnded, runstate.EvStepCompleted} {
		require.Equal(t, 1, counts[typ], "%s of the sub-workflow step (crash point %d)", typ, killAt)
	}
	return crashOutcome{commits: total + ks.commits, fired: ks.fired}
}

func scenarioSubWorkflow_AFailedChildWithRetriesLeftStartsANewChildUnderANewLogicalAttempt(t *testing.T, b *bundle) {
	child := inlineChild()
	child.Actions[0].Retry.MaxAttempts = 1
	def := withChild(child, `{}`)
	def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 3, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(2000)}
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.tick()
	first := b.run(run.RunID).Step("child").ChildRunID
	b.fail(b.poll("act-c1"), definition.ErrorTransient)
	b.tick() // the child's end reaches the parent: an attempt, and a retry after the backoff
	st := b.run(run.RunID).Step("child")
	require.Equal(t, runstate.StepRunning, st.Status, "waiting for its retry")
	require.Len(t, st.Attempts, 1)
	require.Equal(t, definition.ErrorTransient, st.Attempts[0].Error.Class)
	require.False(t, st.NextAttemptAt.IsZero())
	b.tick()
	require.Len(t, b.childrenOf(run.RunID), 1, "no new child before the backoff")
	b.clock.Advance(2 * time.Second)
	b.tick()
	b.tick()
	st = b.run(run.RunID).Step("child")
	require.Equal(t, 2, st.LogicalAttempt, "a new logical attempt")
	second := st.ChildRunID
	require.NotEmpty(t, second)
	require.NotEqual(t, first, second, "a new child")
	require.Equal(t, decide.ChildRequestID(run.RunID, "child", 2), b.run(second).RunRequestID)
	b.complete(b.poll("act-c1"), `{"ok":true}`)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSucceeded, snap.Step("child").Status)
	require.JSONEq(t, `{"ok":true}`, string(snap.Step("child").Output))
	require.Len(t, b.childrenOf(run.RunID), 2, "one child per logical attempt")
	require.Equal(t, 2, countEvents(b, run.RunID, runstate.EvChildRunStarted))
	b.complete(b.poll("act-b"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
