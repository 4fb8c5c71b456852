package decide

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
)

// Control is an operator's request to a run.
type Control struct {
	// ActionID is the step RetryStep and SkipStep act on.
	ActionID string
	// Actor is who asks, as the caller declared ("" is the system).
	Actor  string
	Reason string
	// Compensate, for Cancel, rolls back the succeeded steps first
	// (docs/semantics.md#cancel-compensation).
	Compensate bool
}

// AlertPauseDrainTimeout names the alert a drain that timed out raises
// (docs/semantics.md#pause-drain).
const AlertPauseDrainTimeout = "PAUSE_DRAIN_TIMEOUT"

// draining is the substatus of a pause waiting for its tasks in flight.
const draining = "DRAINING"

// Approve approves a PENDING run whose definition requires approval.
func (d *Decision) Approve(c Control) error {
	s := d.state
	switch {
	case s.Status.Terminal():
		return illegal(RunMove(d.run.ID, s.Status, runstate.RunApproved)) // an ended run takes no transition
	case !d.run.Definition.RequiresApproval:
		return refuse(Conflict, Move{RunID: d.run.ID, Why: "run " + d.run.ID + " does not require approval"})
	case s.Status != runstate.RunPending:
		return illegal(RunMove(d.run.ID, s.Status, runstate.RunApproved))
	}
	if err := d.rec.MoveRun(runstate.RunApproved); err != nil {
		return err
	}
	d.rec.Emit(runstate.EvRunApproved, "", 1, 0, runstate.EventData{Status: string(runstate.RunApproved), Actor: c.Actor, Reason: c.Reason})
	return nil
}

// Pause stops new scheduling; in-flight tasks finish, for at most drain
// (docs/semantics.md#pause-drain).
func (d *Decision) Pause(c Control, drain time.Duration) error {
	s := d.state
	if s.Status != runstate.RunRunning && s.Status != runstate.RunBlocked {
		return illegal(RunMove(d.run.ID, s.Status, runstate.RunPaused))
	}
	s.PausedFrom = s.Status
	if err := d.rec.MoveRun(runstate.RunPaused); err != nil {
		return err
	}
	s.Pauses++
	n := runningTasks(s)
	data := runstate.EventData{Status: string(runstate.RunPaused), InFlightTasks: n, Actor: c.Actor, Reason: c.Reason}
	if n > 0 {
		s.Substatus = draining
		s.Message = fmt.Sprintf("Workflow paused. Waiting for %d in-flight tasks to complete.", n)
		data.Substatus = s.Substatus
		d.rec.SetTimer(Timer{Kind: TimerDrain, Ref: fmt.Sprint(s.Pauses), Due: d.now.Add(drain)})
	} else {
		s.Message = "Workflow paused."
	}
	d.rec.Emit(runstate.EvRunPaused, "", s.Pauses, 0, data)
	return nil
}

// runningTasks counts tasks a worker holds.
func runningTasks(s *runstate.State) int {
	n := 0
	for _, st := range s.Steps {
		if st.Status == runstate.StepRunning && st.TaskID != "" && st.ReadyKey == "" {
			n++
		}
	}
	return n
}

// checkDrained ends a pause's drain when no task is in flight.
func (c *core) checkDrained() {
	s := c.state
	if s.Substatus != draining || runningTasks(s) > 0 {
		return
	}
	s.Substatus, s.Message = "", "Workflow paused."
	c.rec.Changed()
	c.rec.Emit(runstate.EvRunDrained, "", s.Pauses, 0, runstate.EventData{Status: string(runstate.RunPaused)})
}

// drainTimedOut forces a draining pause to PAUSED (alert PAUSE_DRAIN_TIMEOUT).
// Orphaned tasks that complete later are accepted and applied (docs/semantics.md#pause-drain).
func (c *core) drainTimedOut() {
	s := c.state
	if s.Status != runstate.RunPaused || s.Substatus != draining {
		return
	}
	n := runningTasks(s)
	s.Substatus, s.Message = "", fmt.Sprintf("Workflow paused. Drain timed out with %d tasks still in flight.", n)
	c.rec.Changed()
	c.rec.Emit(runstate.EvRunDrained, "", s.Pauses, 0, runstate.EventData{Status: string(runstate.RunPaused), TimedOut: true, InFlightTasks: n})
	c.rec.Alert(AlertPauseDrainTimeout, slog.String("run_id", s.RunID), slog.Int("orphaned_tasks", n),
		slog.Int("pause", s.Pauses))
}

// Resume resumes a paused run; nothing completed runs again.
func (d *Decision) Resume(c Control) error {
	s := d.state
	if s.Status != runstate.RunPaused {
		return illegal(RunMove(d.run.ID, s.Status, runstate.RunRunning))
	}
	if err := d.rec.MoveRun(runstate.RunRunning); err != nil {
		return err
	}
	s.Resumes++
	d.rec.Emit(runstate.EvRunResumed, "", s.Resumes, 0, runstate.EventData{Status: string(runstate.RunRunning), Actor: c.Actor})
	if s.PausedFrom == runstate.RunBlocked {
		s.Blocks++ // settle re-blocks the run under a new key if nothing can move
	}
	return d.core().advance()
}

// Cancel ends a non-terminal run CANCELLED; refused while COMPENSATING.
// With c.Compensate, the steps that succeeded and have a hook are
// compensated first, as on failure, and the run ends CANCELLED with the
// rollback's outcome (docs/semantics.md#cancel-compensation).
func (d *Decision) Cancel(c Control) error {
	s := d.state
	if !runstate.RunTransitionAllowed(s.Status, runstate.RunCancelled) {
		return illegal(RunMove(d.run.ID, s.Status, runstate.RunCancelled))
	}
	if err := d.core().cancelOpenSteps("run cancelled"); err != nil {
		return err
	}
	s.Cancellation = &runstate.Cancellation{CancelledBy: ActorOf(c.Actor), Reason: c.Reason, RequestedAt: d.now, Compensate: c.Compensate}
	if c.Compensate {
		s.Failing = "" // a failure waiting for in-flight work to settle is superseded by the cancel
		if order := compensationOrder(&d.run, s); len(order) > 0 {
			return d.core().startCompensation(order, runstate.EventData{CancelRequested: true, Cancellation: s.Cancellation})
		}
	}
	return d.core().cancelRun("")
}

// cancelRun ends the run CANCELLED, with the outcome of the rollback its
// cancel asked for, if any.
func (c *core) cancelRun(outcome runstate.CompensationOutcome) error {
	if err := c.rec.MoveRun(runstate.RunCancelled); err != nil {
		return err
	}
	s := c.state
	s.CompletedAt = c.now
	c.rec.Emit(runstate.EvRunCancelled, "", s.RunEnds(), 0, runstate.EventData{Status: string(runstate.RunCancelled), Cancellation: s.Cancellation,
		CompensationOutcome: outcome, CompletedAt: c.now})
	return nil
}

// RetryStep opens a new logical attempt for the failed step a HOLD run waits on.
func (d *Decision) RetryStep(c Control) error {
	s := d.state
	st := s.Step(c.ActionID)
	if st == nil {
		return noAction(d.run.ID, c.ActionID)
	}
	if st.IsItem() {
		return refuseItem(d.run.ID, c.ActionID, s.Status)
	}
	if s.HeldOn != c.ActionID || s.Status != runstate.RunBlocked {
		return illegal(Move{RunID: d.run.ID, ActionID: c.ActionID, Status: s.Status, From: string(st.Status), To: "PENDING",
			Why: "RETRY_STEP needs a run held on the failed step " + c.ActionID})
	}
	if err := d.rec.MoveStep(st, runstate.StepPending); err != nil {
		return err
	}
	s.HeldOn = ""
	s.StepFailures-- // the failed step is reopened (docs/semantics.md#resync)
	st.LogicalAttempt++
	st.EngineAttempt, st.Error, st.Reason = 0, nil, ""
	d.rec.Emit(runstate.EvStepRetried, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepPending),
		NewLogicalAttempt: st.LogicalAttempt, Actor: c.Actor})
	if err := d.core().reopenItems(st, false); err != nil {
		return err
	}
	return d.core().advance()
}

// SkipStep skips a step that has not started, or the failed step a HOLD run waits on.
func (d *Decision) SkipStep(c Control) error {
	s := d.state
	st := s.Step(c.ActionID)
	switch {
	case st == nil:
		return noAction(d.run.ID, c.ActionID)
	case st.IsItem():
		return refuseItem(d.run.ID, c.ActionID, s.Status)
	case s.Status.Terminal() || s.Status == runstate.RunCompensating:
		return illegal(RunMove(d.run.ID, s.Status, s.Status))
	case st.Status != runstate.StepPending && s.HeldOn != c.ActionID:
		return illegal(StepMove(d.run.ID, c.ActionID, st.Status, runstate.StepSkipped))
	}
	if s.HeldOn == c.ActionID {
		s.HeldOn = ""
	}
	reason := "skipped by " + ActorOf(c.Actor)
	if c.Reason != "" {
		reason += ": " + c.Reason
	}
	if err := d.core().skipStep(st, reason); err != nil {
		return err
	}
	return d.core().advance()
}
