package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// change is one decision about one run: its recorder, and the rules
// (rules) that decide over it. commitDecision makes it, commits it and
// settles its effects.
type change struct {
	recorder
	// eager is the slot of the worker whose report the decision applies,
	// when it asked for its next tasks (eager dispatch): served before any
	// waiting poll.
	eager *dispatch.Slot[*Task]
	// decision is the rules applied to the run (rules), made on first use
	// (ruled).
	decision decide.Decision
	ruled    bool
}

// newChange answers a decision about run, starting from state.
func newChange(e *Engine, ctx context.Context, run *record.Run, state *runstate.State, now time.Time, actor string) *change {
	return &change{recorder: recorder{run: run, state: state, e: e, ctx: ctx, now: now, actor: actor}}
}

// rules answers the decision rules (package decide) over this change: what
// the run does next, recorded through the change's recorder.
func (c *change) rules() *decide.Decision {
	if !c.ruled {
		run := decide.Run{ID: c.run.RunID, Definition: &c.run.Definition, PlanSHA256: c.run.PlanSHA256,
			Admission: decide.Admission{Mode: c.e.cfg.backpressureOf(c.run), Delay: c.e.cfg.Delay},
			Context:   runContext(c.run, c.run.SubmittedBy)}
		c.decision, c.ruled = decide.New(run, c.state, c.now, c.prepared.rules, ruleRecorder{&c.recorder}), true
	}
	return &c.decision
}

// transition changes the run's status through the one transition table; an
// illegal transition fails the whole decision, so it is never applied.
func (c *recorder) transition(to runstate.RunStatus) error {
	from := c.state.Status
	if from == to {
		return nil
	}
	if !runstate.RunTransitionAllowedFor(c.state, to) {
		return fault.Broken(fault.IllegalTransition(decide.RunMove(c.run.RunID, from, to)))
	}
	if from == runstate.RunQueued && !c.state.QueuedAt.IsZero() {
		c.del(admission.QueuedKey(c.state.QueuedAt, c.run.RunID))
		c.state.QueuedAt = time.Time{}
	}
	if to.Terminal() {
		c.releaseSlots()
	}
	c.del(record.RunStatusKey(c.run.TenantID, from, c.run.RunID))
	c.ops = append(c.ops, store.Put(record.RunStatusKey(c.run.TenantID, to, c.run.RunID), nil))
	c.state.Status = to
	c.state.Substatus = ""
	c.state.Message = ""
	c.dirty = true
	return nil
}

// setStep changes a step's status through the step transition table.
func (c *recorder) setStep(st *runstate.StepState, to runstate.StepStatus) error {
	if st.Status == to {
		return nil
	}
	if !runstate.StepTransitionAllowed(st.Status, to) {
		return fault.Broken(fault.IllegalTransition(decide.StepMove(c.run.RunID, st.ActionID, st.Status, to)))
	}
	st.Status = to
	c.dirty = true
	return nil
}

// newTask writes a ready task and its queue entry.
func (c *recorder) newTask(a *definition.Action, st *runstate.StepState, kind TaskKind, activity, queue string, timeout definition.Duration, notBefore time.Time) *record.Task {
	attempt := st.EngineAttempt
	if kind == TaskCompensation {
		attempt = st.CompAttempt
	}
	t := &record.Task{
		FormatVersion:    record.Version,
		TaskID:           fmt.Sprintf("%s/%s/%d/%s%d", c.run.RunID, a.ID, st.LogicalAttempt, kind, attempt),
		RunID:            c.run.RunID,
		TenantID:         c.run.TenantID,
		ActionID:         a.ID,
		Kind:             kind,
		Queue:            queue,
		Activity:         activity,
		LogicalAttempt:   st.LogicalAttempt,
		EngineAttempt:    attempt,
		NotBefore:        notBefore,
		Seq:              c.state.LastSeq + 1,
		Timeout:          timeout,
		HeartbeatTimeout: a.HeartbeatTimeout,
		State:            record.TaskReady,
	}
	c.scheduleStart(t, a, notBefore) // the schedule-to-start timer (timers.go)
	c.makeReady(t, true)             // the record is written with the entry, unless a hand-off claims it
	return t
}

// ruleRecorder is the recorder as the decision rules write through it
// (decide.Recorder).
type ruleRecorder struct{ c *recorder }

func (r ruleRecorder) Emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	r.c.emit(typ, stepID, logical, engineAttempt, data)
}

func (r ruleRecorder) EmitBy(actor, typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	r.c.emitBy(actor, typ, stepID, logical, engineAttempt, data)
}

func (r ruleRecorder) MoveRun(to runstate.RunStatus) error { return r.c.transition(to) }

func (r ruleRecorder) MoveStep(st *runstate.StepState, to runstate.StepStatus) error {
	return r.c.setStep(st, to)
}

func (r ruleRecorder) Changed() { r.c.dirty = true }

// SetTimer and ClearTimer keep the rules' timer kinds, which are the
// persisted names of record.TimerKind (TestRules_TimerAndTaskKindsAreThePersistedOnes).
func (r ruleRecorder) SetTimer(t decide.Timer) {
	r.c.setTimer(record.Timer{RunID: r.c.run.RunID, Kind: record.TimerKind(t.Kind), Ref: t.Ref, Due: t.Due})
}

func (r ruleRecorder) ClearTimer(t decide.Timer) {
	r.c.clearTimer(t.Due, record.TimerKind(t.Kind), t.Ref)
}

func (r ruleRecorder) NewTask(kind decide.TaskKind, a *definition.Action, st *runstate.StepState, notBefore time.Time) (string, string) {
	activity, queue, timeout := a.Activity, a.Queue, a.Timeout
	if kind == decide.TaskCompensation {
		h := a.Compensation
		activity, queue, timeout = h.Operation, h.Queue, h.Timeout
	}
	t := r.c.newTask(a, st, TaskKind(kind), activity, queue, timeout, notBefore)
	return t.TaskID, string(t.ReadyKey())
}

func (r ruleRecorder) RetireTask(taskID, readyKey string) { r.c.retireTask(taskID, readyKey) }

func (r ruleRecorder) RecordRecon(a *definition.Action, st *runstate.StepState, rc decide.Recon) {
	r.c.recordRecon(a, st, rc)
}

func (r ruleRecorder) TakeSlots() { r.c.takeSlots() }

func (r ruleRecorder) Enqueue() {
	r.c.ops = append(r.c.ops, store.Put(admission.QueuedKey(r.c.state.QueuedAt, r.c.run.RunID), []byte(r.c.run.RunID)))
}

// Alert raises an alert when, and only if, the decision commits.
func (r ruleRecorder) Alert(name string, attrs ...slog.Attr) {
	r.c.alerts = append(r.c.alerts, pendingAlert{name, attrs})
}
