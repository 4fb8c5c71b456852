package dispatch

import (
	"context"
	"log/slog"
	"strings"
	"time"
)

// Publisher carries wake-ups to the other processes that share the store.
// Publish is called on a decision's path, after its commit: it must return
// at once and never wait on the network, may drop keys (wake-ups are hints),
// and must not keep keys after it returns.
type Publisher interface {
	Publish(keys []string)
}

// Config configures a Dispatcher.
type Config[T any] struct {
	// Now is the clock polls measure their wait by.
	Now func() time.Time
	// Interval is how often a waiting poll looks at the store again without
	// a wake-up.
	Interval time.Duration
	// Publisher, when set, receives the keys each committed decision woke.
	Publisher Publisher
	// Hints keeps queue hints (only sound when this process sees every
	// insert into its queues: single-owner ownership).
	Hints bool
	// GiveBack gives back tasks claimed for a call that ended before they
	// could be answered (the engine's decision; it must not block long).
	GiveBack func(tasks []T)
	// Log receives a line, without payloads, when a poll answers the tasks
	// it claimed despite a failed claim.
	Log *slog.Logger
}

// Dispatcher carries committed decisions to the callers waiting on them in
// this process (and, through a Publisher, in the others). T is the engine's
// claimed task. It is safe for concurrent use.
type Dispatcher[T any] struct {
	cfg      Config[T]
	waker    Waker
	handOffs handOffs[T]
	hints    *QueueHints
	// Claiming are the tasks this process's polls are claiming now.
	Claiming Claiming
	// Pollers are the workers polling this process, and the tasks handed to
	// them that no report has answered here yet.
	Pollers Pollers
}

// New answers a dispatcher.
func New[T any](cfg Config[T]) *Dispatcher[T] {
	d := &Dispatcher[T]{cfg: cfg}
	if cfg.Hints {
		d.hints = NewQueueHints()
	}
	if d.cfg.Log == nil {
		d.cfg.Log = slog.New(slog.DiscardHandler)
	}
	return d
}

// Hints answers the queue hints (nil when none are kept).
func (d *Dispatcher[T]) Hints() *QueueHints { return d.hints }

// Waker answers the waker of this process's polls and watches.
func (d *Dispatcher[T]) Waker() *Waker { return &d.waker }

// Ready is a ready-queue entry a decision wrote: its queue's key prefix and
// its key.
type Ready struct {
	Prefix, Key []byte
}

// HandOff is a claim a decision made for a poll whose room it reserved.
type HandOff[T any] struct {
	Slot *Slot[T]
	Task T
}

// Effects are what one decision hands dispatch once its commit is settled.
type Effects[T any] struct {
	// Ready are the ready-queue entries it wrote.
	Ready []Ready
	// HandOffs are the claims it made for waiting polls.
	HandOffs []HandOff[T]
	// Queues are the queues (QueueKey) that gained ready tasks.
	Queues []string
	// Run names the run whose log grew ("" when it did not).
	Run string
	// Ended says the commit left Run terminal: those who await its end
	// (RunEndKey) are woken, not at every append before.
	Ended bool
}

// Settle applies a decision's effects once its commit is settled: the queue
// hints learn of its ready entries (even when the commit failed: its
// outcome may be unknown); if it committed, its hand-offs are delivered and
// the polls and watches it woke, here and through the Publisher, are woken;
// if not, the room its hand-offs reserved is given back. Settling twice
// changes nothing.
func (d *Dispatcher[T]) Settle(eff *Effects[T], committed bool) {
	for _, r := range eff.Ready {
		d.hints.Lower(r.Prefix, r.Key)
	}
	for _, h := range eff.HandOffs {
		if committed {
			d.handOffs.deliver(h.Slot, h.Task)
		} else {
			d.handOffs.release(h.Slot)
		}
	}
	if committed {
		d.wake(eff)
	}
	*eff = Effects[T]{}
}

// wake wakes the polls of queues that gained tasks, the watchers of a run
// whose log grew and, once it ended, those who await its end; it publishes
// the queues and the run's log to the other processes (whose Wake wakes the
// run's end as well).
func (d *Dispatcher[T]) wake(eff *Effects[T]) {
	for _, q := range eff.Queues {
		d.waker.Notify(q)
	}
	var runKey string
	if eff.Run != "" {
		runKey = RunKey(eff.Run)
		d.waker.Notify(runKey)
		if eff.Ended {
			d.waker.Notify(RunEndKey(eff.Run))
		}
	}
	if d.cfg.Publisher == nil || (len(eff.Queues) == 0 && eff.Run == "") {
		return
	}
	keys := make([]string, 0, len(eff.Queues)+1)
	keys = append(keys, eff.Queues...)
	if runKey != "" {
		keys = append(keys, runKey)
	}
	d.cfg.Publisher.Publish(keys)
}

// Wake wakes this process's polls and watches waiting on keys, as another
// process published them. A run's log growing there may have ended the run,
// so it wakes those who await the run's end too.
func (d *Dispatcher[T]) Wake(keys ...string) {
	for _, k := range keys {
		d.waker.Notify(k)
		if runID, ok := strings.CutPrefix(k, runKeyPrefix); ok {
			d.waker.Notify(RunEndKey(runID))
		}
	}
}

// Poll runs one long poll in slot s: claim claims what the queue holds now;
// while it finds nothing and wait has not passed, the poll waits for the
// queue's wake-up, a hand-off or the interval, and claims again. It answers
// as Answer does.
func (d *Dispatcher[T]) Poll(ctx context.Context, s *Slot[T], wait time.Duration, claim func() ([]T, error)) ([]T, error) {
	if wait > 0 {
		d.Open(s) // from the start, so that a hand-off can reach the poll even while it scans
	}
	deadline := d.cfg.Now().Add(wait)
	for {
		tasks, done, err := d.pollOnce(ctx, s, deadline, claim)
		if done {
			return d.Answer(s, tasks, err)
		}
	}
}

// pollOnce claims what the queue holds; when there is nothing and time is
// left, it waits for the queue's wake-up, a hand-off or the interval. It
// answers whether the poll is done.
func (d *Dispatcher[T]) pollOnce(ctx context.Context, s *Slot[T], deadline time.Time, claim func() ([]T, error)) ([]T, bool, error) {
	wake, release := d.waker.Wait(s.Queue)
	defer release()
	tasks, err := claim()
	if err != nil || len(tasks) > 0 || d.handOffs.wasHanded(s) {
		return tasks, true, err
	}
	remaining := deadline.Sub(d.cfg.Now())
	if remaining <= 0 || ctx.Err() != nil {
		return nil, true, nil
	}
	awaitHandOff(ctx, s, wake, min(remaining, d.cfg.Interval))
	return nil, d.handOffs.wasHanded(s) || ctx.Err() != nil, nil
}

// Answer ends a poll's hand-offs and answers the tasks it claimed plus those
// handed to it. A poll whose call has ended gives them back instead
// (Undelivered). A failed claim does not hide the claims that committed:
// what is claimed is answered.
func (d *Dispatcher[T]) Answer(s *Slot[T], tasks []T, err error) ([]T, error) {
	tasks = append(tasks, d.Close(s)...)
	if len(tasks) > 0 && s.ctx.Err() != nil {
		return nil, d.Undelivered(s, tasks)
	}
	if err != nil && len(tasks) > 0 { // what is claimed is answered; its claims are durable
		d.cfg.Log.Warn("a claim failed; answering the tasks claimed", slog.String("error", err.Error()))
		err = nil
	}
	return tasks, err
}

// Undelivered answers a call that ended before its tasks were answered: it
// gives them back (Config.GiveBack) and answers the call's error.
func (d *Dispatcher[T]) Undelivered(s *Slot[T], tasks []T) error {
	d.cfg.GiveBack(tasks)
	return s.ctx.Err()
}
