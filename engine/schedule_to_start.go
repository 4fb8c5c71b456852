package engine

import (
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/runstate"
)

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
func (c *recorder) startTimeout(a *definition.Action) time.Duration {
	if a != nil && a.ScheduleToStartTimeout > 0 {
		return a.ScheduleToStartTimeout.D()
	}
	return c.e.cfg.ScheduleToStartTimeout
}

// armStartTimer sets the schedule-to-start timer of an activity or
// compensation task that is ready from from on, and records its due time on the task (which the
// caller then writes).
func (c *recorder) armStartTimer(t *taskRecord, a *definition.Action, from time.Time) {
	t.StartDue = time.Time{}
	d := c.startTimeout(a)
	if t.Kind == TaskVerify || d <= 0 {
		return
	}
	t.StartDue = from.Add(d)
	c.setTimer(timerRecord{RunID: t.RunID, Kind: timerStart, Ref: t.TaskID, Due: t.StartDue})
}

// disarmStartTimer removes the schedule-to-start timer of a task being
// claimed. A timer this decision itself set (a hand-off claims the task it
// makes ready) is dropped unwritten rather than written and deleted.
func (c *recorder) disarmStartTimer(t *taskRecord) {
	if t.StartDue.IsZero() {
		return
	}
	key := timerKey(t.StartDue, t.RunID, string(timerStart), t.TaskID)
	if c.writes(key) {
		c.dropWrites(key)
	} else {
		c.del(key)
	}
	t.StartDue = time.Time{}
}

// writes reports whether the decision has written key so far.
func (c *recorder) writes(key []byte) bool {
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
func (c dueTimer) startTimedOut(task *taskRecord) error {
	if task == nil || task.State != taskReady || task.Kind == TaskVerify {
		return nil // claimed or retired meanwhile: nothing waits
	}
	st, a := decide.StepOfTask(c.state, task.ActionID, task.TaskID), c.run.action(task.ActionID)
	if st == nil || a == nil {
		return nil // no longer its step's task
	}
	if c.state.Status == runstate.RunPaused {
		c.armStartTimer(task, a, c.now)
		c.put(taskKey(task.TaskID), task)
		return nil
	}
	c.del([]byte(task.readyKey()))
	task.State, task.StartDue = taskLost, time.Time{}
	c.put(taskKey(task.TaskID), task)
	stepErr := &runstate.StepError{Class: definition.ErrorScheduleToStart, Message: fmt.Sprintf(
		"no worker claimed the %s task of %q on queue %q within its schedule-to-start timeout of %s",
		task.Kind, task.Activity, task.Queue, c.startTimeout(a))}
	if task.Kind == TaskCompensation {
		st.CompReadyKey = ""
		return c.rules().FinishCompensation(a, st, false, stepErr)
	}
	st.ReadyKey = ""
	return c.rules().FailAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptTimedOut, Err: stepErr})
}
