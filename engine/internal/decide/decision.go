package decide

import (
	"encoding/json"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Recorder is what a decision writes through: it only writes, and never
// reads. What the rules need from the store is read before they run and
// handed to them as a Prepared value. Its methods fail only where they
// refuse (an illegal status move); everything recorded commits with the
// decision, or not at all.
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
	// RecordRecon writes the step's reconciliation record as r, whole (the
	// rules merge it with the prepared one).
	RecordRecon(a *definition.Action, st *runstate.StepState, r Recon)
	// TakeSlots takes for the run the free slot of each concurrency limit
	// that Prepared.Slots found.
	TakeSlots()
	// Enqueue puts the QUEUED run in the run queue, at its QueuedAt.
	Enqueue()
	// Preempt asks, once the decision commits, for the oldest started run
	// of the run's concurrency key to be cancelled, so that this run takes
	// its slot (strategy cancelInProgress; docs/semantics.md#run-concurrency).
	Preempt()
	// Alert raises an alert once, and only if, the decision commits.
	Alert(name string, attrs ...slog.Attr)
}

// Run is what a decision knows of its run besides its state.
type Run struct {
	ID         string
	Definition *definition.Definition
	PlanSHA256 string
	// Input is the run's input, which expressions read as input.
	Input json.RawMessage
	// Admission is what the run does at a concurrency limit.
	Admission Admission
	// Context is the run's context, as its start records it; set when the
	// decision may start the run (Prepared.Slots is read).
	Context *runstate.RunContext
	// MaxFanOut caps a forEach list's length (docs/semantics.md#for-each);
	// zero: DefaultMaxFanOut.
	MaxFanOut int
}

// Prepared is what a decision's rules need from the store, read before they
// run (the engine's prepare) and handed to them as values: one read per key
// per decision, and a read that failed fails the decision before any rule
// runs, so no rule ever takes a failed read for "absent".
type Prepared struct {
	// Recons are the reconciliation records of the run's reconcilable steps
	// that have not ended (of an ended run: of all of them, which a rerun
	// reads, docs/semantics.md#rerun), for their current logical attempts, by action id;
	// a reconcilable step that has not ended and is not in it has none. (A
	// step that is not reconcilable, or whose logical attempt opened after
	// the read, has none either: a record is written only for a
	// reconcilable step's logical attempt.) The rules keep it current with
	// what they record.
	Recons map[string]Recon
	// Payloads are the payloads of the accepted signals a step of the run
	// may consume in this decision, by storage key, and of the signal the
	// decision accepts (AcceptSignal); asking for another is the engine's
	// fault, an error.
	Payloads map[string]json.RawMessage
	// Slots is what the read of the run's concurrency limits found, read
	// when the decision may admit the run, or rerun it: SlotsFull when a
	// limit or the run's concurrency key is reached.
	Slots Slots
	// KeyFull, read with Slots, says that the run may not take a slot of
	// its concurrency key: the key is at its limit, or (strategy queue) an
	// earlier run of the key waits QUEUED ahead of it. KeyWait says so for
	// a reason: "concurrency key customer-42 at 2/2".
	KeyFull bool
	KeyWait string
}

// Slots is what the read of a run's concurrency limits found.
type Slots uint8

// The outcomes of that read.
const (
	SlotsUnread Slots = iota // not read: the decision may not admit the run
	SlotsFree                // a slot of every limit is free (or there is no limit)
	SlotsFull                // a limit is reached
)

// Decision is one decision about one run: the rules, applied to the run's
// state, which they change in place, and recorded through rec.
type Decision struct {
	run      Run
	state    *runstate.State
	now      time.Time
	prepared *Prepared
	rec      Recorder
	// firing is the sleep timer this decision applies (TimerDue), which the
	// engine deletes itself.
	firing *Timer
}

// core is a decision seen from inside: the steps the rules share (advance,
// settle, fail a step, compensate, …). It is the same decision with a
// method set of its own, so that Decision's is only what the engine asks.
type core Decision

func (d *Decision) core() *core { return (*core)(d) }

// New answers a decision about run, at now, on state, with what was read
// for it (prepared, which the rules keep current with what they record);
// it writes through rec.
func New(run Run, state *runstate.State, now time.Time, prepared *Prepared, rec Recorder) Decision {
	return Decision{run: run, state: state, now: now, prepared: prepared, rec: rec}
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
	TimerSleep    TimerKind = "sleep"    // ref: action id; a sleep step's wake time (docs/semantics.md#sleep)
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
	return r.Definition.Action(id) // an item of a fan-out (definition.ItemAction)
}
