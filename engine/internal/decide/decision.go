package decide

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Recorder is what a decision writes through. Its methods fail only where
// they must read or refuse (a status move, a concurrency slot, a signal's
// payload); everything recorded commits with the decision, or not at all.
type Recorder interface {
	// Emit appends an event to the run's log, emitted by the decision's actor.
	Emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData)
	// EmitBy appends an event to the run's log, emitted by actor.
	EmitBy(actor, typ, stepID string, logical, engineAttempt int, data runstate.EventData)
	// MoveRun moves the run's status through the run transition table; an
	// illegal move is the decision's own fault, an error, and is not
	// applied (docs/semantics.md#run-transitions).
	MoveRun(to runstate.RunStatus) error
	// MoveStep moves a step's status through the step transition table
	// (docs/semantics.md#step-transitions).
	MoveStep(st *runstate.StepState, to runstate.StepStatus) error
	// Changed says the decision changed the run's state in a way no status
	// move or event recorded: the checkpoint is written.
	Changed()
	// SetTimer and ClearTimer write and delete a durable timer.
	SetTimer(t Timer)
	ClearTimer(t Timer)
	// NewTask persists a ready task of kind for the step's current attempt
	// (its compensation attempt for TaskCompensation), due at notBefore,
	// and answers its id and queue entry.
	NewTask(kind TaskKind, a *definition.Action, st *runstate.StepState, notBefore time.Time) (taskID, readyKey string)
	// RetireTask ends a task nobody may run or report any more.
	RetireTask(taskID, readyKey string)
	// Recon answers the step's reconciliation record, ok false when it has none.
	Recon(a *definition.Action, st *runstate.StepState) (r Recon, ok bool)
	// RecordRecon writes the step's reconciliation record with r's status.
	RecordRecon(a *definition.Action, st *runstate.StepState, r Recon)
	// ClaimSlots takes a free slot of each concurrency limit the run is under
	// for the run, or none and false when one is full.
	ClaimSlots() (bool, error)
	// Enqueue puts the QUEUED run in the run queue, at its QueuedAt.
	Enqueue()
	// SignalPayload reads an accepted signal's payload.
	SignalPayload(storageKey string) (json.RawMessage, error)
	// RunContext answers the run's context, as its start records it.
	RunContext() *runstate.RunContext
	// Alert raises an alert once, and only if, the decision commits.
	Alert(name string, attrs ...slog.Attr)
}

// Run is what a decision knows of its run besides its state.
type Run struct {
	ID         string
	Definition *definition.Definition
	PlanSHA256 string
	// Admission is what the run does at a concurrency limit.
	Admission Admission
}

// Decision is one decision about one run: the rules, applied to the run's
// state, which they change in place, and recorded through rec.
type Decision struct {
	run   Run
	state *runstate.State
	now   time.Time
	rec   Recorder
}

// core is a decision seen from inside: the steps the rules share (advance,
// settle, fail a step, compensate, …). It is the same decision with a
// method set of its own, so that Decision's is only what the engine asks.
type core Decision

func (d *Decision) core() *core { return (*core)(d) }

// New answers a decision about run, at now, on state.
func New(run Run, state *runstate.State, now time.Time, rec Recorder) Decision {
	return Decision{run: run, state: state, now: now, rec: rec}
}

// TimerKind names what a timer does when it fires; the names are the
// persisted ones (docs/persisted-format.md).
type TimerKind string

// The timers decisions set. The engine sets the attempt and heartbeat
// timers of a claim itself.
const (
	TimerBackoff  TimerKind = "backoff"  // ref: action id, or "comp:" and the action id; the next attempt is due
	TimerWorkflow TimerKind = "workflow" // the workflow timeout
	TimerDrain    TimerKind = "drain"    // ref: the pause's number; its drain timeout
	TimerWait     TimerKind = "wait"     // ref: action id; a manual or signal wait's timeout
)

// compensationRef is the backoff timer ref of a compensation hook's retry.
const compensationRef = "comp:"

// Timer is a durable timer a decision sets or clears.
type Timer struct {
	Kind TimerKind
	Ref  string
	Due  time.Time
}

// TaskKind is what a task asks a worker to do; the names are the persisted
// ones.
type TaskKind string

// The task kinds.
const (
	TaskActivity     TaskKind = "activity"
	TaskVerify       TaskKind = "verify"
	TaskCompensation TaskKind = "compensation"
)

// ActorOf names a principal in emitted_by, or "system".
func ActorOf(principal string) string {
	if principal == "" {
		return "system"
	}
	return principal
}

// WorkerActor names a worker as the actor of what its calls record.
func WorkerActor(workerID string) string { return "activity-worker:" + workerID }

// CompensationKey is the deterministic hook key of docs/semantics.md#compensation.
func CompensationKey(runID, actionID string) string { return runID + ":" + actionID + ":compensate" }

// action answers the definition's action with id, or nil.
func (r *Run) action(id string) *definition.Action {
	for i := range r.Definition.Actions {
		if r.Definition.Actions[i].ID == id {
			return &r.Definition.Actions[i]
		}
	}
	return nil
}
