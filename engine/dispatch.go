package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
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

// Wake wakes this engine's long polls and event watches waiting on keys, as
// another engine's Notifier published them. Keys that nothing here waits on,
// or that this engine never publishes, are ignored.
func (e *Engine) Wake(keys ...string) { e.dispatch.Wake(keys...) }

// EventsAppended answers a channel closed the next time this engine appends
// events to the run's log, and a release to call once the caller no longer
// waits on it (a run no one waits on is forgotten). Take it before reading
// the log, then wait on it: an append in between closes it at once. Other
// engines' appends close it only through a Notifier, and not reliably, so
// watchers also look at the log on an interval.
func (e *Engine) EventsAppended(runID string) (<-chan struct{}, func()) {
	return e.dispatch.Waker().Wait(dispatch.RunKey(runID))
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

// makeReady makes t ready in its queue: its ready entry, and the
// schedule-to-start timer its StartDue names (startDue), are written when
// the decision is made unless a hand-off claims t first (handOff). Its
// queue's polls are woken after the commit. t must have no ready entry in
// the store: a task new in this decision, or one its claim took out of its
// queue (unclaim). newTask says t is new, its record not yet written.
func (c *recorder) makeReady(t *record.Task, newTask bool) []byte {
	key := t.ReadyKey()
	c.readyPuts = append(c.readyPuts, readyEntry{key: key, task: t, startDue: t.StartDue, newTask: newTask})
	return key
}

// pendingReady answers the ready entry this decision made for t (deleted
// since or not), or nil.
func (c *recorder) pendingReady(t *record.Task) *readyEntry {
	for i := range c.readyPuts {
		if r := &c.readyPuts[i]; r.task == t {
			return r
		}
	}
	return nil
}

// unready removes t's ready entry: one this decision made vanishes, any
// other is deleted.
func (c *recorder) unready(t *record.Task) {
	if r := c.pendingReady(t); r != nil && !r.gone {
		r.gone = true
		return
	}
	c.del(t.ReadyKey())
}

// dropReady makes the held-back ready entry at key vanish; it reports
// whether there was one.
func (c *recorder) dropReady(key []byte) bool {
	for i := range c.readyPuts {
		if r := &c.readyPuts[i]; !r.gone && string(r.key) == string(key) {
			r.gone = true
			return true
		}
	}
	return false
}

// handOff claims, for polls waiting in this process, the tasks the decision
// made ready and that a poll could claim now; their ready entries are never
// written. It runs after the decision, on its final state, and then writes
// the ready entries left (materializeReady).
func (c *change) handOff() error {
	for i := range c.readyPuts {
		if c.readyPuts[i].gone {
			continue
		}
		if err := c.handOffOne(&c.readyPuts[i]); err != nil {
			return err
		}
	}
	c.materializeReady()
	return nil
}

// handOffOne hands one new ready task to a waiting poll, if one wants it.
func (c *change) handOffOne(r *readyEntry) error {
	t := r.task
	if t.State != record.TaskReady || t.NotBefore.After(c.now) || !decide.Claimable(c.state, t.ActionID, t.TaskID) {
		return nil
	}
	s := c.e.dispatch.Reserve(c.eager, dispatch.QueueKey(t.TenantID, t.Queue), wantKey(t))
	if s == nil {
		return nil
	}
	c.eff.HandOffs = append(c.eff.HandOffs, dispatch.HandOff[*Task]{Slot: s}) // released if anything below fails
	task, err := c.claimTask(t, s.WorkerID, s.Wants(verifyKey(t.Activity)))
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
func (c *recorder) materializeReady() {
	kept := c.readyPuts[:0]
	for _, r := range c.readyPuts {
		t := r.task
		if r.newTask {
			if key := record.TaskKey(t.TaskID); !c.writes(key) { // a new task's key: any write of it came later
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

// effects answers what the decision hands dispatch once its commit settles.
func (c *recorder) effects() *dispatch.Effects[*Task] {
	c.eff.Ready, c.eff.Queues = c.eff.Ready[:0], c.eff.Queues[:0]
	for _, r := range c.readyPuts {
		if r.gone {
			continue
		}
		t := r.task
		c.eff.Ready = append(c.eff.Ready, dispatch.Ready{Prefix: record.QueuePrefix(t.TenantID, t.Queue), Key: r.key})
		c.eff.Queues = append(c.eff.Queues, dispatch.QueueKey(t.TenantID, t.Queue))
	}
	if len(c.events) > 0 && !c.newRun { // a run being created has no watchers yet
		c.eff.Run = c.run.RunID
		c.eff.Ended = c.state.Status.Terminal()
	}
	return &c.eff
}

// AwaitParams asks for a run's snapshot once it ends.
type AwaitParams struct {
	TenantID string
	RunID    string
	// Wait is the longest to wait for the run to end; 0 answers at once.
	Wait time.Duration
	// Seen is the checkpoint version of the run the caller already holds
	// from this engine (SubmitResult.Version), 0 none: the first look then
	// takes the engine's cached checkpoint when it is that version or newer
	// instead of reading the store, unless it has nothing to wait for.
	Seen uint64
}

// AwaitRun answers the run's snapshot as soon as it is terminal, or once
// p.Wait has passed (then as it is; 0 answers at once). It looks at the run's
// checkpoint when a commit of this engine ends the run (dispatch.RunEndKey:
// not at each step before), when another engine's append to the run's log
// arrives through a Notifier (not reliably), and at least every
// PollInterval, and builds a snapshot only to answer, where watching the
// run's events reads, converts and sends each one. The first look reads the
// store, unless the caller holds a version this engine committed (p.Seen,
// as a submission with start does) and the cache holds it or a newer one
// (cache.Records.LookSince); a later one takes the engine's cached checkpoint
// when a commit of this engine advanced it since the look before
// (cache.Records.LookAgain), and reads the store otherwise. So a wait that
// ends at the deadline, or on the interval, with the cache not advanced
// answers the store's state, and only committed states ever answer: the
// cache holds a checkpoint only once its commit succeeded. It answers the context's error when ctx
// ends first.
func (e *Engine) AwaitRun(ctx context.Context, p AwaitParams) (*runstate.Snapshot, error) {
	runID := p.RunID
	rec, err := e.records.RunFor(ctx, p.TenantID, runID)
	if err != nil {
		return nil, err
	}
	deadline := e.clock.Now().Add(p.Wait)
	var (
		state *runstate.State
		seen  uint64 // the version of the last look; 0: none yet
	)
	err = e.dispatch.Waker().Await(ctx, dispatch.RunEndKey(runID), func() (time.Duration, error) {
		look := e.records.LookAgain
		if seen == 0 && p.Seen != 0 && deadline.After(e.clock.Now()) {
			seen, look = p.Seen, e.records.LookSince // the first look, with a version in hand
		}
		s, version, err := look(ctx, runID, seen)
		if err != nil {
			return 0, err
		}
		state, seen = s, version
		remaining := deadline.Sub(e.clock.Now())
		if s.Status.Terminal() || remaining <= 0 {
			return 0, nil
		}
		return min(remaining, e.cfg.PollInterval), nil
	})
	if err != nil {
		return nil, err
	}
	return snapshotOf(rec, state), nil
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
	_, err := e.commitDecision(ctx, decision{
		actor: "weft:undelivered",
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			var err error
			t, version, err = e.records.LoadTask(ctx, task.TaskID)
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
			ch.require(store.IfVersion(record.TaskKey(t.TaskID), version))
			ch.unclaim(t.Fresh())
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
func (c *change) unclaim(t *record.Task) {
	st := decide.StepOfTask(c.state, t.ActionID, t.TaskID)
	if st == nil || c.state.Status.Terminal() {
		return
	}
	c.clearTimer(t.Deadline, record.TimerAttempt, t.TaskID)
	if !t.HeartbeatDue.IsZero() {
		c.clearTimer(t.HeartbeatDue, record.TimerHeartbeat, t.TaskID)
	}
	t.State, t.Token, t.WorkerID = record.TaskReady, "", ""
	t.ClaimedAt, t.HeartbeatAt, t.Deadline, t.HeartbeatDue = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	c.scheduleStart(t, c.run.Action(t.ActionID), c.now) // waiting for a worker again
	c.put(record.TaskKey(t.TaskID), t)
	c.rules().Unclaimed(decide.TaskKind(t.Kind), st, string(c.makeReady(t, false)))
}
