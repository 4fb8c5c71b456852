package engine

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// attemptResult is how one activity attempt ended, as a worker or a timer reported it.
type attemptResult struct {
	outcome   runstate.AttemptOutcome
	output    json.RawMessage
	artifacts []runstate.ArtifactRef
	err       *runstate.StepError
	workerID  string
	source    string
	// correlationID is the reporting call's; empty for an attempt a timer ended.
	correlationID string
}

// recordAttempt appends the attempt's evidence (docs/semantics.md#attempt-evidence) to the step and the log.
func (c *change) recordAttempt(st *runstate.StepState, r attemptResult, willRetry bool) {
	att := runstate.Attempt{
		LogicalAttempt: st.LogicalAttempt,
		EngineAttempt:  st.EngineAttempt,
		Outcome:        r.outcome,
		Error:          r.err,
		StartedAt:      st.StartedAt,
		CompletedAt:    c.now,
		WorkerID:       r.workerID,
	}
	st.Attempts = append(st.Attempts, att)
	c.emit(runstate.EvStepAttemptRecorded, st.ActionID, st.LogicalAttempt, st.EngineAttempt, runstate.EventData{
		Attempt: &att, WillRetry: willRetry, NextAttemptAt: st.NextAttemptAt, CorrelationID: r.correlationID})
}

// succeedAttempt applies an attempt's result: a manual action then waits for
// a person; any other action succeeds.
func (c *change) succeedAttempt(a *definition.Action, st *runstate.StepState, r attemptResult) error {
	st.TaskID = ""
	c.recordAttempt(st, r, false)
	st.Output, st.Artifacts = r.output, r.artifacts
	if a.Completion == definition.CompletionManual {
		if err := c.openManualWait(a, st); err != nil {
			return err
		}
	} else {
		if err := c.succeedStep(st, r.output, r.artifacts, r.source); err != nil {
			return err
		}
	}
	return c.advance()
}

// succeedStep marks a step SUCCEEDED with its output.
func (c *change) succeedStep(st *runstate.StepState, output json.RawMessage, artifacts []runstate.ArtifactRef, source string) error {
	if err := c.setStep(st, runstate.StepSucceeded); err != nil {
		return err
	}
	st.Output, st.Artifacts = output, artifacts
	st.CompletedAt = c.now
	st.Error = nil
	st.CompletionToken = ""
	st.WaitingSignal = ""
	c.state.CompletionOrder = append(c.state.CompletionOrder, st.ActionID)
	c.emit(runstate.EvStepCompleted, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepSucceeded), Output: output, Artifacts: artifacts, CompletedAt: c.now, Source: source})
	return nil
}

// failAttempt applies a failed attempt: another engine attempt after the
// policy's backoff, or the step's final failure.
func (c *change) failAttempt(a *definition.Action, st *runstate.StepState, r attemptResult) error {
	st.TaskID = ""
	r.err.Class = definition.NormalizeClass(r.err.Class)
	r.err.Retryable = a.Retry.Retryable(r.err.Class)
	if c.state.Failing == "" && c.runLive() && a.Retry.ShouldRetry(st.EngineAttempt, r.err.Class) {
		st.NextAttemptAt = c.now.Add(a.Retry.Backoff(st.EngineAttempt))
		st.Error = r.err
		c.recordAttempt(st, r, true)
		c.setTimer(timerRecord{RunID: c.run.RunID, Kind: timerBackoff, Ref: st.ActionID, Due: st.NextAttemptAt})
		c.dirty = true
		return nil
	}
	c.recordAttempt(st, r, false)
	if err := c.failStep(a, st, r.err); err != nil {
		return err
	}
	return c.advance()
}

// runLive reports whether the run still schedules work of its own accord.
func (c *runView) runLive() bool {
	switch c.state.Status {
	case runstate.RunRunning, runstate.RunBlocked, runstate.RunPaused:
		return true
	}
	return false
}

// failStep marks a step FAILED and applies its on_failure.
func (c *change) failStep(a *definition.Action, st *runstate.StepState, stepErr *runstate.StepError) error {
	if err := c.setStep(st, runstate.StepFailed); err != nil {
		return err
	}
	st.Error = stepErr
	st.CompletedAt = c.now
	st.CompletionToken = ""
	st.WaitingSignal = ""
	st.NextAttemptAt = time.Time{}
	c.emit(runstate.EvStepFailed, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepFailed), Error: stepErr, CompletedAt: c.now})
	if !c.runLive() {
		return nil
	}
	if a.OnFailure == definition.OnFailureSkip {
		if err := c.setStep(st, runstate.StepSkipped); err != nil {
			return err
		}
		st.Reason = "on_failure skip"
		c.emit(runstate.EvStepSkipped, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepSkipped), Reason: st.Reason})
		return nil
	}
	if c.state.Failing == "" {
		c.state.Failing = st.ActionID
		if a.OnFailure != definition.OnFailureHold {
			if err := c.cancelUnstarted("fail-fast after " + st.ActionID + " failed"); err != nil {
				return err
			}
		}
	}
	return nil
}

// cancelUnstarted cancels tasks no worker has claimed yet (fail-fast: no new
// actions start; running ones may finish).
func (c *change) cancelUnstarted(reason string) error {
	for _, st := range c.state.Steps {
		if st.Status != runstate.StepScheduled || st.TaskID == "" {
			continue
		}
		c.retireTask(st.TaskID, st.ReadyKey)
		st.TaskID, st.ReadyKey = "", ""
		if err := c.cancelStep(st, reason); err != nil {
			return err
		}
	}
	return nil
}

// cancelOpenSteps cancels every step that waits or runs, retiring its task
// so that a late report changes nothing.
func (c *change) cancelOpenSteps(reason string) error {
	for _, st := range c.state.Steps {
		switch st.Status {
		case runstate.StepScheduled, runstate.StepRunning, runstate.StepWaitingManual, runstate.StepWaitingSignal:
			c.retireTask(st.TaskID, st.ReadyKey)
			st.TaskID, st.ReadyKey = "", ""
			if st.Reconcile {
				// Cancellation observed before completion (docs/semantics.md#reconciliation).
				c.recordRecon(c.run.action(st.ActionID), st, reconCancelled, nil, &runstate.StepError{Class: definition.ErrorCancelled, Message: reason}, "", "")
			}
			if err := c.cancelStep(st, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// cancelStep marks a step CANCELLED.
func (c *change) cancelStep(st *runstate.StepState, reason string) error {
	if err := c.setStep(st, runstate.StepCancelled); err != nil {
		return err
	}
	st.Reason = reason
	st.CompletedAt = c.now
	st.CompletionToken = ""
	st.WaitingSignal = ""
	c.emit(runstate.EvStepCancelled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepCancelled), Reason: reason})
	return nil
}

// applyFailurePolicy applies the failing step's on_failure once nothing is in
// flight: ABORT fails the run, COMPENSATE rolls back, HOLD blocks it for an operator.
func (c *change) applyFailurePolicy() error {
	s := c.state
	st := s.Step(s.Failing)
	a := c.run.action(s.Failing)
	s.Failing = ""
	runErr := &runstate.RunError{ActionID: st.ActionID, Error: st.Error}
	switch a.OnFailure {
	case definition.OnFailureHold:
		s.HeldOn = st.ActionID
		if err := c.settle(); err != nil {
			return err
		}
	case definition.OnFailureAbort:
		if err := c.failRun(runErr, ""); err != nil {
			return err
		}
	default:
		if err := c.compensateOrFail(runErr); err != nil {
			return err
		}
	}
	return nil
}

// compensateOrFail starts compensation when a succeeded step has a hook,
// else fails the run.
func (c *change) compensateOrFail(runErr *runstate.RunError) error {
	order := c.compensationOrder()
	if len(order) == 0 {
		return c.failRun(runErr, "")
	}
	c.state.Error = runErr
	return c.startCompensation(order, runstate.EventData{FailedActionID: runErr.ActionID, RunError: runErr})
}

// compensationOrder is the succeeded steps with a hook, in reverse completion
// order (docs/semantics.md#compensation).
func (c *runView) compensationOrder() []string {
	s := c.state
	var order []string
	for i := len(s.CompletionOrder) - 1; i >= 0; i-- {
		id := s.CompletionOrder[i]
		if c.run.action(id).Compensation != nil && s.Step(id).Status == runstate.StepSucceeded {
			order = append(order, id)
		}
	}
	return order
}

// startCompensation moves the run to COMPENSATING and starts the first hook of
// order; data says why (a failed action, or a cancel that asked for it).
func (c *change) startCompensation(order []string, data runstate.EventData) error {
	s := c.state
	s.Compensation = &runstate.CompensationState{Order: order, ForCancel: data.CancelRequested}
	if err := c.transition(runstate.RunCompensating); err != nil {
		return err
	}
	for _, id := range order {
		s.Step(id).CompStatus = runstate.CompPending
	}
	data.Status, data.CompensationOrder = string(runstate.RunCompensating), order
	c.emit(runstate.EvRunCompensating, "", 1, 0, data)
	return c.nextCompensation()
}

// nextCompensation starts the next hook in reverse completion order, or ends
// the run with the rollback's outcome when every hook has run: CANCELLED when
// a cancel asked for it, FAILED otherwise.
func (c *change) nextCompensation() error {
	comp := c.state.Compensation
	if comp.Next >= len(comp.Order) {
		comp.Outcome = runstate.CompensationRolledBack
		for _, id := range comp.Order {
			if c.state.Step(id).CompStatus != runstate.CompSucceeded {
				comp.Outcome = runstate.CompensationPartial
			}
		}
		if comp.ForCancel {
			return c.cancelRun(comp.Outcome)
		}
		return c.failRun(c.state.Error, comp.Outcome)
	}
	id := comp.Order[comp.Next]
	st, a := c.state.Step(id), c.run.action(id)
	st.CompStatus = runstate.CompRunning
	if st.CompAttempt == 0 {
		c.emit(runstate.EvCompensationStarted, id, st.LogicalAttempt, 0, runstate.EventData{
			Operation: a.Compensation.Operation, OperationKey: compensationKey(c.run.RunID, id)})
	}
	c.scheduleCompensation(a, st, c.now)
	return nil
}

// compensationKey is the deterministic hook key of docs/semantics.md#compensation.
func compensationKey(runID, actionID string) string { return runID + ":" + actionID + ":compensate" }

// scheduleCompensation persists the hook's next attempt as a task.
func (c *change) scheduleCompensation(a *definition.Action, st *runstate.StepState, notBefore time.Time) {
	st.CompAttempt++
	h := a.Compensation
	t := c.newTask(a, st, TaskCompensation, h.Operation, h.Queue, h.Timeout, notBefore)
	st.CompTaskID, st.CompReadyKey = t.TaskID, t.readyKey()
	c.dirty = true
}

// finishCompensationAttempt applies a hook attempt's outcome: retry under the
// hook's policy, or record it and move on (best effort: a failed hook never
// stops the others).
func (c *change) finishCompensationAttempt(a *definition.Action, st *runstate.StepState, ok bool, stepErr *runstate.StepError) error {
	st.CompTaskID = ""
	if ok {
		st.CompStatus = runstate.CompSucceeded
		st.CompError = nil
		c.emit(runstate.EvCompensationSucceeded, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{CompletedAt: c.now})
	} else {
		stepErr.Class = definition.NormalizeClass(stepErr.Class)
		if a.Compensation.Retry.ShouldRetry(st.CompAttempt, stepErr.Class) {
			due := c.now.Add(a.Compensation.Retry.Backoff(st.CompAttempt))
			c.setTimer(timerRecord{RunID: c.run.RunID, Kind: timerBackoff, Ref: "comp:" + st.ActionID, Due: due})
			c.dirty = true
			return nil
		}
		st.CompStatus = runstate.CompFailed
		st.CompError = stepErr
		c.emit(runstate.EvCompensationFailed, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Error: stepErr, CompletedAt: c.now})
	}
	c.state.Compensation.Next++
	return c.nextCompensation()
}
