package decide

import (
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Admission is what a run does at a concurrency limit: its backpressure
// mode, and how far DELAY pushes its activities (docs/semantics.md#backpressure).
type Admission struct {
	Mode  definition.BackpressureMode
	Delay time.Duration
}

// InitialState is a submitted run's state: PENDING, every step PENDING at
// its first logical attempt (docs/semantics.md#submission).
func InitialState(runID string, def *definition.Definition, createdAt time.Time) *runstate.State {
	s := &runstate.State{FormatVersion: runstate.CheckpointVersion, RunID: runID, Status: runstate.RunPending, CreatedAt: createdAt}
	steps := make([]runstate.StepState, len(def.Actions)) // the steps, in one allocation
	s.Steps = make([]*runstate.StepState, len(def.Actions))
	for i, a := range def.Actions {
		steps[i] = runstate.StepState{ActionID: a.ID, Status: runstate.StepPending, LogicalAttempt: 1}
		s.Steps[i] = &steps[i]
	}
	return s
}

// Start is a request to start the run: a trigger, refused on a run that has
// ended (docs/semantics.md#legal-run-transitions).
func (d *Decision) Start() error {
	if s := d.state.Status; s.Terminal() {
		return illegal(RunMove(d.run.ID, s, runstate.RunQueued))
	}
	return d.Trigger()
}

// Trigger moves a PENDING run (refused when it still requires approval) or
// an APPROVED one QUEUED, and admits it. A run already triggered — by a
// submission's recovery, another engine, or an earlier start — is left as
// it is: starting twice is not an error.
func (d *Decision) Trigger() error {
	s := d.state
	switch s.Status {
	case runstate.RunPending:
		if d.run.Definition.RequiresApproval {
			return illegal(Move{RunID: d.run.ID, Status: s.Status, From: "PENDING", To: "QUEUED",
				Why: "run " + d.run.ID + " requires approval before it starts"})
		}
	case runstate.RunApproved:
	default:
		return nil
	}
	if err := d.rec.MoveRun(runstate.RunQueued); err != nil {
		return err
	}
	d.rec.Emit(runstate.EvRunQueued, "", 1, 0, runstate.EventData{Status: string(runstate.RunQueued)})
	return d.Admit()
}

// Admit starts a QUEUED run when a slot of each of its limits is free;
// otherwise, under DELAY, it starts with its activities pushed into the
// future, and under any other mode it stays QUEUED, in the run queue
// (docs/semantics.md#backpressure). A run whose concurrency key is full
// follows its strategy whatever the mode (docs/semantics.md#run-concurrency):
// queue waits QUEUED; cancelNewest ends it CANCELLED; cancelInProgress
// waits QUEUED and has the oldest started run of the key cancelled.
func (d *Decision) Admit() error {
	switch {
	case d.prepared.Slots == SlotsUnread:
		return fmt.Errorf("decide: run %s: its concurrency slots were not read before the decision to admit it", d.run.ID)
	case d.run.Context == nil:
		return fmt.Errorf("decide: run %s: its context was not prepared for its start", d.run.ID)
	case d.prepared.KeyFull:
		switch d.strategy() {
		case definition.StrategyCancelNewest:
			return d.Cancel(Control{Reason: d.prepared.KeyWait + ": strategy cancelNewest cancels the run that finds its key full"})
		case definition.StrategyCancelInProgress:
			d.rec.Preempt()
		}
		d.enqueue()
		return nil
	case d.prepared.Slots == SlotsFree:
		d.rec.TakeSlots()
	case d.run.Admission.Mode == definition.BackpressureDelay:
		d.rec.TakeSlots() // its concurrency key's slot, if it has one: a key limit is never exceeded
		d.state.DelayUntil = d.now.Add(d.run.Admission.Delay)
	default:
		d.enqueue()
		return nil
	}
	return d.core().startRun()
}

// enqueue puts the QUEUED run in the run queue once.
func (d *Decision) enqueue() {
	if d.state.QueuedAt.IsZero() {
		d.state.QueuedAt = d.now
		d.rec.Enqueue()
		d.rec.Changed()
	}
}

// strategy answers the run's concurrency strategy ("" without a key).
func (d *Decision) strategy() definition.ConcurrencyStrategy {
	if c := d.run.Definition.Concurrency; c != nil {
		return definition.StrategyOf(c.Strategy)
	}
	return ""
}
