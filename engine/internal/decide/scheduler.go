package decide

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// startRun moves a QUEUED run RUNNING and schedules what is runnable.
func (c *core) startRun() error {
	s := c.state
	if err := c.rec.MoveRun(runstate.RunRunning); err != nil {
		return err
	}
	s.StartedAt = c.now
	if t := c.run.Definition.Timeout.D(); t > 0 {
		s.Deadline = c.now.Add(t)
		c.rec.SetTimer(Timer{Kind: TimerWorkflow, Due: s.Deadline})
	}
	c.rec.Emit(runstate.EvRunStarted, "", 1, 0, runstate.EventData{
		Status:     string(runstate.RunRunning),
		StartedAt:  c.now,
		Context:    c.run.Context,
		PlanID:     c.run.Definition.PlanID,
		PlanSHA256: c.run.PlanSHA256,
	})
	return c.advance()
}

// advance is the scheduler: it applies a pending failure policy once nothing
// is in flight, propagates skips, dispatches every runnable step in
// deterministic order, and settles the run's status.
func (c *core) advance() error {
	s := c.state
	if s.Status == runstate.RunPaused {
		// A paused fan-out starts no new item, but ends once its items
		// have (docs/semantics.md#for-each).
		if err := c.settleFanOuts(false); err != nil {
			return err
		}
		c.checkDrained()
		return nil
	}
	if s.Status != runstate.RunRunning && s.Status != runstate.RunBlocked {
		return nil
	}
	// A due sleep completes even while a failure waits for work in flight,
	// as a running task may (docs/semantics.md#sleep).
	if err := c.wakeDueSleeps(); err != nil {
		return err
	}
	// A fan-out whose item ended dispatches the next one, or ends
	// (docs/semantics.md#for-each); one that ends may make its dependants
	// runnable below, or fail the run.
	if err := c.settleFanOuts(true); err != nil {
		return err
	}
	if s.Failing != "" {
		if inFlight(s) == 0 {
			return c.applyFailurePolicy()
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
		runnable := runnable(&c.run, s)
		if len(runnable) == 0 {
			break
		}
		for _, a := range runnable {
			if err := c.dispatch(a); err != nil {
				return err
			}
			if s.Failing != "" { // the step failed as it became ready (an expression's error)
				return c.advance()
			}
		}
	}
	return c.settle()
}

// sequential reports whether the definition has no dependency edges (docs/semantics.md#sequential-order).
func (r *Run) sequential() bool {
	if r.Definition.DAG {
		return false
	}
	for _, a := range r.Definition.Actions {
		if len(a.DependsOn) > 0 {
			return false
		}
	}
	return true
}

// byDispatchOrder sorts actions by order, then id compared byte-wise (docs/semantics.md#dispatch-order).
func byDispatchOrder(actions []*definition.Action) {
	slices.SortStableFunc(actions, func(a, b *definition.Action) int {
		if a.Order != b.Order {
			return cmp.Compare(a.Order, b.Order)
		}
		return strings.Compare(a.ID, b.ID) // byte-wise
	})
}

// actionsInOrder answers the definition's actions in dispatch order.
func (r *Run) actionsInOrder() []*definition.Action {
	out := make([]*definition.Action, len(r.Definition.Actions))
	for i := range r.Definition.Actions {
		out[i] = &r.Definition.Actions[i]
	}
	byDispatchOrder(out)
	return out
}

// runnable answers the PENDING steps whose predecessors allow them to start,
// in dispatch order.
func runnable(run *Run, s *runstate.State) []*definition.Action {
	var out []*definition.Action
	if run.sequential() {
		for _, a := range run.actionsInOrder() {
			st := s.Step(a.ID)
			if passable(run, st) {
				continue
			}
			if st.Status == runstate.StepPending {
				out = append(out, a)
			}
			break
		}
		return out
	}
	for i := range run.Definition.Actions {
		a := &run.Definition.Actions[i]
		if s.Step(a.ID).Status == runstate.StepPending && depsSucceeded(s, a) {
			out = append(out, a)
		}
	}
	byDispatchOrder(out)
	return out
}

// depsSucceeded reports the all-of join: every predecessor SUCCEEDED.
func depsSucceeded(s *runstate.State, a *definition.Action) bool {
	for _, dep := range a.DependsOn {
		if s.Step(dep).Status != runstate.StepSucceeded {
			return false
		}
	}
	return true
}

// passable reports whether later steps may proceed past st: it succeeded,
// was skipped, or was cancelled under on_failure SKIP.
func passable(run *Run, st *runstate.StepState) bool {
	switch st.Status {
	case runstate.StepSucceeded, runstate.StepSkipped:
		return true
	case runstate.StepCancelled:
		return run.action(st.ActionID).OnFailure == definition.OnFailureSkip
	}
	return false
}

// propagateSkips skips, in a DAG, every PENDING step that needs a skipped
// or cancelled one, until nothing changes.
func (c *core) propagateSkips() error {
	if c.run.sequential() {
		return nil
	}
	for changed := true; changed; {
		changed = false
		for _, a := range c.run.actionsInOrder() {
			st := c.state.Step(a.ID)
			if st.Status != runstate.StepPending {
				continue
			}
			for _, dep := range a.DependsOn {
				if ds := c.state.Step(dep).Status; ds == runstate.StepSkipped || ds == runstate.StepCancelled {
					if err := c.skipStep(st, fmt.Sprintf("dependency %s was %s", dep, ds)); err != nil {
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
func (c *core) skipStep(st *runstate.StepState, reason string) error {
	if err := c.rec.MoveStep(st, runstate.StepSkipped); err != nil {
		return err
	}
	st.Reason = reason
	st.CompletedAt = c.now
	c.rec.Emit(runstate.EvStepSkipped, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{Status: string(runstate.StepSkipped), Reason: reason})
	return nil
}

// dispatch starts one runnable step: a task for an activity, a wait for a
// signal or a person.
func (c *core) dispatch(a *definition.Action) error {
	st := c.state.Step(a.ID)
	st.EngineAttempt = 0
	if run, err := c.checkWhen(a, st); !run || err != nil {
		return err
	}
	switch {
	case a.ForEach != "":
		return c.openFanOut(a, st)
	case a.Sleeps():
		return c.startSleep(a, st)
	case a.Workflow != nil:
		return c.openChild(a, st)
	case a.WaitForSignal != nil:
		return c.openSignalWait(a, st)
	case a.Activity == "" && a.Completion == definition.CompletionManual:
		return c.openManualWait(a, st)
	}
	if rec, ok := c.reconOf(st); ok && needsVerify(rec.Status) {
		return c.verifyFirst(a, st) // a rerun's step whose earlier attempt may have left a side effect (docs/semantics.md#rerun)
	}
	notBefore := c.now
	if c.state.DelayUntil.After(c.now) {
		notBefore = c.state.DelayUntil
	}
	return c.scheduleAttempt(a, st, notBefore)
}

// scheduleAttempt persists a task for the step's next engine attempt. The
// first attempt of a logical attempt makes the step SCHEDULED (docs/semantics.md#task-persistence);
// later ones keep it RUNNING.
func (c *core) scheduleAttempt(a *definition.Action, st *runstate.StepState, notBefore time.Time) error {
	if st.Input == nil {
		if ok, err := c.resolveInput(a, st); !ok || err != nil {
			return err
		}
	}
	startIteration(a, st)
	st.EngineAttempt++
	st.NextAttemptAt = time.Time{}
	st.TaskID, st.ReadyKey = c.rec.NewTask(TaskActivity, a, st, notBefore)
	if st.EngineAttempt == 1 && st.Status == runstate.StepPending {
		if err := c.rec.MoveStep(st, runstate.StepScheduled); err != nil {
			return err
		}
		st.ScheduledAt = c.now
		c.rec.Emit(runstate.EvStepScheduled, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
			Status: string(runstate.StepScheduled), TaskID: st.TaskID, Queue: a.Queue, NotBefore: notBefore, Input: st.Input})
	}
	c.rec.Changed()
	return nil
}

// dispatchDueRetries schedules the next engine attempt of every step whose
// backoff has passed (a paused run resumes them here too).
func (c *core) dispatchDueRetries() error {
	for _, st := range c.state.Steps {
		// A step whose first attempt no worker claimed in time is still
		// SCHEDULED (docs/semantics.md#schedule-to-start).
		waiting := st.Status == runstate.StepRunning || st.Status == runstate.StepScheduled
		if waiting && st.TaskID == "" && !st.NextAttemptAt.IsZero() && !st.NextAttemptAt.After(c.now) {
			a := c.run.action(st.ActionID)
			if a.Workflow != nil { // a failed child's retry: a new child (docs/semantics.md#sub-workflows)
				if err := c.retryChildNow(a, st); err != nil {
					return err
				}
				continue
			}
			if rec, ok := c.reconOf(st); ok && needsVerify(rec.Status) {
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
func inFlight(s *runstate.State) int {
	n := 0
	for _, st := range s.Steps {
		if st.TaskID != "" && (st.Status == runstate.StepScheduled || st.Status == runstate.StepRunning) {
			n++
		}
	}
	return n
}

// active reports whether anything still runs or is due to run by itself.
func active(s *runstate.State) bool {
	for _, st := range s.Steps {
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
func (c *core) settle() error {
	s := c.state
	done := true
	waiting := []string{}
	for _, st := range s.Steps {
		switch {
		case st.IsItem(): // its forEach step says (docs/semantics.md#for-each)
		case passable(&c.run, st):
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
	blocked := !done && !active(s) && len(waiting) > 0
	if s.Status == runstate.RunBlocked && !blocked {
		if err := c.rec.MoveRun(runstate.RunRunning); err != nil {
			return err
		}
		c.rec.Emit(runstate.EvRunUnblocked, "", s.Blocks, 0, runstate.EventData{Status: string(runstate.RunRunning)})
	}
	switch {
	case done:
		return c.completeRun()
	case blocked && s.Status == runstate.RunRunning:
		if err := c.rec.MoveRun(runstate.RunBlocked); err != nil {
			return err
		}
		s.Blocks++
		c.rec.Emit(runstate.EvRunBlocked, "", s.Blocks, 0, runstate.EventData{Status: string(runstate.RunBlocked), WaitingOn: waiting, Reason: blockReason(s)})
	}
	return nil
}

func blockReason(s *runstate.State) string {
	if s.HeldOn != "" {
		return "held on failed step " + s.HeldOn + "; retry, skip or cancel"
	}
	return "waiting for a signal or a manual completion"
}

// completeRun ends the run COMPLETED.
func (c *core) completeRun() error {
	if err := c.rec.MoveRun(runstate.RunCompleted); err != nil {
		return err
	}
	c.state.CompletedAt = c.now
	c.rec.Emit(runstate.EvRunCompleted, "", c.state.RunEnds(), 0, runstate.EventData{Status: string(runstate.RunCompleted), CompletedAt: c.now})
	return nil
}

// failRun ends the run FAILED.
func (c *core) failRun(runErr *runstate.RunError, outcome runstate.CompensationOutcome) error {
	if err := c.rec.MoveRun(runstate.RunFailed); err != nil {
		return err
	}
	s := c.state
	s.CompletedAt = c.now
	s.Error = runErr
	c.rec.Emit(runstate.EvRunFailed, "", s.RunEnds(), 0, runstate.EventData{Status: string(runstate.RunFailed), RunError: runErr,
		CompensationOutcome: outcome, CompletedAt: c.now})
	return nil
}

// UpstreamOutputs answers the outputs of the action's predecessors, which
// its task carries: its dependencies, or the previous action of a sequence.
func (d *Decision) UpstreamOutputs(a *definition.Action) map[string]json.RawMessage {
	deps := a.DependsOn
	if d.run.sequential() {
		for _, b := range d.run.actionsInOrder() {
			if b.Order == a.Order-1 {
				deps = []string{b.ID}
			}
		}
	}
	out := map[string]json.RawMessage{}
	for _, dep := range deps {
		if st := d.state.Step(dep); st != nil && len(st.Output) > 0 {
			out[dep] = st.Output
		}
	}
	return out
}
