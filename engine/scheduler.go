package engine

import (
	"bytes"
	"fmt"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"sort"
	"time"
)

// transition changes the run's status through the one transition table; an
// illegal transition fails the whole decision, so it is never applied.
func (c *recorder) transition(to runstate.RunStatus) error {
	from := c.state.Status
	if from == to {
		return nil
	}
	if !runstate.RunTransitionAllowedFor(c.state, to) {
		return broken(errIllegalTransition(runMove(c.run.RunID, from, to)))
	}
	if from == runstate.RunQueued && !c.state.QueuedAt.IsZero() {
		c.del(queuedKey(c.state.QueuedAt, c.run.RunID))
		c.state.QueuedAt = time.Time{}
	}
	if to.Terminal() {
		c.releaseSlots()
	}
	c.del(runStatusKey(c.run.TenantID, from, c.run.RunID))
	c.ops = append(c.ops, store.Put(runStatusKey(c.run.TenantID, to, c.run.RunID), nil))
	c.state.Status = to
	c.state.Substatus = ""
	c.state.Message = ""
	c.dirty = true
	return nil
}

// setStep changes a step's status through the step transition table.
func (c *recorder) setStep(st *runstate.StepState, to runstate.StepStatus) error {
	if st.Status == to {
		return nil
	}
	if !runstate.StepTransitionAllowed(st.Status, to) {
		return broken(errIllegalTransition(stepMove(c.run.RunID, st.ActionID, st.Status, to)))
	}
	st.Status = to
	c.dirty = true
	return nil
}

// startRun moves a QUEUED run RUNNING and schedules what is runnable.
func (c *change) startRun() error {
	s := c.state
	if err := c.transition(runstate.RunRunning); err != nil {
		return err
	}
	s.StartedAt = c.now
	if t := c.run.Definition.Timeout.D(); t > 0 {
		s.Deadline = c.now.Add(t)
		c.setTimer(timerRecord{RunID: s.RunID, Kind: timerWorkflow, Due: s.Deadline})
	}
	c.emit(runstate.EvRunStarted, "", 1, 0, runstate.EventData{
		Status:     string(runstate.RunRunning),
		StartedAt:  c.now,
		Context:    c.run.context(c.run.SubmittedBy),
		PlanID:     c.run.Definition.PlanID,
		PlanSHA256: c.run.PlanSHA256,
	})
	return c.advance()
}

// advance is the scheduler: it applies a pending failure policy once nothing
// is in flight, propagates skips, dispatches every runnable step in
// deterministic order, and settles the run's status.
func (c *change) advance() error {
	s := c.state
	if s.Status == runstate.RunPaused {
		c.checkDrained()
		return nil
	}
	if s.Status != runstate.RunRunning && s.Status != runstate.RunBlocked {
		return nil
	}
	if s.Failing != "" {
		if c.inFlight() == 0 {
			if err := c.applyFailurePolicy(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := c.dispatchDueRetries(); err != nil {
		return err
	}
	// A dispatch may finish a step at once (a wait that consumes a signal
	// accepted earlier), which makes its dependants runnable: repeat until
	// nothing new becomes runnable. Each round moves steps out of PENDING, so
	// it ends within as many rounds as there are steps.
	for {
		if err := c.propagateSkips(); err != nil {
			return err
		}
		runnable := c.runnable()
		if len(runnable) == 0 {
			break
		}
		for _, a := range runnable {
			if err := c.dispatch(a); err != nil {
				return err
			}
		}
	}
	return c.settle()
}

// sequential reports whether the definition has no dependency edges (docs/semantics.md#sequential-order).
func (c *runView) sequential() bool {
	if c.run.Definition.DAG {
		return false
	}
	for _, a := range c.run.Definition.Actions {
		if len(a.DependsOn) > 0 {
			return false
		}
	}
	return true
}

// byDispatchOrder sorts actions by order, then id compared byte-wise (docs/semantics.md#dispatch-order).
func byDispatchOrder(actions []*definition.Action) {
	sort.SliceStable(actions, func(i, j int) bool {
		if actions[i].Order != actions[j].Order {
			return actions[i].Order < actions[j].Order
		}
		return bytes.Compare([]byte(actions[i].ID), []byte(actions[j].ID)) < 0
	})
}

// runnable answers the PENDING steps whose predecessors allow them to start,
// in dispatch order.
func (c *runView) runnable() []*definition.Action {
	var out []*definition.Action
	if c.sequential() {
		ordered := c.actionsInOrder()
		for _, a := range ordered {
			st := c.state.Step(a.ID)
			if c.passable(st) {
				continue
			}
			if st.Status == runstate.StepPending {
				out = append(out, a)
			}
			break
		}
		return out
	}
	for i := range c.run.Definition.Actions {
		a := &c.run.Definition.Actions[i]
		if c.state.Step(a.ID).Status == runstate.StepPending && c.depsSucceeded(a) {
			out = append(out, a)
		}
	}
	byDispatchOrder(out)
	return out
}

func (c *runView) actionsInOrder() []*definition.Action {
	out := make([]*definition.Action, len(c.run.Definition.Actions))
	for i := range c.run.Definition.Actions {
		out[i] = &c.run.Definition.Actions[i]
	}
	byDispatchOrder(out)
	return out
}

// depsSucceeded reports the all-of join: every predecessor SUCCEEDED.
func (c *runView) depsSucceeded(a *definition.Action) bool {
	for _, d := range a.DependsOn {
		if c.state.Step(d).Status != runstate.StepSucceeded {
			return false
		}
	}
	return true
}

// passable reports whether later steps may proceed past st: it succeeded,
// was skipped, or was cancelled under on_failure SKIP.
func (c *runView) passable(st *runstate.StepState) bool {
	switch st.Status {
	case runstate.StepSucceeded, runstate.StepSkipped:
		return true
	case runstate.StepCancelled:
		return c.run.action(st.ActionID).OnFailure == definition.OnFailureSkip
	}
	return false
}

// propagateSkips skips, in a DAG, every PENDING step that needs a skipped
// or cancelled one, until nothing changes.
func (c *change) propagateSkips() error {
	if c.sequential() {
		return nil
	}
	for changed := true; changed; {
		changed = false
		for _, a := range c.actionsInOrder() {
			st := c.state.Step(a.ID)
			if st.Status != runstate.StepPending {
				continue
			}
			for _, d := range a.DependsOn {
				if ds := c.state.Step(d).Status; ds == runstate.StepSkipped || ds == runstate.StepCancelled {
					if err := c.skipStep(st, fmt.Sprintf("dependency %s was %s", d, ds)); err != nil {
						return err
					}
					changed = true
					break
				}
			}
		}
	}
	return nil
}

// skipStep marks a step SKIPPED.
func (c *recorder) skipStep(st *runstate.StepState, reason string) error {
	if err := c.setStep(st, runstate.StepSkipped); err != nil {
		return err
	}
	st.Reason = reason
	st.CompletedAt = c.now
	c.emit(runstate.EvStepSkipped, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepSkipped), Reason: reason})
	return nil
}

// dispatch starts one runnable step: a task for an activity, a wait for a
// signal or a person.
func (c *change) dispatch(a *definition.Action) error {
	st := c.state.Step(a.ID)
	st.EngineAttempt = 0
	switch {
	case a.WaitForSignal != nil:
		if err := c.openSignalWait(a, st); err != nil {
			return err
		}
	case a.Activity == "" && a.Completion == definition.CompletionManual:
		if err := c.openManualWait(a, st); err != nil {
			return err
		}
	default:
		notBefore := c.now
		if c.state.DelayUntil.After(c.now) {
			notBefore = c.state.DelayUntil
		}
		if err := c.scheduleAttempt(a, st, notBefore); err != nil {
			return err
		}
	}
	return nil
}

// scheduleAttempt persists a task for the step's next engine attempt. The
// first attempt of a logical attempt makes the step SCHEDULED (docs/semantics.md#task-persistence);
// later ones keep it RUNNING.
func (c *change) scheduleAttempt(a *definition.Action, st *runstate.StepState, notBefore time.Time) error {
	st.EngineAttempt++
	st.NextAttemptAt = time.Time{}
	t := c.newTask(a, st, TaskActivity, a.Activity, a.Queue, a.Timeout, notBefore)
	st.TaskID, st.ReadyKey = t.TaskID, t.readyKey()
	if st.EngineAttempt == 1 {
		if err := c.setStep(st, runstate.StepScheduled); err != nil {
			return err
		}
		st.ScheduledAt = c.now
		c.emit(runstate.EvStepScheduled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
			Status: string(runstate.StepScheduled), TaskID: t.TaskID, Queue: t.Queue, NotBefore: notBefore})
	}
	c.dirty = true
	return nil
}

// newTask writes a ready task and its queue entry.
func (c *recorder) newTask(a *definition.Action, st *runstate.StepState, kind TaskKind, activity, queue string, timeout definition.Duration, notBefore time.Time) *taskRecord {
	attempt := st.EngineAttempt
	if kind == TaskCompensation {
		attempt = st.CompAttempt
	}
	t := &taskRecord{
		FormatVersion:    recordVersion,
		TaskID:           fmt.Sprintf("%s/%s/%d/%s%d", c.run.RunID, a.ID, st.LogicalAttempt, kind, attempt),
		RunID:            c.run.RunID,
		TenantID:         c.run.TenantID,
		ActionID:         a.ID,
		Kind:             kind,
		Queue:            queue,
		Activity:         activity,
		LogicalAttempt:   st.LogicalAttempt,
		EngineAttempt:    attempt,
		NotBefore:        notBefore,
		Seq:              c.state.LastSeq + 1,
		Timeout:          timeout,
		HeartbeatTimeout: a.HeartbeatTimeout,
		State:            taskReady,
	}
	c.put(taskKey(t.TaskID), t)
	c.makeReady(t)
	return t
}

// dispatchDueRetries schedules the next engine attempt of every step whose
// backoff has passed (a paused run resumes them here too).
func (c *change) dispatchDueRetries() error {
	for _, st := range c.state.Steps {
		if st.Status == runstate.StepRunning && st.TaskID == "" && !st.NextAttemptAt.IsZero() && !st.NextAttemptAt.After(c.now) {
			a := c.run.action(st.ActionID)
			if rec := c.reconRecordOfReconciled(a, st); rec != nil && needsVerify(rec.Status) {
				c.scheduleVerify(a, st) // a side effect may exist: ask before dispatching again
				continue
			}
			if err := c.scheduleAttempt(a, st, c.now); err != nil {
				return err
			}
		}
	}
	return nil
}

// inFlight counts tasks a worker holds or may still pick up.
func (c *runView) inFlight() int {
	n := 0
	for _, st := range c.state.Steps {
		if st.TaskID != "" && (st.Status == runstate.StepScheduled || st.Status == runstate.StepRunning) {
			n++
		}
	}
	return n
}

// active reports whether anything still runs or is due to run by itself.
func (c *runView) active() bool {
	for _, st := range c.state.Steps {
		switch st.Status {
		case runstate.StepScheduled, runstate.StepRunning:
			return true
		}
	}
	return false
}

// settle completes the run when every step is done, and moves it between
// RUNNING and BLOCKED: BLOCKED only when nothing is scheduled or running and
// something waits for a person, a signal or an operator.
func (c *change) settle() error {
	s := c.state
	done := true
	waiting := []string{}
	for _, st := range s.Steps {
		switch {
		case c.passable(st):
		case st.Status == runstate.StepWaitingManual || st.Status == runstate.StepWaitingSignal:
			done = false
			waiting = append(waiting, st.ActionID)
		default:
			done = false
		}
	}
	if s.HeldOn != "" {
		waiting = append(waiting, s.HeldOn)
	}
	done = done && s.HeldOn == ""
	blocked := !done && !c.active() && len(waiting) > 0
	if s.Status == runstate.RunBlocked && !blocked {
		if err := c.transition(runstate.RunRunning); err != nil {
			return err
		}
		c.emit(runstate.EvRunUnblocked, "", s.Blocks, 0, runstate.EventData{Status: string(runstate.RunRunning)})
	}
	switch {
	case done:
		if err := c.completeRun(); err != nil {
			return err
		}
	case blocked && s.Status == runstate.RunRunning:
		if err := c.transition(runstate.RunBlocked); err != nil {
			return err
		}
		s.Blocks++
		c.emit(runstate.EvRunBlocked, "", s.Blocks, 0, runstate.EventData{Status: string(runstate.RunBlocked), WaitingOn: waiting, Reason: c.blockReason()})
	}
	return nil
}

func (c *runView) blockReason() string {
	if c.state.HeldOn != "" {
		return "held on failed step " + c.state.HeldOn + "; retry, skip or cancel"
	}
	return "waiting for a signal or a manual completion"
}

// completeRun ends the run COMPLETED.
func (c *change) completeRun() error {
	if err := c.transition(runstate.RunCompleted); err != nil {
		return err
	}
	c.state.CompletedAt = c.now
	c.emit(runstate.EvRunCompleted, "", 1, 0, runstate.EventData{Status: string(runstate.RunCompleted), CompletedAt: c.now})
	return nil
}

// failRun ends the run FAILED.
func (c *change) failRun(runErr *runstate.RunError, outcome runstate.CompensationOutcome) error {
	if err := c.transition(runstate.RunFailed); err != nil {
		return err
	}
	s := c.state
	s.CompletedAt = c.now
	s.Error = runErr
	c.emit(runstate.EvRunFailed, "", 1, 0, runstate.EventData{Status: string(runstate.RunFailed), RunError: runErr,
		CompensationOutcome: outcome, CompletedAt: c.now})
	return nil
}
