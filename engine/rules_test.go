package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

func TestTransitions_IllegalTransitionIsAnErrorNeverApplied(t *testing.T) {
	ch := newChange(nil, nil, &record.Run{RunID: "r"}, &runstate.State{Status: runstate.RunCompleted}, time.Time{}, "")
	err := ch.transition(runstate.RunQueued)
	require.Equal(t, CodeIllegalTransition, CodeOf(err))
	require.Equal(t, runstate.RunCompleted, ch.state.Status)
}

// runStatusOf answers the run status an event moves to, if it is a run event.
func runStatusOf(ev runstate.Event) (runstate.RunStatus, bool) {
	switch ev.Type {
	case runstate.EvRunSubmitted, runstate.EvRunApproved, runstate.EvRunQueued, runstate.EvRunStarted, runstate.EvRunBlocked, runstate.EvRunUnblocked, runstate.EvRunPaused,
		runstate.EvRunResumed, runstate.EvRunCompensating, runstate.EvRunCompleted, runstate.EvRunFailed, runstate.EvRunCancelled,
		runstate.EvRunRerun:
		return runstate.RunStatus(ev.Data.Status), true
	}
	return "", false
}

// TestStateMachine_RandomOperationsOnlyMakeLegalTransitions drives random
// definitions with random worker and operator behaviour, and checks after
// each step that every status change in the log is legal, that an ended
// run changes only by a rerun, and that the projection agrees with the checkpoint.
func TestStateMachine_RandomOperationsOnlyMakeLegalTransitions(t *testing.T) {
	for seed := range uint64(150) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			b := setupWith(t, memstore.New(memstore.Config{}))
			rng := rand.New(rand.NewPCG(seed, 1))
			run := b.submit(randomDefinition(rng))
			for range 40 {
				randomOperation(b, rng, run.RunID)
			}
			requireLegalHistory(t, b, run.RunID)
		})
	}
}

func randomDefinition(rng *rand.Rand) definition.Definition {
	n := 1 + rng.IntN(5)
	d := definition.Definition{PlanID: "plan", PlanVersion: "1"}
	policies := []definition.OnFailure{definition.OnFailureAbort, definition.OnFailureSkip, definition.OnFailureCompensate, definition.OnFailureHold}
	for i := range n {
		a := definition.Action{ID: fmt.Sprintf("s%d", i), Order: i + 1, Activity: "x", OnFailure: policies[rng.IntN(4)]}
		a.Retry.MaxAttempts = 1 + rng.IntN(2)
		if i > 0 && rng.IntN(2) == 0 {
			a.DependsOn = []string{fmt.Sprintf("s%d", rng.IntN(i))}
		}
		switch rng.IntN(6) {
		case 0:
			a.Activity, a.WaitForSignal = "", &definition.SignalWait{SignalName: "go"}
		case 1:
			a.Completion = definition.CompletionManual
		}
		if rng.IntN(2) == 0 {
			a.Compensation = &definition.CompensationHook{Operation: "undo"}
		}
		d.Actions = append(d.Actions, a)
	}
	return d
}

func randomOperation(b *bundle, rng *rand.Rand, runID string) {
	ctx := b.ctx
	classes := []definition.ErrorClass{definition.ErrorTransient, definition.ErrorValidation, definition.ErrorTimeout, definition.ErrorGovernance}
	switch rng.IntN(10) {
	case 0, 1, 2:
		tasks, _ := b.eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"x"}, Compensations: []string{"undo"}, MaxTasks: 3})
		for _, task := range tasks {
			if rng.IntN(3) == 0 {
				_, _ = b.eng.FailTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", ErrorClass: classes[rng.IntN(4)]})
			} else {
				_, _ = b.eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`1`)})
			}
		}
	case 3:
		_, _ = b.eng.SignalRun(ctx, SignalParams{TenantID: tenant, RunID: runID, SignalName: "go", Payload: json.RawMessage(`"s"`)})
	case 4:
		snap := b.run(runID)
		for _, st := range snap.Steps {
			if st.Status == runstate.StepWaitingManual {
				outcome := []runstate.ManualOutcome{runstate.ManualSucceeded, runstate.ManualFailed, runstate.ManualCancelled}[rng.IntN(3)]
				_, _ = b.eng.CompleteManualAction(ctx, ManualCompletionParams{TenantID: tenant, RunID: runID, ActionID: st.ActionID,
					CompletionToken: st.CompletionToken, Outcome: outcome, ActorUserID: "bob"})
			}
		}
	case 5:
		_, _ = b.eng.PauseRun(ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op"})
	case 6:
		_, _ = b.eng.ResumeRun(ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op"})
	case 7:
		snap := b.run(runID)
		for _, st := range snap.Steps {
			if st.Status == runstate.StepFailed || st.Status == runstate.StepCancelled {
				_, _ = b.eng.RetryStep(ctx, ControlParams{TenantID: tenant, RunID: runID, ActionID: st.ActionID, Actor: "op"})
				_, _ = b.eng.SkipStep(ctx, ControlParams{TenantID: tenant, RunID: runID, ActionID: st.ActionID, Actor: "op"})
			}
		}
	case 8:
		b.clock.Advance(time.Duration(rng.IntN(400)) * time.Second)
		_ = b.eng.Tick(ctx)
	case 9:
		if rng.IntN(4) == 0 {
			_, _ = b.eng.CancelRun(ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op", Compensate: rng.IntN(2) == 0})
		}
		if snap := b.run(runID); snap.Status.Terminal() && rng.IntN(2) == 0 {
			from := snap.Steps[rng.IntN(len(snap.Steps))].ActionID
			_, _ = b.eng.RerunRun(ctx, ControlParams{TenantID: tenant, RunID: runID, ActionID: from, Actor: "op"})
		}
	}
}

func requireLegalHistory(t *testing.T, b *bundle, runID string) {
	t.Helper()
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(t, err)
	var status runstate.RunStatus
	cancelCompensation := false
	for _, ev := range page.Events {
		to, ok := runStatusOf(ev)
		if !ok {
			continue
		}
		if status != "" && to != status {
			require.True(t, runstate.RunTransitionAllowedWhen(status, to, cancelCompensation), "illegal %s -> %s at run_seq %d", status, to, ev.Seq)
		}
		if ev.Type == runstate.EvRunCompensating {
			cancelCompensation = ev.Data.CancelRequested
		}
		require.True(t, !status.Terminal() || ev.Type == runstate.EvRunRerun, "an ended run changed other than by a rerun at run_seq %d", ev.Seq)
		status = to
	}
	require.Equal(t, status, b.run(runID).Status)
}

func TestSecrets_OnlyReferencesAreEverStored(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	const secretValue = "sk_live_4f9d2a7c1e"
	def := seq("charge")
	def.Actions[0].Secrets = []definition.SecretRef{{Name: "api_key", Ref: "vault://payments#api_key"}}
	run := b.submit(def)
	task := b.poll("act-charge")
	require.Equal(t, []definition.SecretRef{{Name: "api_key", Ref: "vault://payments#api_key"}}, task.Secrets)
	resolved := map[string]string{"vault://payments#api_key": secretValue} // what the worker's provider answers
	require.NotEmpty(t, resolved[task.Secrets[0].Ref])
	b.complete(task, `{"charged":true}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	res, err := st.Scan(b.ctx, &store.ScanParams{Limit: store.MaxScanLimit})
	require.NoError(t, err)
	require.Nil(t, res.Next)
	for _, it := range res.Items {
		require.False(t, bytes.Contains(it.Value, []byte(secretValue)), "key %s holds the secret", it.Key)
		require.False(t, bytes.Contains(it.Key, []byte(secretValue)))
	}
}

func TestOutputs_OverTheInlineLimitAreRefusedAndArtifactsKeptAsReferences(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	task := b.poll("act-a")
	big := json.RawMessage(`"` + string(bytes.Repeat([]byte("x"), DefaultInlineResultLimit)) + `"`)
	_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: big})
	require.Equal(t, CodePayloadTooLarge, CodeOf(err))
	require.NotContains(t, err.Error(), "xxxx", "the error carries no payload")
	art := runstate.ArtifactRef{URI: "s3://bucket/out.json", Kind: "result", SHA256: strings.Repeat("ab", 32), SizeBytes: 1 << 30}
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Artifacts: []runstate.ArtifactRef{art}})
	require.NoError(t, err)
	snap := b.run(run.RunID)
	require.Equal(t, []runstate.ArtifactRef{art}, snap.Step("a").Artifacts)
	require.Equal(t, []runstate.ArtifactRef{art}, snap.Artifacts)
}

func TestDispatch_PropertyRunnableActionsLeaveInOrderThenIDOrder(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 2))
		b := setupWith(t, memstore.New(memstore.Config{}))
		n := 2 + rng.IntN(8)
		levels := 1 + rng.IntN(n)
		def := definition.Definition{PlanID: "plan", PlanVersion: "1", DAG: true}
		for i := range n {
			id := string([]byte{"aAbBZ9z0"[rng.IntN(8)], "_.-x"[rng.IntN(4)], byte('a' + i)})
			order := 1 + i%levels
			def.Actions = append(def.Actions, definition.Action{ID: id, Order: order, Activity: "x"})
		}
		b.submit(def)
		got := b.pollAll("x", 100)
		require.Len(t, got, n, "every action is a root")
		for i := 1; i < len(got); i++ {
			prev, cur := def.Actions[indexOf(def, got[i-1].ActionID)], def.Actions[indexOf(def, got[i].ActionID)]
			inOrder := prev.Order < cur.Order || (prev.Order == cur.Order && prev.ID < cur.ID)
			require.True(t, inOrder, "seed %d: %s(order %d) before %s(order %d)", seed, prev.ID, prev.Order, cur.ID, cur.Order)
		}
	}
}

func indexOf(d definition.Definition, id string) int {
	for i, a := range d.Actions {
		if a.ID == id {
			return i
		}
	}
	return -1
}

// TestRules_TimerAndTaskKindsAreThePersistedOnes: the rules name timers and
// tasks by the kinds the engine persists, so a kind the rules set is the
// kind the engine fires, polls and reports.
func TestRules_TimerAndTaskKindsAreThePersistedOnes(t *testing.T) {
	timers := map[decide.TimerKind]record.TimerKind{decide.TimerBackoff: record.TimerBackoff, decide.TimerWorkflow: record.TimerWorkflow,
		decide.TimerDrain: record.TimerDrain, decide.TimerWait: record.TimerWait, decide.TimerSleep: record.TimerSleep}
	for rule, persisted := range timers {
		require.Equal(t, string(persisted), string(rule))
	}
	tasks := map[decide.TaskKind]TaskKind{decide.TaskActivity: TaskActivity, decide.TaskVerify: TaskVerify,
		decide.TaskCompensation: TaskCompensation}
	for rule, persisted := range tasks {
		require.Equal(t, string(persisted), string(rule))
	}
}
