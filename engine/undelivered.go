package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/store"
)

// Undelivered claims. A call answers the tasks claimed for it — a poll's own
// scan or a hand-off to a waiting poll, or eager dispatch to a completion
// that asked for next tasks — only while the call is live. One that has
// ended cannot receive its answer (the worker stopped, its stream was reset,
// its deadline passed), and its tasks would stay claimed by nobody until
// their attempt timeouts, minutes later: a stopping worker's waiting poll is
// the oldest, so the first a hand-off chooses. So the call gives them back
// and answers its context's error, never the tasks: the worker cannot have
// received them, and giving them back can never run one twice.
//
// Giving a task back is a decision under the run's checkpoint version and
// fencing, like any other. If the task is still claimed with the token the
// call was to answer, its attempt and heartbeat timers go, its token is
// revoked, and it is ready again in its queue under the same engine attempt
// (no retry is spent: no worker ran it), where the decision's own hand-off
// may give it to a waiting poll at once. The step stays RUNNING with the
// StepStarted its first claim recorded; a later claim records no other
// (startAttempt). A task reported, timed out or retired meanwhile is left as
// it is. If giving back fails, the task keeps its claim and its attempt
// timeout retries it, as before.
//
// What remains is the window after the answer leaves the engine and before
// it reaches the worker: that of a worker that crashes right after receiving
// a task, which its attempt timeout covers.

// giveBackTimeout bounds giving back the tasks of one ended call.
const giveBackTimeout = 10 * time.Second

// undelivered answers a call that ended before its tasks were answered: it
// gives them back and answers the call's error.
func (e *Engine) undelivered(ctx context.Context, tasks []*Task) error {
	e.giveBack(tasks)
	return ctx.Err()
}

// giveBack gives tasks claimed for a call that ended back to their queues,
// on a context of its own: the call's has ended.
func (e *Engine) giveBack(tasks []*Task) {
	ctx, cancel := context.WithTimeout(context.Background(), giveBackTimeout)
	defer cancel()
	for _, t := range tasks {
		if err := e.giveBackOne(ctx, t); err != nil {
			e.log.Warn("an undelivered task could not be given back; its attempt timeout will retry it",
				slog.String("task_id", t.TaskID), slog.String("run_id", t.RunID), slog.String("error", err.Error()))
		}
	}
}

// giveBackOne makes one undelivered task ready again if it is still claimed
// with the token its call was to answer.
func (e *Engine) giveBackOne(ctx context.Context, task *Task) error {
	for range maxMutateRetries {
		t, version, err := e.loadTask(ctx, task.TaskID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if t.State != taskClaimed || t.Token != task.Token {
			return nil // reported, timed out or retired meanwhile
		}
		_, err = e.mutate(ctx, t.RunID, "weft:undelivered", func(ch *change) error {
			ch.require(store.IfVersion(taskKey(t.TaskID), version))
			ch.unclaim(t.fresh())
			return nil
		})
		if conflictOn(err, taskKey(t.TaskID)) {
			continue // a heartbeat or a report changed the task: look again
		}
		return err
	}
	return &Error{Code: CodeUnavailable, RunID: task.RunID, Message: "task " + task.TaskID + " is contended"}
}

// unclaim makes a claimed task ready again under the same engine attempt,
// with its timers gone and its token revoked, if it is still its step's.
func (c *change) unclaim(t *taskRecord) {
	st := c.state.Step(t.ActionID)
	if st == nil || (st.TaskID != t.TaskID && st.CompTaskID != t.TaskID) || c.state.Status.Terminal() {
		return
	}
	c.clearTimer(t.Deadline, timerAttempt, t.TaskID)
	if !t.HeartbeatDue.IsZero() {
		c.clearTimer(t.HeartbeatDue, timerHeartbeat, t.TaskID)
	}
	t.State, t.Token, t.WorkerID = taskReady, "", ""
	t.ClaimedAt, t.HeartbeatAt, t.Deadline, t.HeartbeatDue = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	c.put(taskKey(t.TaskID), t)
	key := t.readyKey()
	c.put([]byte(key), t.TaskID)
	c.readyPuts = append(c.readyPuts, readyEntry{prefix: queuePrefix(t.TenantID, t.Queue), key: []byte(key), task: t})
	c.wake = append(c.wake, queueID(t.TenantID, t.Queue))
	if t.Kind == TaskCompensation {
		st.CompReadyKey = key
	} else {
		st.ReadyKey = key
	}
	c.dirty = true
	c.checkDrained() // a draining pause waited for this task, which no worker runs
}
