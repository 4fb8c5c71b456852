package decide_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/runstate"
)

// recorder is the rules' Recorder over memory: status moves through the
// transition tables, as the engine's recorder makes them, and every task,
// timer and event kept for the test to look at.
type recorder struct {
	s         *runstate.State
	events    []runstate.Event
	tasks     map[string]decide.TaskKind
	timers    map[decide.Timer]bool
	recon     map[string]decide.Recon
	signals   map[string]json.RawMessage
	slots     bool // a free slot of each limit is prepared
	took      int  // TakeSlots calls
	queued    bool
	preempted int // Preempt calls
	illegal   []string
}

func newRecorder(s *runstate.State) *recorder {
	return &recorder{s: s, tasks: map[string]decide.TaskKind{}, timers: map[decide.Timer]bool{},
		recon: map[string]decide.Recon{}, signals: map[string]json.RawMessage{}, slots: true}
}

func (r *recorder) Emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	r.EmitBy("test", typ, stepID, logical, engineAttempt, data)
}

func (r *recorder) EmitBy(actor, typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	r.s.LastSeq++
	r.events = append(r.events, runstate.Event{Type: typ, StepID: stepID, Seq: r.s.LastSeq, EmittedBy: actor, Data: data})
}

func (r *recorder) MoveRun(to runstate.RunStatus) error {
	if r.s.Status == to {
		return nil
	}
	if !runstate.RunTransitionAllowedFor(r.s, to) {
		r.illegal = append(r.illegal, fmt.Sprintf("run %s -> %s", r.s.Status, to))
		return errors.New("illegal run move")
	}
	r.s.Status, r.s.Substatus, r.s.Message = to, "", ""
	return nil
}

func (r *recorder) MoveStep(st *runstate.StepState, to runstate.StepStatus) error {
	if st.Status == to {
		return nil
	}
	if !runstate.StepTransitionAllowed(st.Status, to) {
		r.illegal = append(r.illegal, fmt.Sprintf("step %s %s -> %s", st.ActionID, st.Status, to))
		return errors.New("illegal step move")
	}
	st.Status = to
	return nil
}

func (r *recorder) Changed()                  {}
func (r *recorder) SetTimer(t decide.Timer)   { r.timers[t] = true }
func (r *recorder) ClearTimer(t decide.Timer) { delete(r.timers, t) }

func (r *recorder) NewTask(kind decide.TaskKind, a *definition.Action, st *runstate.StepState, _ time.Time) (string, string) {
	attempt := st.EngineAttempt
	if kind == decide.TaskCompensation {
		attempt = st.CompAttempt
	}
	id := fmt.Sprintf("%s/%d/%s%d", a.ID, st.LogicalAttempt, kind, attempt)
	r.tasks[id] = kind
	return id, "ready/" + id
}

func (r *recorder) RetireTask(taskID, _ string) { delete(r.tasks, taskID) }

func (r *recorder) RecordRecon(a *definition.Action, _ *runstate.StepState, rec decide.Recon) {
	r.recon[a.ID] = rec
}
func (r *recorder) TakeSlots()                 { r.took++ }
func (r *recorder) Enqueue()                   { r.queued = true }
func (r *recorder) Preempt()                   { r.preempted++ }
func (r *recorder) Alert(string, ...slog.Attr) {}

// prepared is what the engine would have read for a decision: the records,
// payloads and slots the recorder holds.
func (r *recorder) prepared() *decide.Prepared {
	slots := decide.SlotsFull
	if r.slots {
		slots = decide.SlotsFree
	}
	recons := make(map[string]decide.Recon, len(r.recon))
	for id, rec := range r.recon {
		recons[id] = rec
	}
	return &decide.Prepared{Recons: recons, Payloads: r.signals, Slots: slots}
}

// run is one run under the rules: its definition, state and recorder, and
// a clock; each call is one decision.
type run struct {
	t   *testing.T
	def definition.Definition
	s   *runstate.State
	rec *recorder
	now time.Time
}

func newRun(t *testing.T, def definition.Definition) *run {
	def = def.WithDefaults()
	require.NoError(t, def.Validate())
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	s := decide.InitialState("r", &def, now)
	return &run{t: t, def: def, s: s, rec: newRecorder(s), now: now}
}

// decide makes one decision.
func (r *run) decide(f func(d *decide.Decision) error) error {
	r.now = r.now.Add(time.Second)
	d := decide.New(decide.Run{ID: "r", Definition: &r.def, Admission: decide.Admission{Mode: definition.BackpressureQueue},
		Context: &runstate.RunContext{TenantID: "t"}}, r.s, r.now, r.rec.prepared(), r.rec)
	return f(&d)
}

func (r *run) action(id string) *definition.Action {
	return r.def.Action(id) // an item of a fan-out too (definition.ItemAction)
}

// scheduled answers the steps with a task waiting for a worker, in the order of the definition.
func (r *run) scheduled() []string {
	var out []string
	for _, st := range r.s.Steps {
		if st.TaskID != "" && st.ReadyKey != "" {
			out = append(out, st.ActionID)
		}
	}
	return out
}

// claim and report one attempt of a step: ok completes it, else it fails with class.
func (r *run) attempt(actionID string, ok bool, class definition.ErrorClass) error {
	st, a := r.s.Step(actionID), r.action(actionID)
	kind, taskID := r.rec.tasks[st.TaskID], st.TaskID
	if st.CompTaskID != "" {
		kind, taskID = decide.TaskCompensation, st.CompTaskID
	}
	if !decide.Claimable(r.s, actionID, taskID) {
		return nil // a poll would leave it: the run is paused or the task no longer its step's
	}
	if err := r.decide(func(d *decide.Decision) error { return d.Claimed(kind, a, st, "w", false) }); err != nil {
		return err
	}
	return r.decide(func(d *decide.Decision) error {
		switch {
		case kind == decide.TaskCompensation:
			return d.FinishCompensation(a, st, ok, &runstate.StepError{Class: class})
		case ok:
			return d.SucceedAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptSucceeded, Output: json.RawMessage(`1`)})
		}
		return d.FailAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptFailed, Err: &runstate.StepError{Class: class}})
	})
}

func action(id string, order int, deps ...string) definition.Action {
	return definition.Action{ID: id, Order: order, Activity: "act-" + id, DependsOn: deps}
}

func TestTrigger_StartsARunAndDispatchesWhatIsRunnableInDispatchOrder(t *testing.T) {
	cases := []struct {
		name string
		def  definition.Definition
		want []string
	}{
		{"a sequence runs its first action only", definition.Definition{PlanID: "p", PlanVersion: "1",
			Actions: []definition.Action{action("b", 2), action("a", 1), action("c", 3)}}, []string{"a"}},
		{"a DAG runs every root", definition.Definition{PlanID: "p", PlanVersion: "1", DAG: true,
			Actions: []definition.Action{action("z", 1), action("y", 1), action("x", 2, "z")}}, []string{"z", "y"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t, c.def)
			require.NoError(t, r.decide((*decide.Decision).Trigger))
			require.Equal(t, runstate.RunRunning, r.s.Status)
			var order []string
			for _, ev := range r.rec.events {
				if ev.Type == runstate.EvStepScheduled {
					order = append(order, ev.StepID)
				}
			}
			require.ElementsMatch(t, c.want, r.scheduled())
			want := append([]string(nil), c.want...)
			if c.def.DAG { // dispatch order: order, then id byte-wise
				want = []string{"y", "z"}
			}
			require.Equal(t, want, order)
		})
	}
}

func TestAdmit_AtALimitQueuesUnlessDelayed(t *testing.T) {
	r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{action("a", 1)}})
	r.rec.slots = false
	require.NoError(t, r.decide((*decide.Decision).Trigger))
	require.Equal(t, runstate.RunQueued, r.s.Status)
	require.True(t, r.rec.queued, "a queued run is in the run queue")
	require.Empty(t, r.scheduled())
	r.rec.slots = true
	require.NoError(t, r.decide((*decide.Decision).Admit))
	require.Equal(t, runstate.RunRunning, r.s.Status)
	require.Equal(t, []string{"a"}, r.scheduled())
}

// The rules never read: what they need is prepared, and a value that was
// not prepared is an error, never "absent" — admitting a run whose slots
// were not read, or consuming a signal whose payload was not.
func TestRules_AValueNotPreparedIsAnErrorNeverAbsent(t *testing.T) {
	r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{action("a", 1)}})
	d := decide.New(decide.Run{ID: "r", Definition: &r.def}, r.s, r.now, &decide.Prepared{}, r.rec)
	require.ErrorContains(t, d.Trigger(), "concurrency slots were not read")
	require.Zero(t, r.rec.took, "no slot taken")

	wait := action("w", 1)
	wait.Activity, wait.WaitForSignal = "", &definition.SignalWait{SignalName: "go"}
	r = newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{wait}})
	require.NoError(t, r.decide((*decide.Decision).Trigger))
	r.s.Signals = append(r.s.Signals, runstate.PendingSignal{Name: "go", ID: "s0", StorageKey: "sig/s0"})
	d = decide.New(decide.Run{ID: "r", Definition: &r.def}, r.s, r.now, &decide.Prepared{}, r.rec)
	err := d.AcceptSignal(runstate.PendingSignal{Name: "go", ID: "s1", StorageKey: "sig/s1"}, json.RawMessage(`1`))
	require.ErrorContains(t, err, `the payload of signal "s0" was not read`)

	// The payload a decision accepts is its own value: consumed at once.
	r = newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{wait}})
	require.NoError(t, r.decide((*decide.Decision).Trigger))
	require.NoError(t, r.decide(func(d *decide.Decision) error {
		return d.AcceptSignal(runstate.PendingSignal{Name: "go", ID: "s1", StorageKey: "sig/s1"}, json.RawMessage(`{"v":1}`))
	}))
	require.Equal(t, runstate.RunCompleted, r.s.Status)
	require.JSONEq(t, `{"v":1}`, string(r.s.Step("w").Output))
}

func TestFailAttempt_OnFailureDecidesWhatTheRunDoes(t *testing.T) {
	cases := []struct {
		onFailure definition.OnFailure
		run       runstate.RunStatus
		step      runstate.StepStatus
	}{
		{definition.OnFailureAbort, runstate.RunFailed, runstate.StepFailed},
		{definition.OnFailureSkip, runstate.RunCompleted, runstate.StepSkipped},
		{definition.OnFailureHold, runstate.RunBlocked, runstate.StepFailed},
		{definition.OnFailureCompensate, runstate.RunCompensating, runstate.StepFailed},
	}
	for _, c := range cases {
		t.Run(string(c.onFailure), func(t *testing.T) {
			first := action("a", 1)
			first.Compensation = &definition.CompensationHook{Operation: "undo-a"}
			second := action("b", 2)
			second.OnFailure, second.Retry.MaxAttempts = c.onFailure, 2
			r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{first, second}})
			require.NoError(t, r.decide((*decide.Decision).Trigger))
			require.NoError(t, r.attempt("a", true, ""))
			require.NoError(t, r.attempt("b", false, definition.ErrorTransient))
			require.Equal(t, runstate.StepRunning, r.s.Step("b").Status, "a transient failure is retried under the policy")
			require.True(t, r.rec.timers[decide.Timer{Kind: decide.TimerBackoff, Ref: "b", Due: r.s.Step("b").NextAttemptAt}])
			r.now = r.s.Step("b").NextAttemptAt
			require.NoError(t, r.decide(func(d *decide.Decision) error {
				return d.TimerDue(decide.Timer{Kind: decide.TimerBackoff, Ref: "b"})
			}))
			require.NoError(t, r.attempt("b", false, definition.ErrorTransient))
			require.Equal(t, c.run, r.s.Status)
			require.Equal(t, c.step, r.s.Step("b").Status)
			if c.run == runstate.RunCompensating {
				require.Equal(t, "a", r.s.Compensation.Order[0])
				require.NoError(t, r.attempt("a", true, ""))
				require.Equal(t, runstate.RunFailed, r.s.Status)
				require.Equal(t, runstate.CompensationRolledBack, r.s.Compensation.Outcome)
			}
			require.Empty(t, r.rec.illegal)
		})
	}
}

func TestControls_ARequestTheStateDoesNotAllowIsARefusal(t *testing.T) {
	cases := []struct {
		name   string
		apply  func(*decide.Decision) error
		reason decide.Reason
	}{
		{"resume a running run", func(d *decide.Decision) error { return d.Resume(decide.Control{}) }, decide.IllegalMove},
		{"approve a run that needs no approval", func(d *decide.Decision) error { return d.Approve(decide.Control{}) }, decide.Conflict},
		{"retry a step that is not held", func(d *decide.Decision) error { return d.RetryStep(decide.Control{ActionID: "a"}) }, decide.IllegalMove},
		{"skip an action the run does not have", func(d *decide.Decision) error { return d.SkipStep(decide.Control{ActionID: "nope"}) }, decide.NoAction},
		{"skip a step that has started", func(d *decide.Decision) error { return d.SkipStep(decide.Control{ActionID: "a"}) }, decide.IllegalMove},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{action("a", 1)}})
			require.NoError(t, r.decide((*decide.Decision).Trigger))
			before := len(r.rec.events)
			var refusal *decide.Refusal
			require.ErrorAs(t, r.decide(c.apply), &refusal)
			require.Equal(t, c.reason, refusal.Reason)
			require.Len(t, r.rec.events, before, "a refusal changes nothing")
		})
	}
}

// TestRules_RandomHistoriesOnlyMakeLegalMoves drives random definitions
// through random outcomes, pauses, resumes, cancels and timeouts with the
// rules alone, and checks that no rule ever asks for a move the transition
// tables refuse and that a run that has ended stays ended.
func TestRules_RandomHistoriesOnlyMakeLegalMoves(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var actions []definition.Action
		policies := []definition.OnFailure{definition.OnFailureAbort, definition.OnFailureSkip, definition.OnFailureCompensate, definition.OnFailureHold}
		dag := rng.IntN(2) == 0
		for i := range 1 + rng.IntN(5) {
			a := action(fmt.Sprint("s", i), i+1)
			if dag && i > 0 && rng.IntN(2) == 0 {
				a.DependsOn = []string{fmt.Sprint("s", rng.IntN(i))}
			}
			a.OnFailure, a.Retry.MaxAttempts = policies[rng.IntN(4)], 1+rng.IntN(2)
			if rng.IntN(2) == 0 {
				a.Compensation = &definition.CompensationHook{Operation: "undo"}
			}
			actions = append(actions, a)
		}
		r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", DAG: dag, Actions: actions})
		require.NoError(t, r.decide((*decide.Decision).Trigger))
		var ended runstate.RunStatus
		for range 30 {
			var err error
			switch op := rng.IntN(10); {
			case op < 6:
				if ready := r.scheduled(); len(ready) > 0 {
					err = r.attempt(ready[rng.IntN(len(ready))], rng.IntN(3) > 0, definition.ErrorTransient)
				} else if st := compensating(r.s); st != "" {
					err = r.attempt(st, rng.IntN(2) == 0, definition.ErrorTransient)
				}
			case op == 6:
				err = r.decide(func(d *decide.Decision) error { return d.Pause(decide.Control{}, time.Minute) })
			case op == 7:
				err = r.decide(func(d *decide.Decision) error { return d.Resume(decide.Control{}) })
			case op == 8:
				err = r.decide(func(d *decide.Decision) error { return d.Cancel(decide.Control{Compensate: rng.IntN(2) == 0}) })
			default:
				r.now = r.now.Add(time.Hour)
				err = r.decide(func(d *decide.Decision) error {
					return d.TimerDue(decide.Timer{Kind: decide.TimerWorkflow})
				})
			}
			var refusal *decide.Refusal
			if err != nil && !errors.As(err, &refusal) {
				t.Fatalf("seed %d: %v (illegal moves: %v)", seed, err, r.rec.illegal)
			}
			if ended != "" {
				require.Equal(t, ended, r.s.Status, "seed %d: a run that ended never changes", seed)
			} else if r.s.Status.Terminal() {
				ended = r.s.Status
			}
		}
		require.Empty(t, r.rec.illegal, "seed %d", seed)
	}
}

// compensating answers the step whose compensation task waits, if any.
func compensating(s *runstate.State) string {
	for _, st := range s.Steps {
		if st.CompTaskID != "" {
			return st.ActionID
		}
	}
	return ""
}

// TestAdmit_AFullConcurrencyKeyFollowsItsStrategyUnderEveryMode is the
// table of docs/semantics.md#run-concurrency: a run whose key is full
// follows its strategy whatever the backpressure mode (queue and
// cancelInProgress wait QUEUED, the latter asking for the oldest holder's
// cancel; cancelNewest ends CANCELLED); with its key free and a plan limit
// full, the mode decides, and DELAY still takes the key's slot.
func TestAdmit_AFullConcurrencyKeyFollowsItsStrategyUnderEveryMode(t *testing.T) {
	type want struct {
		status    runstate.RunStatus
		took      int
		queued    bool
		preempted int
	}
	for _, c := range []struct {
		strategy definition.ConcurrencyStrategy
		mode     definition.BackpressureMode
		keyFull  bool
		slots    decide.Slots
		want     want
	}{
		{definition.StrategyQueue, definition.BackpressureQueue, true, decide.SlotsFull, want{runstate.RunQueued, 0, true, 0}},
		{definition.StrategyQueue, definition.BackpressureDelay, true, decide.SlotsFull, want{runstate.RunQueued, 0, true, 0}},
		{definition.StrategyQueue, definition.BackpressureReject, true, decide.SlotsFull, want{runstate.RunQueued, 0, true, 0}},
		{"", definition.BackpressureDelay, true, decide.SlotsFull, want{runstate.RunQueued, 0, true, 0}},
		{definition.StrategyCancelNewest, definition.BackpressureQueue, true, decide.SlotsFull, want{runstate.RunCancelled, 0, false, 0}},
		{definition.StrategyCancelNewest, definition.BackpressureDelay, true, decide.SlotsFull, want{runstate.RunCancelled, 0, false, 0}},
		{definition.StrategyCancelInProgress, definition.BackpressureQueue, true, decide.SlotsFull, want{runstate.RunQueued, 0, true, 1}},
		{definition.StrategyCancelInProgress, definition.BackpressureDelay, true, decide.SlotsFull, want{runstate.RunQueued, 0, true, 1}},
		{definition.StrategyCancelNewest, definition.BackpressureQueue, false, decide.SlotsFree, want{runstate.RunRunning, 1, false, 0}},
		{definition.StrategyCancelNewest, definition.BackpressureQueue, false, decide.SlotsFull, want{runstate.RunQueued, 0, true, 0}},
		{definition.StrategyCancelInProgress, definition.BackpressureDelay, false, decide.SlotsFull, want{runstate.RunRunning, 1, false, 0}},
	} {
		t.Run(fmt.Sprintf("%s/%s/keyFull=%v/slots=%d", c.strategy, c.mode, c.keyFull, c.slots), func(t *testing.T) {
			r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{action("a", 1)},
				Concurrency: &definition.RunConcurrency{Key: "input.k", Limit: 1, Strategy: c.strategy}})
			p := &decide.Prepared{Slots: c.slots, KeyFull: c.keyFull, KeyWait: "concurrency key k at 1/1"}
			d := decide.New(decide.Run{ID: "r", Definition: &r.def, Admission: decide.Admission{Mode: c.mode, Delay: time.Second},
				Context: &runstate.RunContext{TenantID: "t"}}, r.s, r.now, p, r.rec)
			require.NoError(t, d.Trigger())
			got := want{r.s.Status, r.rec.took, r.rec.queued, r.rec.preempted}
			require.Equal(t, c.want, got)
			if got.status == runstate.RunCancelled {
				require.Equal(t, "concurrency key k at 1/1: strategy cancelNewest cancels the run that finds its key full", r.s.Cancellation.Reason)
			}
		})
	}
}
