package decide

import (
	"strings"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// TimerDue is what a timer the rules set decides when it is due: nothing on
// a run that has ended. The engine finds the due timers, and decides the
// attempt and heartbeat timeouts of a claim itself, ending the attempt
// through AttemptTimedOut.
func (d *Decision) TimerDue(t Timer) error {
	if d.state.Status.Terminal() {
		return nil
	}
	switch t.Kind {
	case TimerBackoff:
		return d.core().backoffDue(t.Ref)
	case TimerWorkflow:
		return d.core().workflowTimedOut()
	case TimerDrain:
		d.core().drainTimedOut()
	case TimerWait:
		return d.core().waitTimedOut(t.Ref)
	case TimerSleep:
		return d.core().sleepDue(t)
	}
	return nil
}

// backoffDue schedules the next attempt whose backoff has passed: an
// activity's, or a compensation hook's (ref "comp:" and the action id).
func (c *core) backoffDue(ref string) error {
	if id, ok := strings.CutPrefix(ref, compensationRef); ok {
		st, a := c.state.Step(id), c.run.action(id)
		if st != nil && c.state.Status == runstate.RunCompensating && st.CompStatus == runstate.CompRunning && st.CompTaskID == "" {
			c.scheduleCompensation(a, st, c.now)
		}
		return nil
	}
	return c.advance()
}

// workflowTimedOut fails the run: the workflow timeout caps everything,
// BLOCKED time included (docs/semantics.md#timeouts). Work in flight is
// retired; the failure policy compensates succeeded steps with hooks.
func (c *core) workflowTimedOut() error {
	s := c.state
	if s.Status == runstate.RunCompensating || s.Status == runstate.RunPending || s.Status == runstate.RunApproved {
		return nil
	}
	if err := c.cancelOpenSteps("workflow timeout"); err != nil {
		return err
	}
	s.Failing, s.HeldOn = "", ""
	runErr := &runstate.RunError{WorkflowTimeout: true, Error: &runstate.StepError{Class: definition.ErrorTimeout, Message: "workflow timeout"}}
	return c.compensateOrFail(runErr)
}

// AttemptTimedOut ends a claimed attempt that outlived its timeout or its
// heartbeat (message): a compensation hook's attempt is retried under its
// policy, a verify task leaves the step indeterminate, and an activity's
// attempt fails with the timeout class, recorded as timed out when it is
// reconcilable.
func (d *Decision) AttemptTimedOut(kind TaskKind, a *definition.Action, st *runstate.StepState, workerID, message string) error {
	stepErr := &runstate.StepError{Class: definition.ErrorTimeout, Message: message}
	switch {
	case kind == TaskCompensation:
		return d.FinishCompensation(a, st, false, stepErr)
	case kind == TaskVerify:
		return d.VerifierUnavailable(a, st, "timed out")
	case st.Reconcile:
		d.core().recordRecon(a, st, Recon{Status: ReconTimedOut, Err: stepErr})
	}
	return d.FailAttempt(a, st, Attempt{Outcome: runstate.AttemptTimedOut, Err: stepErr, WorkerID: workerID})
}
