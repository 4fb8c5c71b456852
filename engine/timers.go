package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// fireDueTimers applies every timer due now. A timer is deleted in the same
// batch that applies it, on condition that it is still there, so two engines
// never apply one timer twice.
func (e *Engine) fireDueTimers(ctx context.Context) error {
	start, end := timerRange(e.now())
	var errs []error
	for {
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 256})
		if err != nil {
			return err
		}
		for _, it := range res.Items {
			if err := e.fire(ctx, it.Key, it.Value); err != nil {
				errs = append(errs, err)
			}
		}
		if res.Next == nil || len(errs) > 0 {
			return errors.Join(errs...)
		}
		start = append(res.Next, 0)
	}
}

// fire applies one timer.
func (e *Engine) fire(ctx context.Context, key, value []byte) error {
	var t timerRecord
	if err := json.Unmarshal(value, &t); err != nil {
		e.log.Error("undecodable timer deleted", slog.String("key", string(key)))
		_, err := e.commit(ctx, &store.Batch{Ops: []store.Op{store.Delete(key)}})
		return err
	}
	var task *taskRecord
	var taskVersion uint64
	if t.Kind == timerAttempt || t.Kind == timerHeartbeat {
		var err error
		task, taskVersion, err = e.loadTask(ctx, t.Ref)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	err := e.drive(ctx, t.RunID, func(ch *change) error {
		ch.require(store.IfPresent(key))
		ch.del(key)
		if task != nil {
			ch.require(store.IfVersion(taskKey(task.TaskID), taskVersion))
		}
		ch.applyTimer(t, task.fresh())
		return nil
	})
	var cf *store.ConditionFailedError
	if errors.As(err, &cf) || CodeOf(err) == CodeNotFound {
		return nil // already fired elsewhere, or the task moved on: look again next tick
	}
	return err
}

// applyTimer is the decision a due timer makes.
func (c *change) applyTimer(t timerRecord, task *taskRecord) {
	s := c.state
	if s.Status.Terminal() {
		return
	}
	switch t.Kind {
	case timerAttempt:
		c.attemptTimedOut(task, t.Token, "attempt exceeded its timeout_ms")
	case timerHeartbeat:
		c.heartbeatDue(task, t.Token)
	case timerBackoff:
		c.backoffDue(t.Ref)
	case timerWorkflow:
		c.workflowTimedOut()
	case timerDrain:
		c.drainTimedOut()
	case timerWait:
		c.waitTimedOut(t.Ref)
	}
}

// attemptTimedOut fails a claimed attempt with the timeout class.
func (c *change) attemptTimedOut(task *taskRecord, token, message string) {
	if task == nil || task.State != taskClaimed || task.Token != token {
		return
	}
	st := c.state.Step(task.ActionID)
	a := c.run.action(task.ActionID)
	if st == nil || (st.TaskID != task.TaskID && st.CompTaskID != task.TaskID) {
		return
	}
	task.State = taskLost
	c.put(taskKey(task.TaskID), task)
	if !task.HeartbeatDue.IsZero() {
		c.clearTimer(task.HeartbeatDue, timerHeartbeat, task.TaskID)
	}
	c.clearTimer(task.Deadline, timerAttempt, task.TaskID)
	stepErr := &runstate.StepError{Class: definition.ErrorTimeout, Message: message}
	switch {
	case task.Kind == TaskCompensation:
		c.finishCompensationAttempt(a, st, false, stepErr)
		return
	case task.Kind == TaskVerify:
		st.TaskID, st.Verifying = "", false
		c.failReconciled(a, st, definition.ErrorReconciliationIndeterminate, "verifier unavailable: the verify task timed out")
		return
	case st.Reconcile:
		c.recordRecon(a, st, reconTimedOut, nil, stepErr, "", "")
	}
	c.failAttempt(a, st, attemptResult{outcome: runstate.AttemptTimedOut, err: stepErr, workerID: task.WorkerID})
}

// heartbeatDue times the attempt out, unless a heartbeat came in time, in
// which case the timer is set again from the last heartbeat.
func (c *change) heartbeatDue(task *taskRecord, token string) {
	if task == nil || task.State != taskClaimed || task.Token != token {
		return
	}
	next := task.HeartbeatAt.Add(task.HeartbeatTimeout.D())
	if next.After(c.now) {
		task.HeartbeatDue = next
		c.put(taskKey(task.TaskID), task)
		c.setTimer(timerRecord{RunID: task.RunID, Kind: timerHeartbeat, Ref: task.TaskID, Due: next, Token: token})
		return
	}
	task.HeartbeatDue = c.now // this timer is being deleted
	c.attemptTimedOut(task, token, "no heartbeat within heartbeat_timeout_ms")
}

// backoffDue schedules the next attempt whose backoff has passed.
func (c *change) backoffDue(ref string) {
	if len(ref) > 5 && ref[:5] == "comp:" {
		id := ref[5:]
		st, a := c.state.Step(id), c.run.action(id)
		if st != nil && c.state.Status == runstate.RunCompensating && st.CompStatus == runstate.CompRunning && st.CompTaskID == "" {
			c.scheduleCompensation(a, st, c.now)
		}
		return
	}
	c.advance()
}

// workflowTimedOut fails the run: the workflow timeout caps everything,
// BLOCKED time included (spec 002 §3.4). Work in flight is retired; the
// failure policy compensates succeeded steps with hooks.
func (c *change) workflowTimedOut() {
	s := c.state
	if s.Status == runstate.RunCompensating || s.Status == runstate.RunPending || s.Status == runstate.RunApproved {
		return
	}
	c.cancelOpenSteps("workflow timeout")
	s.Failing, s.HeldOn = "", ""
	runErr := &runstate.RunError{WorkflowTimeout: true, Error: &runstate.StepError{Class: definition.ErrorTimeout, Message: "workflow timeout"}}
	c.compensateOrFail(runErr)
}
