package engine

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
)

// bundle is one test's engine, store and clock.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	eng   *Engine
	store store.Store
	clock *clock.Manual
	// claimed remembers every task polled, by task id.
	claimed map[string]*Task
	// noProjectionCheck turns off the end-of-test projection comparison.
	noProjectionCheck bool
	// alerts records every alert the engine raised.
	alerts *alertRecorder
	// validated counts the events the scenario validator accepted.
	validated *atomic.Int64
}

const tenant = "tenant-a"

// testStart is where every test's clock starts.
var testStart = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T) *bundle {
	t.Helper()
	return setupWith(t, setupOnceChecked(t))
}

func setupWith(t *testing.T, st store.Store, configure ...func(*Config)) *bundle {
	t.Helper()
	clk := clock.NewManual(testStart)
	alerts, validated := &alertRecorder{}, &atomic.Int64{}
	cfg := Config{Store: st, Clock: clk, Alerts: alerts.record}
	// A decision that used its arena after giving it back would record poison (arena.go).
	cfg.poisonArenas = true
	cfg.validateEvent = func(ev *runstate.Event) error { // the default schema check, counted
		err := eventpb.Check(ev)
		if err == nil {
			validated.Add(1)
		}
		return err
	}
	for _, c := range configure {
		c(&cfg)
	}
	eng, err := New(cfg)
	require.NoError(t, err)
	b := &bundle{t: t, ctx: context.Background(), eng: eng, store: st, clock: clk, claimed: map[string]*Task{},
		alerts: alerts, validated: validated}
	t.Cleanup(b.requireProjectionsMatchCheckpoints)
	t.Cleanup(b.requireEventKeysMatchCheckpoints) // eventkeys_test.go
	return b
}

// requireProjectionsMatchCheckpoints checks, after every scenario, that each
// run's snapshot reduced from its event log alone agrees with the checkpoint.
func (b *bundle) requireProjectionsMatchCheckpoints() {
	t := b.t
	if t.Failed() || b.noProjectionCheck {
		return
	}
	defer func() {
		for _, name := range []string{AlertProjectorCausalViolation, AlertProjectorNonContiguousFetch} {
			require.Empty(t, b.alerts.named(name), "a run the engine wrote in order raised %s", name)
		}
	}()
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(t, err)
	for _, r := range list.Runs {
		p, err := NewProjector(b.ctx, b.eng, ProjectionParams{TenantID: tenant, RunID: r.RunID})
		require.NoError(t, err)
		require.NoError(t, p.Catch(b.ctx))
		got, want := comparable(p.Snapshot()), comparable(b.run(r.RunID))
		require.Equal(t, want, got, "projection of run %s disagrees with its checkpoint", r.RunID)
	}
}

// comparable keeps what both a projection and a checkpoint know.
func comparable(s *runstate.Snapshot) map[string]any {
	out := map[string]any{
		"status": s.Status, "substatus": s.Substatus, "message": s.Message, "seq": s.LastEventSeq,
		"created": s.CreatedAt, "started": s.StartedAt, "completed": s.CompletedAt, "duration": s.TotalDuration,
		"error": s.Error, "cancellation": s.Cancellation, "outcome": s.CompensationOutcome,
		"failed_steps": s.FailedSteps(),
	}
	for _, st := range s.Steps {
		out["step "+st.ActionID] = map[string]any{
			"status": st.Status, "logical": st.LogicalAttempt, "attempts": st.Attempts, "output": string(st.Output),
			"error": st.Error, "token": st.CompletionToken, "signal": st.WaitingSignal, "reason": st.Reason,
			"comp": st.CompStatus, "comp_error": st.CompError, "completed": st.CompletedAt, "scheduled": st.ScheduledAt,
			"manual": st.Manual,
		}
	}
	return out
}

// seq builds a sequential definition of activities named after their ids.
func seq(ids ...string) definition.Definition {
	d := definition.Definition{PlanID: "plan", PlanVersion: "1"}
	for i, id := range ids {
		d.Actions = append(d.Actions, definition.Action{ID: id, Order: i + 1, Activity: "act-" + id})
	}
	return d
}

func (b *bundle) submit(def definition.Definition) *runstate.Snapshot {
	b.t.Helper()
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
	require.NoError(b.t, err)
	return res.Run
}

// poll claims one task of the given activities, failing the test if none is ready.
func (b *bundle) poll(activities ...string) *Task {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: activities})
	require.NoError(b.t, err)
	require.Len(b.t, tasks, 1, "expected one ready task of %v", activities)
	b.claimed[tasks[0].TaskID] = tasks[0]
	return tasks[0]
}

func (b *bundle) pollNone(activities ...string) {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: activities})
	require.NoError(b.t, err)
	require.Empty(b.t, tasks)
}

func (b *bundle) complete(task *Task, output string) {
	b.t.Helper()
	_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(output)})
	require.NoError(b.t, err)
}

func (b *bundle) fail(task *Task, class definition.ErrorClass) *ReportResult {
	b.t.Helper()
	res, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", ErrorClass: class, Message: "boom"})
	require.NoError(b.t, err)
	return res
}

func (b *bundle) run(runID string) *runstate.Snapshot {
	b.t.Helper()
	snap, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: runID})
	require.NoError(b.t, err)
	return snap
}

func (b *bundle) eventTypes(runID string) []string {
	b.t.Helper()
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(b.t, err)
	var out []string
	for _, ev := range res.Events {
		out = append(out, ev.Type)
	}
	return out
}

func (b *bundle) tick() {
	b.t.Helper()
	require.NoError(b.t, b.eng.Tick(b.ctx))
}

func scenarioSequential_RunsEachActionAfterThePreviousSucceeds(t *testing.T, b *bundle) {
	run := b.submit(seq("a", "b", "c"))
	require.Equal(t, runstate.RunRunning, run.Status)
	b.pollNone("act-b", "act-c")
	ta := b.poll("act-a", "act-b", "act-c")
	require.Equal(t, "a", ta.ActionID)
	b.pollNone("act-b", "act-c")
	b.complete(ta, `{"n":1}`)
	tb := b.poll("act-a", "act-b", "act-c")
	require.Equal(t, "b", tb.ActionID)
	require.JSONEq(t, `{"n":1}`, string(tb.UpstreamOutputs["a"]))
	b.complete(tb, `{"n":2}`)
	b.complete(b.poll("act-c"), `{"n":3}`)
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	for _, st := range snap.Steps {
		require.Equal(t, runstate.StepSucceeded, st.Status)
		require.False(t, st.StartedAt.IsZero(), "started_at of %s", st.ActionID)
		require.False(t, st.CompletedAt.IsZero(), "completed_at of %s", st.ActionID)
	}
	require.Equal(t, []string{
		runstate.EvRunSubmitted, runstate.EvRunQueued, runstate.EvRunStarted,
		runstate.EvStepScheduled, runstate.EvStepStarted, runstate.EvStepAttemptRecorded, runstate.EvStepCompleted,
		runstate.EvStepScheduled, runstate.EvStepStarted, runstate.EvStepAttemptRecorded, runstate.EvStepCompleted,
		runstate.EvStepScheduled, runstate.EvStepStarted, runstate.EvStepAttemptRecorded, runstate.EvStepCompleted,
		runstate.EvRunCompleted,
	}, b.eventTypes(run.RunID))
}
