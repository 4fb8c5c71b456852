package decide

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// The fan-out rules (docs/semantics.md#for-each). A forEach step, once
// ready, evaluates its list and becomes RUNNING with one item step per
// element, PENDING, each addressed step[index] (definition.ItemID) and
// run as the step would be run — its activity's task, or its
// sub-workflow's child — with its own attempts, retries, timeouts and
// idempotency key. At most maxConcurrency items are in flight (SCHEDULED
// or RUNNING, a backoff included); whenever one ends, the next PENDING
// index is dispatched in that same decision. When every item SUCCEEDED
// the step succeeds with the list of their outputs in item order. An item
// that fails for good stops the fan-out: no new item starts, and once the
// items in flight have ended the step fails with that item's error, and
// its on_failure applies.

// ReasonFanOutStopped is the reason of a fan-out's PENDING items cancelled
// because the fan-out stopped.
const ReasonFanOutStopped = "fan-out stopped"

// DefaultMaxFanOut is the cap on a forEach list's length when the engine
// sets none (Run.MaxFanOut).
const DefaultMaxFanOut = definition.DefaultMaxFanOut

// maxFanOut answers the run's cap on a forEach list's length.
func (r *Run) maxFanOut() int {
	if r.MaxFanOut > 0 {
		return r.MaxFanOut
	}
	return DefaultMaxFanOut
}

// items answers the item steps of the forEach step parent, in index order
// (the order they were created in): every one it has, when all, else those
// of its current list (of index below its ItemCount).
func items(s *runstate.State, parent *runstate.StepState, all bool) []*runstate.StepState {
	var out []*runstate.StepState
	for _, st := range s.Steps {
		if st.Parent == parent.ActionID && (all || st.Index < parent.ItemCount) {
			out = append(out, st)
		}
	}
	return out
}

// itemInFlight reports whether an item occupies one of its step's
// maxConcurrency places: it was dispatched and has not ended.
func itemInFlight(st *runstate.StepState) bool {
	switch st.Status {
	case runstate.StepScheduled, runstate.StepRunning, runstate.StepWaitingManual, runstate.StepWaitingSignal:
		return true
	}
	return false
}

// openFanOut starts a ready forEach step: its list evaluated (an error, a
// value that is not a list, or a list longer than the cap fails the step,
// class VALIDATION), the step RUNNING with one PENDING item per element,
// StepFannedOut, and the first maxConcurrency items dispatched. An empty
// list completes the step with []. A step whose RETRY_STEP kept its items
// runs them again without evaluating the list.
func (c *core) openFanOut(a *definition.Action, st *runstate.StepState) error {
	had := items(c.state, st, true)
	if len(had) == 0 || had[0].Item == nil { // not evaluated yet, or a rerun's
		list, err := c.run.Definition.EvalForEach(a, c.values())
		if err == nil && len(list) > c.run.maxFanOut() {
			err = c.run.Definition.FanOutCapError(a, len(list), c.run.maxFanOut())
		}
		if err != nil {
			if err := c.cancelPendingItems(had, "the forEach list could not be evaluated"); err != nil {
				return err
			}
			if len(list) > c.run.maxFanOut() {
				return c.failFanOutCap(a, st, err)
			}
			return c.failAsReady(a, st, err)
		}
		if err := c.placeItems(st, had, list); err != nil {
			return err
		}
	}
	if err := c.rec.MoveStep(st, runstate.StepRunning); err != nil {
		return err
	}
	st.ScheduledAt, st.StartedAt = c.now, c.now
	c.rec.Emit(runstate.EvStepFannedOut, st.ActionID, st.LogicalAttempt, 0, runstate.EventData{
		Status: string(runstate.StepRunning), StartedAt: c.now, ItemCount: st.ItemCount, MaxConcurrency: a.MaxConcurrency})
	c.rec.Changed()
	return c.settleFanOut(a, st, c.mayDispatchItems())
}

// placeItems gives the forEach step one PENDING item per element of list:
// the items a rerun reopened take the elements of their indexes, new items
// are created for the rest, and reopened items past the list's end are
// skipped.
func (c *core) placeItems(st *runstate.StepState, had []*runstate.StepState, list []json.RawMessage) error {
	for i, item := range list {
		if i < len(had) {
			had[i].Item = item
			continue
		}
		c.state.Steps = append(c.state.Steps, &runstate.StepState{ActionID: definition.ItemID(st.ActionID, i),
			Parent: st.ActionID, Index: i, Item: item, Status: runstate.StepPending, LogicalAttempt: st.LogicalAttempt})
	}
	st.ItemCount = len(list)
	for _, it := range had[min(len(list), len(had)):] {
		if it.Status == runstate.StepPending {
			if err := c.skipStep(it, "not in the list the rerun evaluated"); err != nil {
				return err
			}
		}
	}
	return nil
}

// failFanOutCap fails a forEach step whose list is longer than the cap
// (class VALIDATION, code for_each_cap).
func (c *core) failFanOutCap(a *definition.Action, st *runstate.StepState, capErr error) error {
	if err := c.rec.MoveStep(st, runstate.StepRunning); err != nil {
		return err
	}
	st.StartedAt = c.now
	return c.failStep(a, st, &runstate.StepError{Class: definition.ErrorValidation, Code: "for_each_cap", Message: capErr.Error()})
}

// mayDispatchItems reports whether the run starts new items now: it runs
// (not paused, not ending) and no failure stops scheduling.
func (c *core) mayDispatchItems() bool {
	s := c.state
	return (s.Status == runstate.RunRunning || s.Status == runstate.RunBlocked) && s.Failing == "" && s.HeldOn == ""
}

// settleFanOuts settles every RUNNING forEach step: items dispatched up
// to maxConcurrency when dispatch is set, the step ended once its items
// allow it.
func (c *core) settleFanOuts(dispatch bool) error {
	for i := range c.run.Definition.Actions {
		a := &c.run.Definition.Actions[i]
		if a.ForEach == "" {
			continue
		}
		if st := c.state.Step(a.ID); st != nil && st.Status == runstate.StepRunning {
			if err := c.settleFanOut(a, st, dispatch && c.mayDispatchItems()); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleFanOut dispatches the next PENDING items of a RUNNING forEach step
// while fewer than maxConcurrency are in flight (when dispatch is set and
// no item failed), and ends the step once nothing of it is in flight: it
// fails with its first failed item's error, or — when the run stops
// scheduling because another step failed — is cancelled, or, when every
// item succeeded, succeeds with their outputs in item order.
func (c *core) settleFanOut(a *definition.Action, st *runstate.StepState, dispatch bool) error {
	its := items(c.state, st, false)
	inFlight, pending := 0, 0
	var failed *runstate.StepState
	for _, it := range its {
		switch {
		case itemInFlight(it):
			inFlight++
		case it.Status == runstate.StepPending:
			pending++
		case (it.Status == runstate.StepFailed || it.Status == runstate.StepCancelled) && failed == nil:
			failed = it
		}
	}
	stopped := c.stoppedBy(a)
	if dispatch && failed == nil && !stopped {
		limit := max(a.MaxConcurrency, 1)
		for _, it := range its {
			if inFlight >= limit || failed != nil {
				break
			}
			if it.Status != runstate.StepPending {
				continue
			}
			if err := c.dispatchItem(a, it); err != nil {
				return err
			}
			pending--
			switch {
			case itemInFlight(it):
				inFlight++
			case it.Status == runstate.StepFailed:
				failed = it // its input could not be evaluated
			}
		}
	}
	if inFlight > 0 || (pending > 0 && failed == nil && !stopped) {
		return nil
	}
	switch {
	case stopped:
		reason := "fail-fast after " + c.state.Failing + " failed"
		if err := c.cancelPendingItems(its, reason); err != nil {
			return err
		}
		return c.cancelStep(st, reason)
	case failed != nil:
		if err := c.cancelPendingItems(its, ReasonFanOutStopped+": "+failed.ActionID+" failed"); err != nil {
			return err
		}
		return c.failStep(a, st, itemError(failed))
	}
	return c.succeedStep(st, fanOutOutput(its), nil, "for_each")
}

// stoppedBy reports whether another step's failure stops the fan-out a:
// the run fails fast (its on_failure is not hold, under which the fan-out
// waits with the run and goes on after a RETRY_STEP).
func (c *core) stoppedBy(a *definition.Action) bool {
	f := c.state.Failing
	if f == "" || f == a.ID {
		return false
	}
	fa := c.run.action(f)
	return fa == nil || fa.OnFailure != definition.OnFailureHold
}

// dispatchItem starts one PENDING item: as an activity's task, or as a
// sub-workflow's child.
func (c *core) dispatchItem(parent *definition.Action, it *runstate.StepState) error {
	a := parent.ItemAction(it.Index)
	it.EngineAttempt = 0
	if a.Workflow != nil {
		return c.openChild(a, it)
	}
	if rec, ok := c.reconOf(it); ok && needsVerify(rec.Status) {
		return c.verifyFirst(a, it)
	}
	notBefore := c.now
	if c.state.DelayUntil.After(c.now) {
		notBefore = c.state.DelayUntil
	}
	return c.scheduleAttempt(a, it, notBefore)
}

// cancelPendingItems cancels the items of a stopped fan-out that never
// started.
func (c *core) cancelPendingItems(its []*runstate.StepState, reason string) error {
	for _, it := range its {
		if it.Status == runstate.StepPending {
			if err := c.cancelStep(it, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// itemError is a fan-out's error when its item failed: the item's class
// and code, its message prefixed with the item's id.
func itemError(it *runstate.StepState) *runstate.StepError {
	out := &runstate.StepError{Class: definition.ErrorUnknown, Code: "for_each_item_failed", Message: "item " + it.ActionID + " failed"}
	if it.Status == runstate.StepCancelled {
		out.Class, out.Code, out.Message = definition.ErrorCancelled, "for_each_item_cancelled", "item "+it.ActionID+" was cancelled"
		return out
	}
	if e := it.Error; e != nil {
		out.Class, out.Retryable = e.Class, false
		if e.Code != "" {
			out.Code = e.Code
		}
		if e.Message != "" {
			out.Message += ": " + e.Message
		}
	}
	return out
}

// fanOutOutput answers a fan-out's output: the JSON list of its items'
// outputs in item order, null for an item without one.
func fanOutOutput(its []*runstate.StepState) json.RawMessage {
	n := 2
	for _, it := range its {
		n += max(len(it.Output), 4) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range its {
		if i > 0 {
			b = append(b, ',')
		}
		if len(it.Output) == 0 {
			b = append(b, "null"...)
			continue
		}
		b = append(b, it.Output...)
	}
	return append(b, ']')
}

// itemInput answers an item's input with its ${{ }} expressions evaluated
// over the run, item and index.
func (c *core) itemInput(it *runstate.StepState) (json.RawMessage, error) {
	parent := c.run.action(it.Parent)
	return c.run.Definition.ResolveItemInput(parent, it.Index, it.Item, c.values())
}

// reopenItems opens a new logical attempt for the items of a forEach step
// its RETRY_STEP reopened: those that did not succeed run again under the
// step's new logical attempt, those that did keep their outputs.
//
// A rerun's (rerun) reopens every item, its list evaluated again when the
// step is dispatched (docs/semantics.md#for-each); each item keeps its
// state — its attempts and its events' keys — under a new logical attempt.
func (c *core) reopenItems(parent *runstate.StepState, rerun bool) error {
	s := c.state
	reopened := map[string]bool{}
	for _, it := range items(s, parent, true) {
		if !rerun && (it.Status == runstate.StepSucceeded || it.Status == runstate.StepSkipped) {
			continue
		}
		if it.Status != runstate.StepPending {
			if err := c.rec.MoveStep(it, runstate.StepPending); err != nil {
				return err
			}
		}
		if !it.NextAttemptAt.IsZero() {
			c.rec.ClearTimer(Timer{Kind: TimerBackoff, Ref: it.ActionID, Due: it.NextAttemptAt})
		}
		it.ReopenItem(parent.LogicalAttempt, rerun)
		reopened[it.ActionID] = true
	}
	if rerun {
		s.CompletionOrder = slices.DeleteFunc(s.CompletionOrder, func(id string) bool { return reopened[id] })
	}
	c.rec.Changed()
	return nil
}

// refuseItem refuses an operator's control that names an item of a
// fan-out: the controls act on the forEach step.
func refuseItem(runID, id string, status runstate.RunStatus) error {
	parent, index, _ := definition.ParseItemID(id)
	return illegal(Move{RunID: runID, ActionID: id, Status: status,
		Why: id + " is item " + strconv.Itoa(index) + " of the forEach step " + parent + "; retry, skip or rerun " + parent})
}
