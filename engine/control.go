package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/weft-dev/weft/engine/runstate"
)

// ControlParams is an operator's control signal.
type ControlParams struct {
	TenantID string
	RunID    string
	ActionID string
	// SignalID, when non-nil, makes the call idempotent (the rules of docs/semantics.md#signal-idempotency).
	SignalID *string
	Reason   string
	Actor    string
	// Compensate, for CancelRun, asks for the succeeded steps to be compensated
	// before the run ends CANCELLED (docs/semantics.md#cancel-compensation).
	Compensate bool
}

// ControlResult answers a control signal.
type ControlResult struct {
	Result    AcceptedSignal
	Duplicate bool
	Run       *runstate.Snapshot
}

// control delivers a control signal idempotently and answers the run after it.
func (e *Engine) control(ctx context.Context, p ControlParams, kind runstate.SignalKind, apply func(*change) error) (*ControlResult, error) {
	if err := validateSignalID("signal_id", p.SignalID); err != nil {
		return nil, err
	}
	res, err := e.deliver(ctx, SignalParams{TenantID: p.TenantID, RunID: p.RunID, SignalID: p.SignalID, Actor: p.Actor,
		Compensate: p.Compensate && kind == runstate.SignalCancel},
		kind, func(ch *change, _ AcceptedSignal) error { return apply(ch) })
	if err != nil {
		return nil, err
	}
	snap, err := e.GetRun(ctx, GetRunParams{TenantID: p.TenantID, RunID: p.RunID})
	if err != nil {
		return nil, err
	}
	return &ControlResult{Result: res.Result, Duplicate: res.Duplicate, Run: snap}, nil
}

// ApproveRun approves a PENDING run whose definition requires approval.
func (e *Engine) ApproveRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return e.control(ctx, p, runstate.SignalApprove, func(ch *change) error {
		if s := ch.state.Status; s.Terminal() {
			return errIllegalTransition(runMove(p.RunID, s, runstate.RunApproved)) // an ended run takes no transition
		}
		if !ch.run.Definition.RequiresApproval {
			return errOperationConflict(p.RunID, "", "run "+p.RunID+" does not require approval")
		}
		if ch.state.Status != runstate.RunPending {
			return errIllegalTransition(runMove(p.RunID, ch.state.Status, runstate.RunApproved))
		}
		if err := ch.transition(runstate.RunApproved); err != nil {
			return err
		}
		ch.emit(runstate.EvRunApproved, "", 1, 0, runstate.EventData{Status: string(runstate.RunApproved), Actor: p.Actor, Reason: p.Reason})
		return nil
	})
}

// PauseRun stops new scheduling; in-flight tasks finish (docs/semantics.md#pause-drain).
func (e *Engine) PauseRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return e.control(ctx, p, runstate.SignalPause, func(ch *change) error {
		s := ch.state
		if s.Status != runstate.RunRunning && s.Status != runstate.RunBlocked {
			return errIllegalTransition(runMove(p.RunID, s.Status, runstate.RunPaused))
		}
		s.PausedFrom = s.Status
		if err := ch.transition(runstate.RunPaused); err != nil {
			return err
		}
		s.Pauses++
		n := ch.runningTasks()
		data := runstate.EventData{Status: string(runstate.RunPaused), InFlightTasks: n, Actor: p.Actor, Reason: p.Reason}
		if n > 0 {
			s.Substatus = "DRAINING"
			s.Message = fmt.Sprintf("Workflow paused. Waiting for %d in-flight tasks to complete.", n)
			data.Substatus = s.Substatus
			ch.setTimer(timerRecord{RunID: p.RunID, Kind: timerDrain, Ref: fmt.Sprint(s.Pauses), Due: ch.now.Add(e.cfg.DrainTimeout)})
		} else {
			s.Message = "Workflow paused."
		}
		ch.emit(runstate.EvRunPaused, "", s.Pauses, 0, data)
		return nil
	})
}

// runningTasks counts tasks a worker holds.
func (c *runView) runningTasks() int {
	n := 0
	for _, st := range c.state.Steps {
		if st.Status == runstate.StepRunning && st.TaskID != "" && st.ReadyKey == "" {
			n++
		}
	}
	return n
}

// checkDrained ends a pause's drain when no task is in flight.
func (c *change) checkDrained() {
	s := c.state
	if s.Substatus != "DRAINING" || c.runningTasks() > 0 {
		return
	}
	s.Substatus, s.Message = "", "Workflow paused."
	c.dirty = true
	c.emit(runstate.EvRunDrained, "", s.Pauses, 0, runstate.EventData{Status: string(runstate.RunPaused)})
}

// drainTimedOut forces a draining pause to PAUSED (alert PAUSE_DRAIN_TIMEOUT).
// Orphaned tasks that complete later are accepted and applied (docs/semantics.md#pause-drain).
func (c *change) drainTimedOut() {
	s := c.state
	if s.Status != runstate.RunPaused || s.Substatus != "DRAINING" {
		return
	}
	n := c.runningTasks()
	s.Substatus, s.Message = "", fmt.Sprintf("Workflow paused. Drain timed out with %d tasks still in flight.", n)
	c.dirty = true
	c.emit(runstate.EvRunDrained, "", s.Pauses, 0, runstate.EventData{Status: string(runstate.RunPaused), TimedOut: true, InFlightTasks: n})
	c.alertAfterCommit(AlertPauseDrainTimeout, slog.String("run_id", s.RunID), slog.Int("orphaned_tasks", n),
		slog.Int("pause", s.Pauses))
}

// ResumeRun resumes a paused run; nothing completed runs again.
func (e *Engine) ResumeRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return e.control(ctx, p, runstate.SignalResume, func(ch *change) error {
		s := ch.state
		if s.Status != runstate.RunPaused {
			return errIllegalTransition(runMove(p.RunID, s.Status, runstate.RunRunning))
		}
		if err := ch.transition(runstate.RunRunning); err != nil {
			return err
		}
		s.Resumes++
		ch.emit(runstate.EvRunResumed, "", s.Resumes, 0, runstate.EventData{Status: string(runstate.RunRunning), Actor: p.Actor})
		if s.PausedFrom == runstate.RunBlocked {
			s.Blocks++ // settle re-blocks the run under a new key if nothing can move
		}
		return ch.advance()
	})
}

// CancelRun ends a non-terminal run CANCELLED. Rejected while COMPENSATING.
// With p.Compensate, the steps that succeeded and have a hook are compensated
// first, as on failure, and the run ends CANCELLED with the rollback's outcome
// (docs/semantics.md#cancel-compensation).
func (e *Engine) CancelRun(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return e.control(ctx, p, runstate.SignalCancel, func(ch *change) error {
		s := ch.state
		if !runstate.RunTransitionAllowed(s.Status, runstate.RunCancelled) {
			return errIllegalTransition(runMove(p.RunID, s.Status, runstate.RunCancelled))
		}
		if err := ch.cancelOpenSteps("run cancelled"); err != nil {
			return err
		}
		s.Cancellation = &runstate.Cancellation{CancelledBy: actorOf(p.Actor), Reason: p.Reason, RequestedAt: ch.now, Compensate: p.Compensate}
		if p.Compensate {
			s.Failing = "" // a failure waiting for in-flight work to settle is superseded by the cancel
			if order := ch.compensationOrder(); len(order) > 0 {
				return ch.startCompensation(order, runstate.EventData{CancelRequested: true, Cancellation: s.Cancellation})
			}
		}
		return ch.cancelRun("")
	})
}

// cancelRun ends the run CANCELLED, with the outcome of the rollback its
// cancel asked for, if any.
func (c *change) cancelRun(outcome runstate.CompensationOutcome) error {
	if err := c.transition(runstate.RunCancelled); err != nil {
		return err
	}
	s := c.state
	s.CompletedAt = c.now
	c.emit(runstate.EvRunCancelled, "", 1, 0, runstate.EventData{Status: string(runstate.RunCancelled), Cancellation: s.Cancellation,
		CompensationOutcome: outcome, CompletedAt: c.now})
	return nil
}

// RetryStep opens a new logical attempt for the failed step a HOLD run waits on.
func (e *Engine) RetryStep(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return e.control(ctx, p, runstate.SignalRetryStep, func(ch *change) error {
		s := ch.state
		st := s.Step(p.ActionID)
		if st == nil {
			return noAction(p.RunID, p.ActionID)
		}
		if s.HeldOn != p.ActionID || s.Status != runstate.RunBlocked {
			return errIllegalTransition(move{runID: p.RunID, actionID: p.ActionID, status: s.Status,
				from: string(st.Status), to: "PENDING", why: "RETRY_STEP needs a run held on the failed step " + p.ActionID})
		}
		if err := ch.setStep(st, runstate.StepPending); err != nil {
			return err
		}
		s.HeldOn = ""
		st.LogicalAttempt++
		st.EngineAttempt, st.Error, st.Reason = 0, nil, ""
		ch.emit(runstate.EvStepRetried, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepPending),
			NewLogicalAttempt: st.LogicalAttempt, Actor: p.Actor})
		return ch.advance()
	})
}

// SkipStep skips a step that has not started, or the failed step a HOLD run waits on.
func (e *Engine) SkipStep(ctx context.Context, p ControlParams) (*ControlResult, error) {
	return e.control(ctx, p, runstate.SignalSkipStep, func(ch *change) error {
		s := ch.state
		st := s.Step(p.ActionID)
		if st == nil {
			return noAction(p.RunID, p.ActionID)
		}
		if s.Status.Terminal() || s.Status == runstate.RunCompensating {
			return errIllegalTransition(runMove(p.RunID, s.Status, s.Status))
		}
		if st.Status != runstate.StepPending && s.HeldOn != p.ActionID {
			return errIllegalTransition(stepMove(p.RunID, p.ActionID, st.Status, runstate.StepSkipped))
		}
		if s.HeldOn == p.ActionID {
			s.HeldOn = ""
		}
		reason := "skipped by " + actorOf(p.Actor)
		if p.Reason != "" {
			reason += ": " + p.Reason
		}
		if err := ch.skipStep(st, reason); err != nil {
			return err
		}
		return ch.advance()
	})
}

func noAction(runID, actionID string) *Error {
	return errNotFound(runID, actionID, "run "+runID+" has no action "+actionID)
}
