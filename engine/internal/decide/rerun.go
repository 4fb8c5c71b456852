package decide

import (
	"fmt"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Rerun takes an ended run (COMPLETED, FAILED or CANCELLED) back to RUNNING
// from step c.ActionID (docs/semantics.md#rerun): that step, everything
// downstream of it and every other step that did not get done open new
// logical attempts in the same run, while the steps upstream of it keep
// their outputs and are not run again. Every earlier attempt stays in the
// log and on its step. A reopened step whose ended attempt may have left a
// side effect behind — its reconciliation record is not "failed" — is
// verified before it is dispatched again (verifyBeforeRerun).
func (d *Decision) Rerun(c Control) error {
	s := d.state
	from := s.Step(c.ActionID)
	if from == nil {
		return noAction(d.run.ID, c.ActionID)
	}
	if from.IsItem() {
		return refuseItem(d.run.ID, c.ActionID, s.Status)
	}
	if err := d.rerunAllowed(c.ActionID); err != nil {
		return err
	}
	reopen := d.rerunSet(c.ActionID)
	if err := d.rec.MoveRun(runstate.RunRunning); err != nil {
		return err
	}
	s.Reruns++
	if d.prepared.Slots == SlotsFree {
		d.rec.TakeSlots()
	}
	d.reopenRun()
	d.rec.Emit(runstate.EvRunRerun, "", s.Reruns, 0, runstate.EventData{Status: string(runstate.RunRunning),
		RerunFrom: c.ActionID, Reopened: reopen, Actor: c.Actor, Reason: c.Reason})
	for _, id := range reopen {
		if err := d.reopenStep(s.Step(id), c.Actor); err != nil {
			return err
		}
	}
	return d.core().advance()
}

// rerunAllowed refuses a rerun the run's state does not allow: a run that
// has not ended, a step upstream of the one to rerun from that is not done
// (SUCCEEDED, or SKIPPED) or was compensated — its output is not there to
// keep — and a concurrency limit that is full.
func (d *Decision) rerunAllowed(actionID string) error {
	s := d.state
	if !s.Status.Terminal() {
		return illegal(Move{RunID: d.run.ID, ActionID: actionID, Status: s.Status, From: string(s.Status), To: string(runstate.RunRunning),
			Signal: string(runstate.SignalRerun),
			Why:    fmt.Sprintf("RERUN needs an ended run (COMPLETED, FAILED or CANCELLED); run %s is %s", d.run.ID, s.Status)})
	}
	for _, id := range d.run.upstreamOf(actionID) {
		st := s.Step(id)
		if done(st) && !compensated(s, st) {
			continue
		}
		why := "is " + string(st.Status)
		if compensated(s, st) {
			why = "was compensated"
		}
		return illegal(Move{RunID: d.run.ID, ActionID: actionID, Status: s.Status, From: string(s.Status), To: string(runstate.RunRunning),
			Signal: string(runstate.SignalRerun),
			Why: fmt.Sprintf("RERUN from %s keeps every step upstream of it, but %s %s: rerun from %s or earlier",
				actionID, id, why, id)})
	}
	switch d.prepared.Slots {
	case SlotsUnread:
		return fmt.Errorf("decide: run %s: its concurrency slots were not read before the decision to rerun it", d.run.ID)
	case SlotsFull:
		return refuse(Conflict, Move{RunID: d.run.ID, ActionID: actionID, Status: s.Status, Signal: string(runstate.SignalRerun),
			Why: "run " + d.run.ID + " cannot rerun now: a concurrency limit of its definition is reached; retry when a run ends"})
	}
	return nil
}

// compensated reports whether a step's rollback touched it: its own hook,
// or, for a forEach step, an item's (docs/semantics.md#for-each).
func compensated(s *runstate.State, st *runstate.StepState) bool {
	if st.CompStatus != "" {
		return true
	}
	if st.ItemCount == 0 {
		return false
	}
	for _, it := range items(s, st, true) {
		if it.CompStatus != "" {
			return true
		}
	}
	return false
}

// done reports whether a step's ended attempt is one a rerun keeps: it
// SUCCEEDED or was SKIPPED.
func done(st *runstate.StepState) bool {
	return st.Status == runstate.StepSucceeded || st.Status == runstate.StepSkipped
}

// rerunSet answers, in definition order, the steps a rerun from actionID
// reopens: that step and every step downstream of it, and every other step
// not upstream of it that is not done or was compensated; a step that never
// left PENDING is not reopened (it has no attempt to set aside).
func (d *Decision) rerunSet(actionID string) []string {
	up, down := d.run.upstreamOf(actionID), d.run.downstreamOf(actionID)
	var out []string
	for _, st := range d.state.Steps {
		id := st.ActionID
		switch {
		case st.IsItem(): // its forEach step's rerun reruns it (docs/semantics.md#for-each)
		case st.Status == runstate.StepPending, slices.Contains(up, id):
		case id == actionID, slices.Contains(down, id), !done(st), compensated(d.state, st):
			out = append(out, id)
		}
	}
	return out
}

// reopenRun clears what the run's end left: its end time, error,
// cancellation and rollback, and the workflow timeout, which starts again.
func (d *Decision) reopenRun() {
	s := d.state
	s.CompletedAt, s.Error, s.Cancellation, s.Compensation = time.Time{}, nil, nil, nil
	s.Failing, s.HeldOn, s.DelayUntil = "", "", time.Time{}
	if !s.Deadline.IsZero() {
		d.rec.ClearTimer(Timer{Kind: TimerWorkflow, Due: s.Deadline})
		s.Deadline = time.Time{}
	}
	if t := d.run.Definition.Timeout.D(); t > 0 {
		s.Deadline = d.now.Add(t)
		d.rec.SetTimer(Timer{Kind: TimerWorkflow, Due: s.Deadline})
	}
}

// reopenStep opens a new logical attempt for an ended step of a rerun: the
// earlier attempt is set aside (its evidence stays in Attempts and in the
// log), its timers go, and when that attempt may have left a side effect
// the new one starts from a reconciliation record that asks for a verify
// before the first dispatch.
func (d *Decision) reopenStep(st *runstate.StepState, actor string) error {
	s, a := d.state, d.run.action(st.ActionID)
	prior, reconcilable := d.core().reconOf(st)
	if t, ok := WaitTimer(a, st); ok && (st.Status == runstate.StepWaitingManual || st.Status == runstate.StepWaitingSignal) {
		d.rec.ClearTimer(t)
	}
	if !st.NextAttemptAt.IsZero() {
		d.rec.ClearTimer(Timer{Kind: TimerBackoff, Ref: st.ActionID, Due: st.NextAttemptAt})
	}
	d.core().clearSleep(st)
	if st.Status == runstate.StepFailed {
		s.StepFailures-- // the failed step is reopened (docs/semantics.md#resync)
	}
	if err := d.rec.MoveStep(st, runstate.StepPending); err != nil {
		return err
	}
	s.CompletionOrder = slices.DeleteFunc(s.CompletionOrder, func(id string) bool { return id == st.ActionID })
	ended := st.LogicalAttempt
	st.LogicalAttempt++
	st.EngineAttempt, st.Error, st.Reason, st.TaskID, st.ReadyKey, st.Verifying = 0, nil, "", "", "", false
	st.CompTaskID, st.CompReadyKey = "", ""
	st.SetAside()
	st.Reconcile = false
	if reconcilable && verifyBeforeRerun(prior.Status) {
		st.Reconcile = true
		d.core().recordRecon(a, st, Recon{Status: ReconIndeterminate, Key: prior.Key,
			Diagnostic: fmt.Sprintf("rerun: logical attempt %d ended %s; verified before it is dispatched again", ended, prior.Status)})
	}
	if a.ForEach != "" {
		if err := d.core().reopenItems(st, true); err != nil { // the list is evaluated again (docs/semantics.md#for-each)
			return err
		}
	}
	d.rec.Emit(runstate.EvStepRetried, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepPending),
		NewLogicalAttempt: st.LogicalAttempt, Actor: actor, Rerun: true})
	return nil
}

// verifyBeforeRerun reports whether a rerun verifies a step whose ended
// logical attempt left a reconciliation record with status before it
// dispatches it again (the rerun table of docs/semantics.md#rerun): always,
// but when the worker reported a failure with no possible side effect.
func verifyBeforeRerun(status ReconStatus) bool { return status != ReconFailed }

// verifyFirst starts a reopened step whose earlier attempt may have left a
// side effect with a verify task instead of an attempt: the step is
// SCHEDULED, and the verifier's answer decides (ApplyVerify).
func (c *core) verifyFirst(a *definition.Action, st *runstate.StepState) error {
	if err := c.rec.MoveStep(st, runstate.StepScheduled); err != nil {
		return err
	}
	st.ScheduledAt = c.now
	c.scheduleVerify(a, st)
	c.rec.Emit(runstate.EvStepScheduled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepScheduled), TaskID: st.TaskID, Queue: a.Queue, NotBefore: c.now})
	return nil
}

// upstreamOf answers the steps a step comes after: its transitive
// dependencies in a DAG, the actions before it in dispatch order in a
// sequence.
func (r *Run) upstreamOf(id string) []string {
	if r.sequential() {
		var out []string
		for _, a := range r.actionsInOrder() {
			if a.ID == id {
				break
			}
			out = append(out, a.ID)
		}
		return out
	}
	return r.closure(id, func(a *definition.Action) []string { return a.DependsOn })
}

// downstreamOf answers the steps that come after a step: its transitive
// dependants in a DAG, the actions after it in dispatch order in a sequence.
func (r *Run) downstreamOf(id string) []string {
	if r.sequential() {
		var out []string
		after := false
		for _, a := range r.actionsInOrder() {
			if after {
				out = append(out, a.ID)
			}
			after = after || a.ID == id
		}
		return out
	}
	return r.closure(id, func(a *definition.Action) []string {
		var next []string
		for i := range r.Definition.Actions {
			if slices.Contains(r.Definition.Actions[i].DependsOn, a.ID) {
				next = append(next, r.Definition.Actions[i].ID)
			}
		}
		return next
	})
}

// closure answers every action reachable from id through next, id excluded.
func (r *Run) closure(id string, next func(*definition.Action) []string) []string {
	var out []string
	queue := []string{id}
	for len(queue) > 0 {
		a := r.action(queue[0])
		queue = queue[1:]
		if a == nil {
			continue
		}
		for _, n := range next(a) {
			if n != id && !slices.Contains(out, n) {
				out = append(out, n)
				queue = append(queue, n)
			}
		}
	}
	return out
}
