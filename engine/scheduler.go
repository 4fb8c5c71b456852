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
func (c *change) transition(to runstate.RunStatus) {
	from := c.state.Status
	if from == to {
		return
	}
	if !runstate.RunTransitionAllowed(from, to) {
		panic(illegalRun(c.run.RunID, from, to))
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
}

// setStep changes a step's status through the step transition table.
func (c *change) setStep(st *runstate.StepState, to runstate.StepStatus) {
	if st.Status == to {
		return
	}
	if !runstate.StepTransitionAllowed(st.Status, to) {
		panic(illegalStep(c.run.RunID, st.ActionID, st.Status, to))
	}
	st.Status = to
	c.dirty = true
}

// startRun moves a QUEUED run RUNNING and schedules what is runnable.
func (c *change) startRun() {
	s := c.state
	c.transition(runstate.RunRunning)
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
	c.advance()
}

// advance is the scheduler: it applies a pending failure policy once nothing
// is in flight, propagates skips, dispatches every runnable step in
// deterministic order, and settles the run's status.
func (c *change) advance() {
	s := c.state
	if s.Status == runstate.RunPaused {
		c.checkDrained()
		return
	}
	if s.Status != runstate.RunRunning && s.Status != runstate.RunBlocked {
		return
	}
	if s.Failing != "" {
		if c.inFlight() == 0 {
			c.applyFailurePolicy()
		}
		return
	}
	c.dispatchDueRetries()
	// A dispatch may finish a step at once (a wait that consumes a signal
	// accepted earlier), which makes its dependants runnable: repeat until
	// nothing new becomes runnable. Each round moves steps out of PENDING, so
	// it ends within as many rounds as there are steps.
	for {
		c.propagateSkips()
		runnable := c.runnable()
		if len(runnable) == 0 {
			break
		}
		for _, a := range runnable {
			c.dispatch(a)
		}
	}
	c.settle()
}

// sequential reports whether the definition has no dependency edges (spec 000 §1.1).
func (c *change) sequential() bool {
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

// byDispatchOrder sorts actions by order, then id compared byte-wise (spec 000 §1.2).
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
func (c *change) runnable() []*definition.Action {
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

func (c *change) actionsInOrder() []*definition.Action {
	out := make([]*definition.Action, len(c.run.Definition.Actions))
	for i := range c.run.Definition.Actions {
		out[i] = &c.run.Definition.Actions[i]
	}
	byDispatchOrder(out)
	return out
}

// depsSucceeded reports the all-of join: every predecessor SUCCEEDED.
func (c *change) depsSucceeded(a *definition.Action) bool {
	for _, d := range a.DependsOn {
		if c.state.Step(d).Status != runstate.StepSucceeded {
			return false
		}
	}
	return true
}

// passable reports whether later steps may proceed past st: it succeeded,
// was skipped, or was cancelled under on_failure SKIP.
func (c *change) passable(st *runstate.StepState) bool {
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
func (c *change) propagateSkips() {
	if c.sequential() {
		return
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
					c.skipStep(st, fmt.Sprintf("dependency %s was %s", d, ds))
					changed = true
					break
				}
			}
		}
	}
}

// skipStep marks a step SKIPPED.
func (c *change) skipStep(st *runstate.StepState, reason string) {
	c.setStep(st, runstate.StepSkipped)
	st.Reason = reason
	st.CompletedAt = c.now
	c.emit(runstate.EvStepSkipped, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepSkipped), Reason: reason})
}

// dispatch starts one runnable step: a task for an activity, a wait for a
// signal or a person.
func (c *change) dispatch(a *definition.Action) {
	st := c.state.Step(a.ID)
	st.EngineAttempt = 0
	switch {
	case a.WaitForSignal != nil:
		c.openSignalWait(a, st)
	case a.Activity == "" && a.Completion == definition.CompletionManual:
		c.openManualWait(a, st)
	default:
		notBefore := c.now
		if c.state.DelayUntil.After(c.now) {
			notBefore = c.state.DelayUntil
		}
		c.scheduleAttempt(a, st, notBefore)
	}
}

// scheduleAttempt persists a task for the step's next engine attempt. The
// first attempt of a logical attempt makes the step SCHEDULED (spec 001);
// later ones keep it RUNNING.
func (c *change) scheduleAttempt(a *definition.Action, st *runstate.StepState, notBefore time.Time) {
	st.EngineAttempt++
	st.NextAttemptAt = time.Time{}
	t := c.newTask(a, st, TaskActivity, a.Activity, a.Queue, a.Timeout, notBefore)
	st.TaskID, st.ReadyKey = t.TaskID, t.readyKey()
	if st.EngineAttempt == 1 {
		c.setStep(st, runstate.StepScheduled)
		st.ScheduledAt = c.now
		c.emit(runstate.EvStepScheduled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
			Status: string(runstate.StepScheduled), TaskID: t.TaskID, Queue: t.Queue, NotBefore: notBefore})
	}
	c.dirty = true
}

// newTask writes a ready task and its queue entry.
func (c *change) newTask(a *definition.Action, st *runstate.StepState, kind TaskKind, activity, queue string, timeout definition.Duration, notBefore time.Time) *taskRecord {
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
	c.put([]byte(t.readyKey()), t.TaskID)
	c.readyPuts = append(c.readyPuts, readyEntry{prefix: queuePrefix(t.TenantID, t.Queue), key: []byte(t.readyKey()), task: t})
	c.wake = append(c.wake, queueID(t.TenantID, t.Queue))
	return t
}

// dispatchDueRetries schedules the next engine attempt of every step whose
// backoff has passed (a paused run resumes them here too).
func (c *change) dispatchDueRetries() {
	for _, st := range c.state.Steps {
		if st.Status == runstate.StepRunning && st.TaskID == "" && !st.NextAttemptAt.IsZero() && !st.NextAttemptAt.After(c.now) {
			a := c.run.action(st.ActionID)
			if rec := c.reconRecordOfReconciled(a, st); rec != nil && needsVerify(rec.Status) {
				c.scheduleVerify(a, st) // a side effect may exist: ask before dispatching again
				continue
			}
			c.scheduleAttempt(a, st, c.now)
		}
	}
}

// inFlight counts tasks a worker holds or may still pick up.
func (c *change) inFlight() int {
	n := 0
	for _, st := range c.state.Steps {
		if st.TaskID != "" && (st.Status == runstate.StepScheduled || st.Status == runstate.StepRunning) {
			n++
		}
	}
	return n
}

// active reports whether anything still runs or is due to run by itself.
func (c *change) active() bool {
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
func (c *change) settle() {
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
		c.transition(runstate.RunRunning)
		c.emit(runstate.EvRunUnblocked, "", s.Blocks, 0, runstate.EventData{Status: string(runstate.RunRunning)})
	}
	switch {
	case done:
		c.completeRun()
	case blocked && s.Status == runstate.RunRunning:
		c.transition(runstate.RunBlocked)
		s.Blocks++
		c.emit(runstate.EvRunBlocked, "", s.Blocks, 0, runstate.EventData{Status: string(runstate.RunBlocked), WaitingOn: waiting, Reason: c.blockReason()})
	}
}

func (c *change) blockReason() string {
	if c.state.HeldOn != "" {
		return "held on failed step " + c.state.HeldOn + "; retry, skip or cancel"
	}
	return "waiting for a signal or a manual completion"
}

// completeRun ends the run COMPLETED.
func (c *change) completeRun() {
	c.transition(runstate.RunCompleted)
	c.state.CompletedAt = c.now
	c.emit(runstate.EvRunCompleted, "", 1, 0, runstate.EventData{Status: string(runstate.RunCompleted), CompletedAt: c.now})
}

// failRun ends the run FAILED.
func (c *change) failRun(runErr *runstate.RunError, outcome runstate.CompensationOutcome) {
	c.transition(runstate.RunFailed)
	s := c.state
	s.CompletedAt = c.now
	s.Error = runErr
	c.emit(runstate.EvRunFailed, "", 1, 0, runstate.EventData{Status: string(runstate.RunFailed), RunError: runErr,
		CompensationOutcome: outcome, CompletedAt: c.now})
}
