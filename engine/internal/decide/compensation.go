package decide

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// compensateOrFail starts compensation when a succeeded step has a hook,
// else fails the run.
func (c *core) compensateOrFail(runErr *runstate.RunError) error {
	order := compensationOrder(&c.run, c.state)
	if len(order) == 0 {
		return c.failRun(runErr, "")
	}
	c.state.Error = runErr
	return c.startCompensation(order, runstate.EventData{FailedActionID: runErr.ActionID, RunError: runErr})
}

// compensationOrder is the succeeded steps with a hook, in reverse completion
// order (docs/semantics.md#compensation).
func compensationOrder(run *Run, s *runstate.State) []string {
	var order []string
	for i := len(s.CompletionOrder) - 1; i >= 0; i-- {
		id := s.CompletionOrder[i]
		a := run.action(id)
		if a.ForEach != "" {
			continue // its items are compensated, each (docs/semantics.md#for-each)
		}
		if a.Compensation != nil && s.Step(id).Status == runstate.StepSucceeded {
			order = append(order, id)
		}
	}
	return order
}

// startCompensation moves the run to COMPENSATING and starts the first hook of
// order; data says why (a failed action, or a cancel that asked for it).
func (c *core) startCompensation(order []string, data runstate.EventData) error {
	s := c.state
	s.Compensation = &runstate.CompensationState{Order: order, ForCancel: data.CancelRequested}
	if err := c.rec.MoveRun(runstate.RunCompensating); err != nil {
		return err
	}
	for _, id := range order {
		s.Step(id).CompStatus = runstate.CompPending
	}
	data.Status, data.CompensationOrder = string(runstate.RunCompensating), order
	c.rec.Emit(runstate.EvRunCompensating, "", c.state.RunEnds(), 0, data)
	return c.nextCompensation()
}

// nextCompensation starts the next hook in reverse completion order, or ends
// the run with the rollback's outcome when every hook has run: CANCELLED when
// a cancel asked for it, FAILED otherwise.
func (c *core) nextCompensation() error {
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
		err := c.resolveCompensationInput(a, st)
		c.rec.Emit(runstate.EvCompensationStarted, id, st.LogicalAttempt, 0, runstate.EventData{
			Operation: a.Compensation.Operation, OperationKey: CompensationKey(c.run.ID, id), Input: st.CompInput})
		if err != nil { // the hook fails without a task; the others still run
			c.failCompensation(st, &runstate.StepError{Class: definition.ErrorValidation, Code: "expression", Message: err.Error()})
			return c.nextCompensation()
		}
	}
	c.scheduleCompensation(a, st, c.now)
	return nil
}

// resolveCompensationInput evaluates the ${{ }} expressions of the hook's
// input once, before its first task, and records the value on the step:
// every attempt of the hook runs with it (docs/semantics.md#compensation-input).
// An item of a fan-out's hook reads its item, index and own output.
func (c *core) resolveCompensationInput(a *definition.Action, st *runstate.StepState) error {
	if st.CompInput != nil {
		return nil
	}
	var in json.RawMessage
	var err error
	if st.IsItem() {
		v, parent := c.values(), c.run.action(st.Parent)
		all := v.Output
		v.Output = func(id string) json.RawMessage {
			if id == parent.ID {
				return st.Output // what this item undoes
			}
			return all(id)
		}
		in, err = c.run.Definition.ResolveItemCompensationInput(parent, st.Index, st.Item, v)
	} else {
		in, err = c.run.Definition.ResolveCompensationInput(a, c.values())
	}
	if err != nil {
		return err
	}
	if !sameBytes(in, a.Compensation.Input) {
		st.CompInput = in
	}
	return nil
}

// failCompensation records the hook's failure for good and moves past it.
func (c *core) failCompensation(st *runstate.StepState, stepErr *runstate.StepError) {
	st.CompStatus = runstate.CompFailed
	st.CompError = stepErr
	c.rec.Emit(runstate.EvCompensationFailed, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Error: stepErr, CompletedAt: c.now})
	c.state.Compensation.Next++
}

// scheduleCompensation persists the hook's next attempt as a task.
func (c *core) scheduleCompensation(a *definition.Action, st *runstate.StepState, notBefore time.Time) {
	st.CompAttempt++
	st.CompTaskID, st.CompReadyKey = c.rec.NewTask(TaskCompensation, a, st, notBefore)
	c.rec.Changed()
}

// FinishCompensation applies a hook attempt's outcome: retry under the
// hook's policy, or record it and move on (best effort: a failed hook never
// stops the others).
func (d *Decision) FinishCompensation(a *definition.Action, st *runstate.StepState, ok bool, stepErr *runstate.StepError) error {
	st.CompTaskID = ""
	if ok {
		st.CompStatus = runstate.CompSucceeded
		st.CompError = nil
		d.rec.Emit(runstate.EvCompensationSucceeded, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{CompletedAt: d.now})
	} else {
		stepErr.Class = definition.NormalizeClass(stepErr.Class)
		if a.Compensation.Retry.ShouldRetry(st.CompAttempt, stepErr.Class) {
			due := d.now.Add(a.Compensation.Retry.Backoff(st.CompAttempt))
			d.rec.SetTimer(Timer{Kind: TimerBackoff, Ref: compensationRef + st.ActionID, Due: due})
			d.rec.Changed()
			return nil
		}
		d.core().failCompensation(st, stepErr)
		return d.core().nextCompensation()
	}
	d.state.Compensation.Next++
	return d.core().nextCompensation()
}
