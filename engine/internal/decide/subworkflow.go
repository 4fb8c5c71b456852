package decide

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// The sub-workflow rules (docs/semantics.md#sub-workflows). A step with a
// workflow is dispatched as an intent: the step becomes SCHEDULED and a
// child-start timer, due at once, is written in the same batch. The engine
// starts the child when the timer fires — idempotently, under a run
// request id derived from the step's logical attempt — and records it
// (ChildStarted); a crash between the two leaves the timer, which fires
// again. The child's end reaches the parent the same way: the child's
// ending batch writes a child-end timer for the parent, which the engine
// applies once (ChildEnded), deleting the timer in the same batch.

// TimerChildStart is the timer that starts a sub-workflow step's child
// run; ref: the action id.
const TimerChildStart TimerKind = "child-start"

// ChildEnd is how a child run ended, as the engine read it before the
// parent's decision.
type ChildEnd struct {
	ActionID   string
	Logical    int
	ChildRunID string
	// Status is the child's terminal status; Result its result (its result
	// step's output) when COMPLETED; Err its error when FAILED.
	Status runstate.RunStatus
	Result json.RawMessage
	Err    *runstate.RunError
	// Gone: the child was removed before its end reached the parent.
	Gone bool
}

// ChildRequestID answers the run request id of the child run that a
// sub-workflow step's logical attempt starts: one child per (parent run,
// step, logical attempt), whatever crashes, failovers or retries happen.
// The last part leaves room for an item index of a fan-out.
func ChildRequestID(runID, actionID string, logical int) string {
	return "child:" + runID + ":" + actionID + ":" + strconv.Itoa(logical)
}

// openChild dispatches a sub-workflow step: SCHEDULED, with the timer that
// starts its child, and the child's input with its ${{ }} expressions
// evaluated and recorded (StepScheduled.input), which the child is started
// with whenever the timer fires. An expression that fails fails the step.
func (c *core) openChild(a *definition.Action, st *runstate.StepState) error {
	in, err := c.run.Definition.ResolveWorkflowInput(a, c.values())
	if st.IsItem() {
		in, err = c.itemInput(st) // one child per item (docs/semantics.md#for-each)
	}
	if err != nil {
		return c.failAsReady(a, st, err)
	}
	if err := c.rec.MoveStep(st, runstate.StepScheduled); err != nil {
		return err
	}
	startIteration(a, st)
	st.EngineAttempt++ // the how-manieth child since the step became ready: its retry policy's attempt
	st.ScheduledAt, st.ChildRunID, st.Input = c.now, "", nil
	if !sameBytes(in, a.Workflow.Input) {
		st.Input = in
	}
	c.rec.SetTimer(Timer{Kind: TimerChildStart, Ref: st.ActionID, Due: c.now})
	c.rec.Emit(runstate.EvStepScheduled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepScheduled), TaskID: ChildRequestID(c.run.ID, st.ActionID, st.LogicalAttempt), NotBefore: c.now,
		Input: st.Input})
	c.rec.Changed()
	return nil
}

// ChildInput answers the input the step's child is started with: the one
// its dispatch evaluated, else the definition's.
func ChildInput(a *definition.Action, st *runstate.StepState) json.RawMessage {
	if st.Input != nil {
		return st.Input
	}
	return a.Workflow.Input
}

// ChildWanted reports whether the step's logical attempt still waits for
// its child to be started: it is SCHEDULED and has none yet.
func ChildWanted(s *runstate.State, actionID string, logical int) bool {
	st := s.Step(actionID)
	return st != nil && st.LogicalAttempt == logical && st.Status == runstate.StepScheduled && st.ChildRunID == "" &&
		!s.Status.Terminal()
}

// ChildStarted records that the step's child run exists: the step is
// RUNNING and names it. It answers false, recording nothing, when the step
// no longer waits for that child (it was cancelled, or the child's end
// came first).
func (d *Decision) ChildStarted(actionID string, logical int, childRunID string) (bool, error) {
	if !ChildWanted(d.state, actionID, logical) {
		st := d.state.Step(actionID)
		return st != nil && st.ChildRunID == childRunID && st.Status == runstate.StepRunning, nil
	}
	return true, d.core().recordChild(d.state.Step(actionID), childRunID)
}

// recordChild moves the step RUNNING under its child.
func (c *core) recordChild(st *runstate.StepState, childRunID string) error {
	if err := c.rec.MoveStep(st, runstate.StepRunning); err != nil {
		return err
	}
	st.ChildRunID, st.StartedAt = childRunID, c.now
	c.rec.Emit(runstate.EvChildRunStarted, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepRunning), ChildRunID: childRunID, StartedAt: c.now})
	return nil
}

// ChildRefused fails a sub-workflow step whose child cannot be started
// (the depth cap, a definition the registry no longer has, a concurrency
// limit that rejects it): for good, and its on_failure applies.
func (d *Decision) ChildRefused(actionID string, logical int, stepErr *runstate.StepError) error {
	if !ChildWanted(d.state, actionID, logical) {
		return nil
	}
	if err := d.core().failStep(d.run.action(actionID), d.state.Step(actionID), stepErr); err != nil {
		return err
	}
	return d.core().advance()
}

// ChildEnded finishes the step whose child ended, once: with the child's
// result when it COMPLETED, else failed with the child's error (its class
// and message, the child named). A step that no longer waits for that
// child — another logical attempt, cancelled, already finished — is left
// as it is.
func (d *Decision) ChildEnded(e ChildEnd) error {
	st, a := d.state.Step(e.ActionID), d.run.action(e.ActionID)
	if st == nil || a == nil || a.Workflow == nil || st.LogicalAttempt != e.Logical || d.state.Status.Terminal() {
		return nil
	}
	c := d.core()
	switch {
	case st.Status == runstate.StepRunning && st.ChildRunID == e.ChildRunID:
	case ChildWanted(d.state, e.ActionID, e.Logical):
		if err := c.recordChild(st, e.ChildRunID); err != nil { // the end came before the start was recorded
			return err
		}
	default:
		return nil
	}
	c.rec.Emit(runstate.EvChildRunEnded, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(e.Status), ChildRunID: e.ChildRunID, CompletedAt: d.now})
	var err error
	switch {
	case e.Status == runstate.RunCompleted && !e.Gone && a.Repeat != nil:
		err = c.iterate(a, st, Attempt{Output: e.Result}) // the next iteration is a new child (docs/semantics.md#repeat)
	case e.Status == runstate.RunCompleted && !e.Gone:
		err = c.succeedStep(st, e.Result, nil, "child:"+e.ChildRunID)
	default:
		if stepErr := childError(e); !c.retryChild(a, st, stepErr) {
			err = c.failStep(a, st, stepErr)
		}
	}
	if err != nil {
		return err
	}
	return c.advance()
}

// retryChild records a failed child as an attempt of its sub-workflow step
// and answers whether the step's retry policy runs it again: then, after
// the policy's backoff, a new logical attempt starts a new child
// (retryChildNow); else the step fails.
func (c *core) retryChild(a *definition.Action, st *runstate.StepState, stepErr *runstate.StepError) bool {
	stepErr.Class = definition.NormalizeClass(stepErr.Class)
	stepErr.Retryable = a.Retry.Retryable(stepErr.Class)
	n := max(st.EngineAttempt, 1)
	retry := c.state.Failing == "" && runLive(c.state) && a.Retry.ShouldRetry(n, stepErr.Class)
	if retry {
		st.NextAttemptAt, st.Error = c.now.Add(a.Retry.Backoff(n)), stepErr
	}
	st.EngineAttempt = n
	c.recordAttempt(st, Attempt{Outcome: runstate.AttemptFailed, Err: stepErr}, retry)
	if retry {
		c.rec.SetTimer(Timer{Kind: TimerBackoff, Ref: st.ActionID, Due: st.NextAttemptAt})
		c.rec.Changed()
	}
	return retry
}

// retryChildNow starts the retry of a sub-workflow step whose backoff has
// passed: a new logical attempt (StepRetried), dispatched as a new child.
func (c *core) retryChildNow(a *definition.Action, st *runstate.StepState) error {
	if err := c.rec.MoveStep(st, runstate.StepPending); err != nil {
		return err
	}
	st.LogicalAttempt++
	st.NextAttemptAt, st.Error, st.ChildRunID = time.Time{}, nil, ""
	c.rec.Emit(runstate.EvStepRetried, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepPending),
		NewLogicalAttempt: st.LogicalAttempt})
	return c.openChild(a, st)
}

// childError is the step's error for a child that did not complete.
func childError(e ChildEnd) *runstate.StepError {
	name := "child run " + e.ChildRunID
	switch {
	case e.Gone:
		return &runstate.StepError{Class: definition.ErrorUnknown, Code: "child_run_gone", Message: name + " was removed before its end reached the parent"}
	case e.Status == runstate.RunCancelled:
		return &runstate.StepError{Class: definition.ErrorCancelled, Code: "child_run_cancelled", Message: name + " was cancelled"}
	}
	out := &runstate.StepError{Class: definition.ErrorUnknown, Code: "child_run_failed", Message: name + " failed"}
	if e.Err == nil {
		return out
	}
	if e.Err.ActionID != "" {
		out.Message += " at step " + e.Err.ActionID
	}
	if x := e.Err.Error; x != nil {
		out.Class = x.Class
		if x.Code != "" {
			out.Code = x.Code
		}
		if x.Message != "" {
			out.Message += ": " + x.Message
		}
	}
	return out
}

// cancelChildSteps cancels, when the run fails fast, every sub-workflow
// step that is starting its child or waiting for it: the parent stops
// waiting, and the step's parentClose says what becomes of the child.
func (c *core) cancelChildSteps(reason string) error {
	for _, st := range c.state.Steps {
		a := c.run.action(st.ActionID)
		if a == nil || a.Workflow == nil || (st.Status != runstate.StepScheduled && st.Status != runstate.StepRunning) {
			continue
		}
		if err := c.cancelStep(st, reason); err != nil {
			return err
		}
	}
	return nil
}
