package decide

import (
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// StepOfTask answers the step whose current task, or compensation task, is
// taskID; nil when the task is no longer its step's (retired, superseded),
// so that a claim, a report or a timeout of it changes nothing.
func StepOfTask(s *runstate.State, actionID, taskID string) *runstate.StepState {
	st := s.Step(actionID)
	if st == nil || (st.TaskID != taskID && st.CompTaskID != taskID) {
		return nil
	}
	return st
}

// Claimable reports whether the step's task may be claimed now: it is
// still the step's, on a run that has not ended and is not paused (none
// newly started while paused, docs/semantics.md#pause-drain).
func Claimable(s *runstate.State, actionID, taskID string) bool {
	return StepOfTask(s, actionID, taskID) != nil && !s.Status.Terminal() && s.Status != runstate.RunPaused
}

// Claimed applies a worker's claim of the step's task of kind: its queue
// entry is gone; an activity's attempt starts (startAttempt) and, when the
// worker can verify it, may leave a side effect behind until it reports
// (docs/semantics.md#reconciliation).
func (d *Decision) Claimed(kind TaskKind, a *definition.Action, st *runstate.StepState, workerID string, verifiable bool) error {
	switch kind {
	case TaskActivity:
		st.ReadyKey = ""
		if err := d.core().startAttempt(st, workerID); err != nil {
			return err
		}
		if verifiable {
			st.Reconcile = true
			d.core().recordRecon(a, st, Recon{Status: ReconIndeterminate})
		}
	case TaskVerify:
		st.ReadyKey = ""
	default:
		st.CompReadyKey = ""
	}
	d.rec.Changed()
	return nil
}

// Unclaimed applies a claim given back undelivered (docs/semantics.md#give-back):
// the step's task waits in its queue again at readyKey, under the same
// engine attempt, and a draining pause no longer waits for it.
func (d *Decision) Unclaimed(kind TaskKind, st *runstate.StepState, readyKey string) {
	if kind == TaskCompensation {
		st.CompReadyKey = readyKey
	} else {
		st.ReadyKey = readyKey
	}
	d.rec.Changed()
	d.core().checkDrained()
}
