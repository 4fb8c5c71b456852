package decide

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// ReasonCondition is the reason of a step its when skipped (docs/semantics.md#when).
const ReasonCondition = "condition"

// values answers what the run's expressions read: its input and id, and
// the outputs of its SUCCEEDED steps.
func (c *core) values() definition.Values {
	return definition.Values{Input: c.run.Input, RunID: c.run.ID, Output: func(id string) json.RawMessage {
		if st := c.state.Step(id); st != nil && st.Status == runstate.StepSucceeded {
			return st.Output
		}
		return nil
	}}
}

// checkWhen evaluates a ready step's when (docs/semantics.md#when): false
// skips it with reason condition; an error fails it. It answers whether the
// step goes on to run.
func (c *core) checkWhen(a *definition.Action, st *runstate.StepState) (bool, error) {
	ok, err := c.run.Definition.EvalWhen(a, c.values())
	switch {
	case err != nil:
		return false, c.failAsReady(a, st, err)
	case !ok:
		return false, c.skipStep(st, ReasonCondition)
	}
	return true, nil
}

// resolveInput evaluates the ${{ }} expressions of the step's input once,
// before its first task, and records the value on the step: every later
// attempt runs with it (docs/semantics.md#input-expressions). An error fails
// the step. It answers whether the step goes on to run.
func (c *core) resolveInput(a *definition.Action, st *runstate.StepState) (bool, error) {
	in, err := c.run.Definition.ResolveInput(a, c.values())
	if st.IsItem() {
		in, err = c.itemInput(st) // it reads item and index (docs/semantics.md#for-each)
	}
	if err != nil {
		return false, c.failAsReady(a, st, err)
	}
	if !sameBytes(in, a.Input) {
		st.Input = in
	}
	return true, nil
}

func sameBytes(a, b json.RawMessage) bool { return string(a) == string(b) }

// failAsReady fails a step whose expression could not be evaluated as it
// became ready: class VALIDATION, the expression's YAML path in the message
// (never a value it read); on_failure applies as after any failure.
func (c *core) failAsReady(a *definition.Action, st *runstate.StepState, err error) error {
	if st.Status == runstate.StepPending {
		if err := c.rec.MoveStep(st, runstate.StepRunning); err != nil {
			return err
		}
		st.StartedAt = c.now
	}
	code := "expression"
	var xe *definition.ExprError
	if !errors.As(err, &xe) {
		code = "repeat"
	}
	return c.failStep(a, st, &runstate.StepError{Class: definition.ErrorValidation, Code: code, Message: err.Error()})
}

// startSleep starts a sleep step (docs/semantics.md#sleep): RUNNING until its
// wake time, which a durable timer brings; a time already past completes it
// at once.
func (c *core) startSleep(a *definition.Action, st *runstate.StepState) error {
	wake, err := c.run.Definition.WakeAt(a, c.now, c.values())
	if err != nil {
		return c.failAsReady(a, st, err)
	}
	if err := c.rec.MoveStep(st, runstate.StepRunning); err != nil {
		return err
	}
	st.ScheduledAt, st.StartedAt, st.WakeAt = c.now, c.now, wake
	c.rec.Emit(runstate.EvStepSleeping, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepRunning), StartedAt: c.now, WakeAt: wake})
	if !wake.After(c.now) {
		return c.succeedStep(st, nil, nil, "sleep") // no timer was set
	}
	c.rec.SetTimer(sleepTimer(st))
	return nil
}

// sleepTimer is the durable timer of a sleeping step.
func sleepTimer(st *runstate.StepState) Timer {
	return Timer{Kind: TimerSleep, Ref: st.ActionID, Due: st.WakeAt}
}

// sleeping reports whether st is a sleep step waiting for its wake time.
func sleeping(st *runstate.StepState) bool {
	return st.Status == runstate.StepRunning && !st.WakeAt.IsZero() && st.TaskID == ""
}

// sleepDue completes the step whose sleep timer fired, unless the run is
// paused (its resume completes it) or the timer is not the step's current
// sleep's (the step was cancelled, or rerun since).
func (c *core) sleepDue(t Timer) error {
	st := c.state.Step(t.Ref)
	if st == nil || !sleeping(st) || !st.WakeAt.Equal(t.Due) {
		return nil
	}
	c.firing = &t
	return c.advance() // wakeDueSleeps completes it, unless the run is paused
}

// wakeDueSleeps completes every sleeping step whose wake time has come (a
// paused run's, when it resumes).
func (c *core) wakeDueSleeps() error {
	for _, st := range c.state.Steps {
		if sleeping(st) && !st.WakeAt.After(c.now) {
			if err := c.wake(st); err != nil {
				return err
			}
		}
	}
	return nil
}

// wake completes a sleep step: SUCCEEDED, with no output. Its timer goes
// with it, unless it is the one being applied (the engine deletes that).
func (c *core) wake(st *runstate.StepState) error {
	t := sleepTimer(st)
	if f := c.firing; f == nil || f.Kind != t.Kind || f.Ref != t.Ref || !f.Due.Equal(t.Due) {
		c.rec.ClearTimer(t)
	}
	return c.succeedStep(st, nil, nil, "sleep")
}

// clearSleep deletes a sleeping step's timer, when it is cancelled or
// reopened before it wakes.
func (c *core) clearSleep(st *runstate.StepState) {
	if sleeping(st) {
		c.rec.ClearTimer(sleepTimer(st))
	}
}

// iterate ends a repeat step's iteration — an attempt, or a sub-workflow
// step's child run — that succeeded with r's output
// (docs/semantics.md#repeat): the step succeeds when its until holds over that
// output; otherwise the next iteration opens as a new logical attempt, or,
// after max_iterations, the step fails.
func (c *core) iterate(a *definition.Action, st *runstate.StepState, r Attempt) error {
	n := max(st.Iteration, 1)
	v := c.values()
	upstream := v.Output
	v.Output = func(id string) json.RawMessage {
		if id == st.ActionID {
			return r.Output
		}
		return upstream(id)
	}
	done, err := c.run.Definition.EvalUntil(a, v)
	switch {
	case err != nil:
		return c.failAsReady(a, st, err)
	case done && a.Workflow != nil:
		return c.succeedStep(st, r.Output, nil, "child:"+st.ChildRunID)
	case done:
		return c.succeedStep(st, r.Output, r.Artifacts, "")
	case n >= a.Repeat.MaxIterations:
		return c.failStep(a, st, &runstate.StepError{Class: definition.ErrorValidation, Code: "repeat_max_iterations",
			Message: fmt.Sprintf("repeat.until did not hold after %d iterations (maxIterations)", n)})
	}
	if err := c.rec.MoveStep(st, runstate.StepPending); err != nil {
		return err
	}
	st.LogicalAttempt++
	st.Iteration = n + 1
	st.EngineAttempt, st.TaskID, st.ReadyKey, st.Error, st.Reconcile, st.Verifying = 0, "", "", nil, false, false
	st.Output, st.Artifacts, st.HeartbeatDetails = r.Output, nil, nil // the checkpoint keeps the last iteration's output
	c.rec.Emit(runstate.EvStepIterated, st.ActionID, st.LogicalAttempt-1, 0, runstate.EventData{Status: string(runstate.StepPending),
		Iteration: n, Output: r.Output, NewLogicalAttempt: st.LogicalAttempt})
	return nil
}

// startIteration numbers a repeat step's first iteration as it is dispatched.
func startIteration(a *definition.Action, st *runstate.StepState) {
	if a.Repeat != nil && st.Iteration == 0 {
		st.Iteration = 1
	}
}
