package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/acceptance"
	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// fireDueTimers applies every timer due now. A timer is deleted in the same
// batch that applies it, on condition that it is still there, so two engines
// never apply one timer twice.
func fireDueTimers(ctx context.Context, e *Engine) error {
	start, end := record.TimerRange(clockNow(e))
	var errs []error
	for {
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 256})
		if err != nil {
			return err
		}
		for _, it := range res.Items {
			if err := fireTimer(ctx, e, it.Key, it.Value); err != nil {
				errs = append(errs, err)
			}
		}
		if res.Next == nil || len(errs) > 0 {
			return errors.Join(errs...)
		}
		start = append(res.Next, 0)
	}
}

// fireTimer applies one timer.
func fireTimer(ctx context.Context, e *Engine, key, value []byte) error {
	var t record.Timer
	if err := record.DecodeTimer(value, &t); err != nil {
		e.log.Error("undecodable timer deleted", slog.String("key", string(key)))
		return deleteOrphan(ctx, e, key)
	}
	switch t.Kind {
	case record.TimerChildStart, record.TimerChildEnd, record.TimerParent:
		return fireSubWorkflowTimer(ctx, e, key, &t)
	}
	var task *record.Task
	var taskVersion uint64
	if t.Kind == record.TimerAttempt || t.Kind == record.TimerHeartbeat || t.Kind == record.TimerStart {
		var err error
		task, taskVersion, err = e.records.Task(ctx, t.Ref)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	var held bool
	if t.Kind == record.TimerStart {
		var err error
		if held, err = flowHeldNow(ctx, e, task); err != nil {
			return err
		}
	}
	err := drive(ctx, e, t.RunID, func(ch *change) error {
		ch.flowHeld = held
		ch.require(store.IfPresent(key))
		ch.del(key)
		task := taskIn(ch, task, taskVersion)
		if task != nil {
			ch.require(cache.TaskUnchanged(task.TaskID, taskVersion))
		}
		return dueTimer{ch}.apply(t, task.Fresh())
	})
	var cf *store.ConditionFailedError
	switch {
	case CodeOf(err) == CodeNotFound:
		return dropIfRunGone(ctx, e, t.RunID, key)
	case errors.As(err, &cf):
		return nil // already fired elsewhere, or the task moved on: look again next tick
	}
	return err
}

// dueTimer is the decision a due timer makes, on the change that records it.
type dueTimer struct{ *change }

// apply is the decision a due timer makes: a claim's attempt or heartbeat
// timeout here, any other timer as the rules decide (decide.TimerDue).
func (c dueTimer) apply(t record.Timer, task *record.Task) error {
	if c.state.Status.Terminal() {
		return nil
	}
	switch t.Kind {
	case record.TimerAttempt:
		return c.attemptTimedOut(task, t.Token, "attempt exceeded its timeout_ms")
	case record.TimerHeartbeat:
		return c.heartbeatDue(task, t.Token)
	case record.TimerStart:
		return c.startTimedOut(task)
	}
	return c.rules().TimerDue(decide.Timer{Kind: decide.TimerKind(t.Kind), Ref: t.Ref, Due: t.Due})
}

// attemptTimedOut fails a claimed attempt with the timeout class.
func (c dueTimer) attemptTimedOut(task *record.Task, token, message string) error {
	if task == nil || task.State != record.TaskClaimed || task.Token != token {
		return nil
	}
	st := decide.StepOfTask(c.state, task.ActionID, task.TaskID)
	if st == nil {
		return nil
	}
	task.State = record.TaskLost
	c.put(record.TaskKey(task.TaskID), task)
	dropCheckpointClaim(c.change, task) // its record says it from now on
	if task.Kind == TaskActivity {
		releaseFlowSlot(c.change, st, task.Queue)
	}
	dropEagerToken(c.change, task)
	observeAttemptEnd(c.change, task, "timed_out")
	keepHeartbeatDetails(st, task)
	if !task.HeartbeatDue.IsZero() {
		c.clearTimer(task.HeartbeatDue, record.TimerHeartbeat, task.TaskID)
	}
	clearDeadline(c.change, task)
	return c.rules().AttemptTimedOut(decide.TaskKind(task.Kind), c.run.Action(task.ActionID), st, task.WorkerID, message)
}

// heartbeatDue times the attempt out, unless a heartbeat came in time, in
// which case the timer is set again from the last heartbeat.
func (c dueTimer) heartbeatDue(task *record.Task, token string) error {
	if task == nil || task.State != record.TaskClaimed || task.Token != token || claimEnded(c.state, task) != "" {
		return nil // the claim ended, perhaps by a report its record does not show
	}
	next := task.HeartbeatAt.Add(task.HeartbeatTimeout.D())
	if next.After(c.now) {
		task.HeartbeatDue = next
		c.put(record.TaskKey(task.TaskID), task)
		c.setTimer(record.Timer{RunID: task.RunID, Kind: record.TimerHeartbeat, Ref: task.TaskID, Due: next, Token: token})
		return nil
	}
	task.HeartbeatDue = c.now // this timer is being deleted
	return c.attemptTimedOut(task, token, "no heartbeat within heartbeat_timeout_ms")
}

// expireSignals removes the accepted-response records whose retention has
// passed, with their payloads — but only where that is safe (the cleanup rule of
// docs/semantics.md#persisted-format): a signal the run has not consumed yet keeps its payload and
// record until the run consumes it or ends. Each removal is a change to the
// run, so it is fenced like every other write to it.
func expireSignals(ctx context.Context, e *Engine) error {
	expired, err := acceptance.ExpiredAt(ctx, e.store, clockNow(e))
	if err != nil {
		return err
	}
	var errs []error
	for _, x := range expired {
		errs = append(errs, expireSignal(ctx, e, x.IndexKey, x.RunID, x.Name, x.ID))
	}
	return errors.Join(errs...)
}

// expireSignal removes one expired signal's records, when safe.
func expireSignal(ctx context.Context, e *Engine, indexKey []byte, runID, name, id string) error {
	err := drive(ctx, e, runID, func(ch *change) error {
		ch.require(store.IfPresent(indexKey))
		ch.del(indexKey)
		for _, p := range ch.state.Signals {
			if p.Name == name && p.ID == id && !ch.state.Status.Terminal() {
				// Still waiting to be consumed: look again one retention later.
				ch.ops = append(ch.ops, store.Put(acceptance.ExpiryKey(ch.now.Add(e.cfg.SignalRetention), runID, name, id), nil))
				return nil
			}
		}
		ch.del(acceptance.RecordKey(runID, name, id))
		ch.del(acceptance.PayloadKey(runID, name, id))
		return nil
	})
	var cf *store.ConditionFailedError
	switch {
	case errors.As(err, &cf):
		return nil // removed elsewhere
	case CodeOf(err) == CodeNotFound:
		return deleteOrphan(ctx, e, indexKey) // the run is gone
	}
	return err
}

// deleteOrphan deletes a key that belongs to no run the engine can read (an
// undecodable timer, the index entry of a run that is gone): the one write
// made outside commitDecision, since there is no run to decide about.
func deleteOrphan(ctx context.Context, e *Engine, key []byte) error {
	_, err := commitChecked(ctx, e.store, &store.Batch{Ops: []store.Op{store.Delete(key)}})
	return err
}

// The schedule-to-start timeout (docs/semantics.md#schedule-to-start): a
// ready activity or compensation task carries a durable timer, written in
// the batch that makes it ready and removed by the batch that claims it. If
// the timer fires first, the task leaves its queue in the same batch that
// fails the attempt with the schedule_to_start class, so a late poll cannot
// claim it, and the retry policy and on_failure (a hook's own retry policy)
// decide what follows. The timer and the claim race on the task record's
// version and the timer's presence: exactly one of them commits. Verify
// tasks have none: they ask a worker that is known to have run the activity.

// startTimeout answers how long a task of a may wait for a worker: the
// action's own timeout, else the deployment's; zero when there is none.
func startTimeout(c *change, a *definition.Action) time.Duration {
	if a != nil && a.ScheduleToStartTimeout > 0 {
		return a.ScheduleToStartTimeout.D()
	}
	return c.e.cfg.ScheduleToStartTimeout
}

// scheduleStart records on an activity or compensation task that is ready
// from from on the due time of its schedule-to-start timer, for the task's
// ready entry to write (makeReady); zero when it has none.
func scheduleStart(c *change, t *record.Task, a *definition.Action, from time.Time) {
	t.StartDue = time.Time{}
	if d := startTimeout(c, a); t.Kind != TaskVerify && d > 0 {
		t.StartDue = from.Add(d)
	}
}

// armStartTimer sets the schedule-to-start timer of a task that stays
// ready from from on (scheduleStart), and records its due time on the task
// (which the caller then writes).
func armStartTimer(c *change, t *record.Task, a *definition.Action, from time.Time) {
	scheduleStart(c, t, a, from)
	if !t.StartDue.IsZero() {
		c.setTimer(record.Timer{RunID: t.RunID, Kind: record.TimerStart, Ref: t.TaskID, Due: t.StartDue})
	}
}

// disarmStartTimer removes the schedule-to-start timer of a task being
// claimed. A timer this decision itself arms (a hand-off claims the task it
// makes ready) is never written, nor deleted.
func disarmStartTimer(c *change, t *record.Task) {
	if t.StartDue.IsZero() {
		return
	}
	if r := c.pendingReady(t); r != nil && r.startDue.Equal(t.StartDue) {
		r.startDue = time.Time{}
	} else {
		c.del(record.TimerKey(t.StartDue, t.RunID, string(record.TimerStart), t.TaskID))
	}
	t.StartDue = time.Time{}
}

// writesKey reports whether the decision has written key so far.
func writesKey(c *change, key []byte) bool {
	for _, op := range c.ops {
		if string(op.Key) == string(key) {
			return true
		}
	}
	return false
}

// startTimedOut fails the attempt of a task no worker claimed in time — an
// activity's under its retry policy and on_failure, a compensation hook's
// under the hook's policy. The task leaves its queue in the same batch. A
// paused run claims nothing, so its tasks' wait starts again instead.
func (c dueTimer) startTimedOut(task *record.Task) error {
	if task == nil || task.State != record.TaskReady || task.Kind == TaskVerify {
		return nil // claimed or retired meanwhile: nothing waits
	}
	st, a := decide.StepOfTask(c.state, task.ActionID, task.TaskID), c.run.Action(task.ActionID)
	if st == nil || a == nil {
		return nil // no longer its step's task
	}
	if f := task.Flow; f != nil && f.Err != "" {
		return c.flowKeyFailed(task, a, st, f.Err)
	}
	if c.state.Status == runstate.RunPaused || c.flowHeld { // held by flow control: the wait starts again
		armStartTimer(c.change, task, a, c.now)
		c.put(record.TaskKey(task.TaskID), task)
		return nil
	}
	c.del(task.ReadyKey())
	task.State, task.StartDue = record.TaskLost, time.Time{}
	c.put(record.TaskKey(task.TaskID), task)
	stepErr := &runstate.StepError{Class: definition.ErrorScheduleToStart, Message: fmt.Sprintf(
		"no worker claimed the %s task of %q on queue %q within its schedule-to-start timeout of %s",
		task.Kind, task.Activity, task.Queue, startTimeout(c.change, a))}
	if task.Kind == TaskCompensation {
		st.CompReadyKey = ""
		return c.rules().FinishCompensation(a, st, false, stepErr)
	}
	st.ReadyKey = ""
	return c.rules().FailAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptTimedOut, Err: stepErr})
}
