package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/store"
)

// The engine decides and commits; package dispatch carries what a committed
// decision did to the callers waiting on it: long polls (and the tasks
// handed to them), event watches and AwaitRun, in this process and, through
// a Notifier, in the others. A decision collects its effects as a value
// (change.eff) and the commit pipeline settles them once the commit's
// outcome is known (decideOnce).
//
// Hand-off: a decision that makes a task ready while a long poll for it
// waits in this process claims the task for that poll inside its own commit
// and hands it over, instead of writing a ready entry that the poll then
// claims in a second commit. The claim is the one a poll makes (claimTask):
// the same task record, token, attempt and heartbeat timers and StepStarted
// event, so timeouts, retries, fencing, heartbeats and reports work
// unchanged. A task is claimed at most once: it never gets a ready entry, so
// no other poll, here or in another process, can see it, and the claim
// commits with the decision under the run's checkpoint version and fencing
// epoch, like any claim. It holds under cas-required too: only polls of this
// process are handed tasks. Eager dispatch is the same claim for the worker
// whose completion the decision applies, when its CompleteTask asked for
// next tasks (ReportParams.Next): its slot is served before any waiting poll.

// Notifier carries wake-ups to the other engines that share this engine's
// store (the cluster deployment; wake/rediswake is the Redis one). After each
// commit the engine hands it the keys the decision woke: the queues that
// gained ready tasks and the run whose log grew. The keys are opaque strings
// that only Engine.Wake interprets; they name queues and runs, never carry a
// payload. The receiving side hands them to its engine's Wake.
type Notifier interface {
	// Publish is called on the decision's path, after its commit: it must
	// return at once and never wait on the network, and it may drop keys
	// (wake-ups are hints). It must not keep keys after it returns.
	Publish(keys []string)
}

// Wakes is this engine's wake-ups: what its long polls and event watches
// wait on, and how another engine's published keys reach them.
type Wakes struct{ e *Engine }

// Wakes answers the engine's wake-ups.
func (e *Engine) Wakes() Wakes { return Wakes{e: e} }

// Wake wakes this engine's long polls and event watches waiting on keys, as
// another engine's Notifier published them. Keys that nothing here waits on,
// or that this engine never publishes, are ignored.
func (w Wakes) Wake(keys ...string) {
	w.e.flow.woke(keys...) // a slot may have been given back there
	w.e.dispatch.Wake(keys...)
}

// EventsAppended answers a channel closed the next time this engine appends
// events to the run's log, and a release to call once the caller no longer
// waits on it (a run no one waits on is forgotten). Take it before reading
// the log, then wait on it: an append in between closes it at once. Other
// engines' appends close it only through a Notifier, and not reliably, so
// watchers also look at the log on an interval.
func (w Wakes) EventsAppended(runID string) (<-chan struct{}, func()) {
	return w.e.dispatch.Waker().Wait(dispatch.RunKey(runID))
}

// readyEntry is a ready-queue entry the decision makes, held back from its
// writes until the decision is made (materializeReady): a hand-off claims
// the task instead, and a delete of the entry in the same decision (a claim,
// a retired task) makes it vanish, with no write and no delete. The entry's
// key is known absent from the store (makeReady), so the delete has nothing
// to remove.
type readyEntry struct {
	key  []byte
	task *record.Task
	// startDue is the schedule-to-start timer the entry arms, held back
	// with it (zero: none, or disarmed by a claim in this decision).
	startDue time.Time
	// newTask: the task record is new in this decision, and its write is
	// held back too: a hand-off's claim writes it once, claimed.
	newTask bool
	// gone: the decision deleted the entry (unready, del).
	gone bool
}

// handOff claims, for polls waiting in this process, the tasks the decision
// made ready and that a poll could claim now; their ready entries are never
// written. It runs after the decision, on its final state, and then writes
// the ready entries left (materializeReady).
func handOff(c *change) error {
	for i := range c.readyPuts {
		if c.readyPuts[i].gone {
			continue
		}
		if err := handOffOne(c, &c.readyPuts[i]); err != nil {
			return err
		}
	}
	materializeReady(c)
	return nil
}

// handOffOne hands one new ready task to a waiting poll, if one wants it.
func handOffOne(c *change, r *readyEntry) error {
	t := r.task
	if t.State != record.TaskReady || t.NotBefore.After(c.now) || t.Flow != nil || t.FairKey != "" || !decide.Claimable(c.state, t.ActionID, t.TaskID) {
		return nil
	}
	s := c.e.dispatch.Reserve(c.eager, dispatch.QueueKey(t.TenantID, t.Queue), wantKey(t))
	if s == nil {
		return nil
	}
	c.eff.HandOffs = append(c.eff.HandOffs, dispatch.HandOff[*Task]{Slot: s}) // released if anything below fails
	if s == c.eager && c.completed != nil {
		t.EagerOf = c.completed.ActionID // its report takes its token out of that step's (dropEagerToken)
	}
	task, err := claimTask(c, t, s.WorkerID, s.Wants(verifyKey(t.Activity)), r)
	if err != nil || task == nil || !r.gone {
		return fault.Internal(t.RunID, "hand-off of a claimable task "+t.TaskID+" made no claim")
	}
	c.eff.HandOffs[len(c.eff.HandOffs)-1].Task = task
	return nil
}

// materializeReady writes what the decision's ready entries hold back: a
// new task's record unless the decision wrote it since (a claim, a
// retirement), and each entry not deleted meanwhile, with its
// schedule-to-start timer. The entries deleted leave readyPuts: their
// queues gain nothing.
func materializeReady(c *change) {
	kept := c.readyPuts[:0]
	for _, r := range c.readyPuts {
		t := r.task
		if r.newTask {
			if key := record.TaskKey(t.TaskID); !writesKey(c, key) { // a new task's key: any write of it came later
				c.put(key, t)
			}
		}
		if r.gone {
			continue
		}
		c.ops = append(c.ops, store.Put(r.key, runcodec.AppendReady(nil, t.TaskID)))
		if !r.startDue.IsZero() {
			c.setTimer(record.Timer{RunID: t.RunID, Kind: record.TimerStart, Ref: t.TaskID, Due: r.startDue})
		}
		kept = append(kept, r)
	}
	c.readyPuts = kept
}

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
// A decision whose commit answers an unknown outcome delivers none of its
// hand-offs, though their claims may have committed: it gives those back
// the same way (decideOnce), and a claim that did not commit is left as it
// is.
//
// What remains is the window after the answer leaves the engine and before
// it reaches the worker: that of a worker that crashes right after receiving
// a task, which its attempt timeout covers.

// giveBackTimeout bounds giving back the tasks of one ended call.
const giveBackTimeout = 10 * time.Second

// giveBack gives tasks claimed for a call that ended back to their queues,
// on a context of its own: the call's has ended.
func giveBack(e *Engine, tasks []*Task) {
	ctx, cancel := context.WithTimeout(context.Background(), giveBackTimeout)
	defer cancel()
	for _, t := range tasks {
		if err := giveBackOne(ctx, e, t); err != nil {
			e.log.Warn("an undelivered task could not be given back; its attempt timeout will retry it",
				slog.String("task_id", t.TaskID), slog.String("run_id", t.RunID), slog.String("error", err.Error()))
		}
	}
}

// giveBackOne makes one undelivered task ready again if it is still claimed
// with the token its call was to answer.
func giveBackOne(ctx context.Context, e *Engine, task *Task) error {
	var (
		t       *record.Task
		version uint64
	)
	_, err := commitDecision(ctx, e, decision{
		actor: "weft:undelivered",
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			var err error
			t, version, err = e.records.Task(ctx, task.TaskID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return "", true, nil
			case err != nil:
				return "", false, err
			case t.State != record.TaskClaimed || t.Token != task.Token:
				return "", true, nil // reported, timed out or retired meanwhile
			}
			return t.RunID, false, nil
		},
		decide: func(ch *change) error {
			t := taskIn(ch, t, version)
			if t == nil || t.State != record.TaskClaimed || t.Token != task.Token || claimEnded(ch.state, t) != "" {
				return nil // reported, timed out or retired meanwhile
			}
			ch.require(cache.TaskUnchanged(t.TaskID, version))
			unclaim(ch, t.Fresh())
			return nil
		},
		// A heartbeat or a report changed the task: look again.
		lostRace:  func(err error) bool { return conflictOn(err, record.TaskKey(task.TaskID)) },
		contended: func() error { return fault.Contended(task.RunID, task.TaskID) },
	})
	return err
}

// unclaim makes a claimed task ready again under the same engine attempt,
// with its timers gone and its token revoked, if it is still its step's.
func unclaim(c *change, t *record.Task) {
	st := decide.StepOfTask(c.state, t.ActionID, t.TaskID)
	if st == nil || c.state.Status.Terminal() {
		return
	}
	clearDeadline(c, t)
	if !t.HeartbeatDue.IsZero() {
		c.clearTimer(t.HeartbeatDue, record.TimerHeartbeat, t.TaskID)
	}
	releaseFlowSlot(c, st, t.Queue)
	dropEagerToken(c, t)
	dropCheckpointClaim(c, t) // its record says it is ready from now on
	t.State, t.Token, t.WorkerID, t.EagerOf = record.TaskReady, "", "", ""
	t.ClaimedAt, t.HeartbeatAt, t.Deadline, t.HeartbeatDue = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	t.DeadlineIndexed = false
	scheduleStart(c, t, c.run.Action(t.ActionID), c.now) // waiting for a worker again
	c.put(record.TaskKey(t.TaskID), t)
	c.rules().Unclaimed(decide.TaskKind(t.Kind), st, string(c.makeReady(t, false)))
}
