package decide

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Attempt is how one activity attempt ended, as a worker or a timer reported it.
type Attempt struct {
	Outcome   runstate.AttemptOutcome
	Output    json.RawMessage
	Artifacts []runstate.ArtifactRef
	Err       *runstate.StepError
	WorkerID  string
	// RetryAfter is the worker's earliest time for the next attempt, from
	// now (docs/semantics.md#retry-after); 0: the backoff alone.
	RetryAfter time.Duration
	// CorrelationID is the reporting call's; empty for an attempt a timer ended.
	CorrelationID string
}

// startAttempt persists the step RUNNING with started_at, as a worker's
// claim starts it; the logical attempt's first claim emits StepStarted, by
// the worker — the first engine attempt's, or a retry's when no worker ever
// claimed the earlier ones (docs/semantics.md#schedule-to-start). A step
// already RUNNING (a later engine attempt, or a claim given back
// undelivered) emits nothing again.
func (c *core) startAttempt(st *runstate.StepState, workerID string) error {
	st.StartedAt = c.now
	if st.Status != runstate.StepScheduled {
		return nil
	}
	if err := c.rec.MoveStep(st, runstate.StepRunning); err != nil {
		return err
	}
	c.rec.EmitBy(WorkerActor(workerID), runstate.EvStepStarted, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepRunning), WorkerID: workerID, StartedAt: c.now})
	return nil
}

// recordAttempt appends the attempt's evidence (docs/semantics.md#attempt-evidence) to the step and the log.
func (c *core) recordAttempt(st *runstate.StepState, r Attempt, willRetry bool) {
	att := runstate.Attempt{
		LogicalAttempt: st.LogicalAttempt,
		EngineAttempt:  st.EngineAttempt,
		Outcome:        r.Outcome,
		Error:          r.Err,
		StartedAt:      st.StartedAt,
		CompletedAt:    c.now,
		WorkerID:       r.WorkerID,
	}
	st.Attempts = append(st.Attempts, att)
	c.rec.Emit(runstate.EvStepAttemptRecorded, st.ActionID, st.LogicalAttempt, st.EngineAttempt, runstate.EventData{
		Attempt: &att, WillRetry: willRetry, NextAttemptAt: st.NextAttemptAt, CorrelationID: r.CorrelationID})
}

// SucceedAttempt applies an attempt's result: a manual action then waits for
// a person; any other action succeeds.
func (d *Decision) SucceedAttempt(a *definition.Action, st *runstate.StepState, r Attempt) error {
	st.TaskID = ""
	d.core().recordAttempt(st, r, false)
	st.Output, st.Artifacts = r.Output, r.Artifacts
	var err error
	switch {
	case a.Completion == definition.CompletionManual:
		err = d.core().openManualWait(a, st)
	case a.Repeat != nil:
		err = d.core().iterate(a, st, r)
	default:
		err = d.core().succeedStep(st, r.Output, r.Artifacts, "")
	}
	if err != nil {
		return err
	}
	return d.core().advance()
}

// succeedStep marks a step SUCCEEDED with its output.
func (c *core) succeedStep(st *runstate.StepState, output json.RawMessage, artifacts []runstate.ArtifactRef, source string) error {
	if err := c.rec.MoveStep(st, runstate.StepSucceeded); err != nil {
		return err
	}
	st.Output, st.Artifacts = output, artifacts
	st.HeartbeatDetails = nil // the logical attempt is over (docs/semantics.md#heartbeat-details)
	st.CompletedAt = c.now
	st.Error = nil
	st.CompletionToken = ""
	st.WaitingSignal = ""
	c.state.CompletionOrder = append(c.state.CompletionOrder, st.ActionID)
	c.rec.Emit(runstate.EvStepCompleted, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepSucceeded), Output: output, Artifacts: artifacts, CompletedAt: c.now, Source: source})
	return nil
}

// FailAttempt applies a failed attempt: another engine attempt after the
// policy's backoff, or the step's final failure.
func (d *Decision) FailAttempt(a *definition.Action, st *runstate.StepState, r Attempt) error {
	st.TaskID = ""
	r.Err.Class = definition.NormalizeClass(r.Err.Class)
	r.Err.Retryable = a.Retry.Retryable(r.Err.Class)
	if d.state.Failing == "" && runLive(d.state) && a.Retry.ShouldRetry(st.EngineAttempt, r.Err.Class) {
		st.NextAttemptAt = d.now.Add(max(a.Retry.Backoff(st.EngineAttempt), r.RetryAfter))
		st.Error = r.Err
		d.core().recordAttempt(st, r, true)
		d.rec.SetTimer(Timer{Kind: TimerBackoff, Ref: st.ActionID, Due: st.NextAttemptAt})
		d.rec.Changed()
		return nil
	}
	d.core().recordAttempt(st, r, false)
	if err := d.core().failStep(a, st, r.Err); err != nil {
		return err
	}
	return d.core().advance()
}

// runLive reports whether the run still schedules work of its own accord.
func runLive(s *runstate.State) bool {
	switch s.Status {
	case runstate.RunRunning, runstate.RunBlocked, runstate.RunPaused:
		return true
	}
	return false
}

// failStep marks a step FAILED and applies its on_failure.
func (c *core) failStep(a *definition.Action, st *runstate.StepState, stepErr *runstate.StepError) error {
	if err := c.rec.MoveStep(st, runstate.StepFailed); err != nil {
		return err
	}
	st.Error = stepErr
	st.HeartbeatDetails = nil // the logical attempt is over (docs/semantics.md#heartbeat-details)
	st.CompletedAt = c.now
	st.CompletionToken = ""
	st.WaitingSignal = ""
	st.NextAttemptAt = time.Time{}
	c.state.StepFailures++ // every StepFailed counts, whatever follows (docs/semantics.md#resync)
	data := runstate.EventData{Status: string(runstate.StepFailed), Error: stepErr, CompletedAt: c.now}
	if a.Repeat != nil {
		data.Output = st.Output // the last iteration's, which the step keeps (docs/semantics.md#repeat)
	}
	c.rec.Emit(runstate.EvStepFailed, st.ActionID, st.LogicalAttempt, 0, data)
	if !runLive(c.state) || st.IsItem() {
		return nil // an item's failure stops its fan-out, whose step fails (docs/semantics.md#for-each)
	}
	if a.OnFailure == definition.OnFailureSkip {
		if err := c.rec.MoveStep(st, runstate.StepSkipped); err != nil {
			return err
		}
		st.Reason = "on_failure skip"
		c.rec.Emit(runstate.EvStepSkipped, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepSkipped), Reason: st.Reason})
		return nil
	}
	if c.state.Failing == "" {
		c.state.Failing = st.ActionID
		if a.OnFailure != definition.OnFailureHold {
			return c.cancelUnstarted("fail-fast after " + st.ActionID + " failed")
		}
	}
	return nil
}

// cancelUnstarted cancels tasks no worker has claimed yet, and sleeps, which
// do no work (fail-fast: no new actions start; running ones may finish;
// docs/semantics.md#sleep).
func (c *core) cancelUnstarted(reason string) error {
	if err := c.cancelChildSteps(reason); err != nil {
		return err
	}
	for _, st := range c.state.Steps {
		if sleeping(st) {
			if err := c.cancelStep(st, reason); err != nil {
				return err
			}
			continue
		}
		if st.Status != runstate.StepScheduled || st.TaskID == "" {
			continue
		}
		c.rec.RetireTask(st.TaskID, st.ReadyKey)
		st.TaskID, st.ReadyKey = "", ""
		if err := c.cancelStep(st, reason); err != nil {
			return err
		}
	}
	return nil
}

// cancelOpenSteps cancels every step that waits or runs, retiring its task
// so that a late report changes nothing.
func (c *core) cancelOpenSteps(reason string) error {
	for _, st := range c.state.Steps {
		switch st.Status {
		case runstate.StepScheduled, runstate.StepRunning, runstate.StepWaitingManual, runstate.StepWaitingSignal:
			c.rec.RetireTask(st.TaskID, st.ReadyKey)
			st.TaskID, st.ReadyKey = "", ""
			if st.Reconcile {
				// Cancellation observed before completion (docs/semantics.md#reconciliation).
				c.recordRecon(c.run.action(st.ActionID), st, Recon{Status: ReconCancelled,
					Err: &runstate.StepError{Class: definition.ErrorCancelled, Message: reason}})
			}
			if err := c.cancelStep(st, reason); err != nil {
				return err
			}
		case runstate.StepPending:
			if st.IsItem() { // an item its fan-out never started (docs/semantics.md#for-each)
				if err := c.cancelStep(st, reason); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cancelStep marks a step CANCELLED.
func (c *core) cancelStep(st *runstate.StepState, reason string) error {
	c.clearSleep(st)
	if err := c.rec.MoveStep(st, runstate.StepCancelled); err != nil {
		return err
	}
	st.Reason = reason
	st.CompletedAt = c.now
	st.CompletionToken = ""
	st.WaitingSignal = ""
	c.rec.Emit(runstate.EvStepCancelled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepCancelled), Reason: reason})
	return nil
}

// applyFailurePolicy applies the failing step's on_failure once nothing is in
// flight: ABORT fails the run, COMPENSATE rolls back, HOLD blocks it for an operator.
func (c *core) applyFailurePolicy() error {
	s := c.state
	st := s.Step(s.Failing)
	a := c.run.action(s.Failing)
	s.Failing = ""
	runErr := &runstate.RunError{ActionID: st.ActionID, Error: st.Error}
	switch a.OnFailure {
	case definition.OnFailureHold:
		s.HeldOn = st.ActionID
		return c.settle()
	case definition.OnFailureAbort:
		return c.failRun(runErr, "")
	default:
		return c.compensateOrFail(runErr)
	}
}
