package dispatch

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Hand-off: a decision that makes a task ready while a long poll for it
// waits in this process claims the task for that poll inside its own commit
// and hands it over, instead of writing a ready entry that the poll then
// claims in a second commit (Temporal's "sync match"). The claim itself is
// the engine's: the same claim a poll makes, committed with the decision
// under the run's checkpoint version and fencing epoch. Dispatch only keeps
// the polls and their room, and carries a committed claim to its poll.
//
// A long poll is a Slot, listed by its queue from the time it begins (oldest
// first) while it has room: its MaxTasks, less the tasks its own scan claims
// and those decisions reserved or handed to it. A decision reserves room in
// a slot before it commits, only in a poll whose call is still live and that
// asks for the task; after the commit it delivers the task, and if the
// commit fails it gives the room back (Dispatcher.Settle). A poll answers
// with what its scan claimed and what was handed to it, first waiting for
// the reservations still committing; a poll whose call has ended by then
// gives them back instead (Dispatcher.Answer).
//
// Eager dispatch is the same claim for the worker whose completion the
// decision applies, when its report asked for next tasks: its slot is
// served before any waiting poll, is never listed (only that decision
// reaches it), and its tasks are answered with the completion.

// Slot is one long poll, or one report's request for next tasks, as
// decisions may hand it tasks of type T: up to its MaxTasks in all, counting
// the tasks its own scan claims.
type Slot[T any] struct {
	// Queue is the poll's queue (QueueKey).
	Queue string
	// WorkerID is the polling worker.
	WorkerID string
	seq      uint64 // when its poll began: lower is served first
	ctx      context.Context
	names    map[string]bool
	max      int // the poll's MaxTasks
	held     int // tasks the poll's own claims hold or may claim
	reserved int // decisions committing a claim for it
	handed   []T // claims committed for it, not yet answered
	open     bool
	listed   bool
	// signal says a reservation ended (delivered or released).
	signal chan struct{}
}

// Wants reports whether the poll asks for tasks of the kind and name key
// names (the engine's own key, e.g. its kind and activity).
func (s *Slot[T]) Wants(key string) bool { return s.names[key] }

// Names answers the kinds and names of task the poll asks for. The map is
// shared: callers must not change it.
func (s *Slot[T]) Names() map[string]bool { return s.names }

// Context answers the poll's call context.
func (s *Slot[T]) Context() context.Context { return s.ctx }

// free answers how many more tasks the poll may be given.
func (s *Slot[T]) free() int { return s.max - s.held - s.reserved - len(s.handed) }

func (s *Slot[T]) notify() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// handOffs lists the polls waiting in this process, by queue, oldest first.
type handOffs[T any] struct {
	mu      sync.Mutex
	seq     uint64
	waiting map[string][]*Slot[T]
}

// SlotFor answers the slot of a poll that begins now, asking for up to max
// tasks of the kinds and names in names; it takes no hand-off until opened.
func (d *Dispatcher[T]) SlotFor(ctx context.Context, queue, workerID string, names map[string]bool, max int) *Slot[T] {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	return &Slot[T]{Queue: queue, WorkerID: workerID, seq: h.seq, ctx: ctx, names: names, max: max,
		signal: make(chan struct{}, 1)}
}

// Open lets decisions hand the slot's poll tasks.
func (d *Dispatcher[T]) Open(s *Slot[T]) {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	s.open = true
	h.relist(s)
}

// relist keeps s listed exactly while it is open and has room; the caller
// holds mu.
func (h *handOffs[T]) relist(s *Slot[T]) {
	want := s.open && s.free() > 0
	switch {
	case want && !s.listed:
		if h.waiting == nil {
			h.waiting = map[string][]*Slot[T]{}
		}
		list := h.waiting[s.Queue]
		i := len(list)
		for i > 0 && list[i-1].seq > s.seq {
			i--
		}
		h.waiting[s.Queue] = slices.Insert(list, i, s)
	case !want && s.listed:
		list := slices.DeleteFunc(h.waiting[s.Queue], func(o *Slot[T]) bool { return o == s })
		if len(list) == 0 {
			delete(h.waiting, s.Queue)
		} else {
			h.waiting[s.Queue] = list
		}
	}
	s.listed = want
}

// Reserve takes, for a task of queue that a poll asking for key may take,
// room in eager when it is given and can take it, else in the
// longest-waiting slot whose call is still live; nil when none. The
// reservation ends with the decision's Settle: a HandOff of the claim, or
// Release.
func (d *Dispatcher[T]) Reserve(eager *Slot[T], queue, key string) *Slot[T] {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := eager; s != nil && s.Queue == queue && s.ctx.Err() == nil && s.names[key] && s.free() > 0 {
		s.reserved++ // never listed: only the decision applying its report reaches it
		return s
	}
	for _, s := range h.waiting[queue] {
		if s.ctx.Err() == nil && s.names[key] {
			s.reserved++
			h.relist(s)
			return s
		}
	}
	return nil
}

// deliver hands a committed claim to the slot's poll.
func (h *handOffs[T]) deliver(s *Slot[T], task T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.reserved--
	s.handed = append(s.handed, task)
	s.notify()
}

// release gives back a reservation whose claim did not commit.
func (h *handOffs[T]) release(s *Slot[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.reserved--
	h.relist(s)
	s.notify()
}

// Hold takes room for up to n claims of the poll's own; it answers how many.
func (d *Dispatcher[T]) Hold(s *Slot[T], n int) int {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	n = max(0, min(n, s.free()))
	s.held += n
	h.relist(s)
	return n
}

// Unhold gives back room held for claims that were not made.
func (d *Dispatcher[T]) Unhold(s *Slot[T], n int) {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	s.held -= n
	h.relist(s)
}

// wasHanded reports whether a task was handed to the poll.
func (h *handOffs[T]) wasHanded(s *Slot[T]) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(s.handed) > 0
}

// Close ends the slot's hand-offs and answers the tasks handed to it. A
// reservation still committing is waited for: it delivers or releases.
func (d *Dispatcher[T]) Close(s *Slot[T]) []T {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	s.open = false
	h.relist(s)
	for s.reserved > 0 {
		h.mu.Unlock()
		<-s.signal
		h.mu.Lock()
	}
	out := s.handed
	s.handed = nil
	return out
}

// WaitingPolls counts the polls listed as waiting for a hand-off.
func (d *Dispatcher[T]) WaitingPolls() int {
	h := &d.handOffs
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, list := range h.waiting {
		n += len(list)
	}
	return n
}

// awaitHandOff is one wait of a long poll whose slot is open: until a
// reservation for it ends, wake closes, the call ends or d passes.
func awaitHandOff[T any](ctx context.Context, s *Slot[T], wake <-chan struct{}, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-s.signal:
	case <-ctx.Done():
	case <-wake:
	case <-timer.C:
	}
}
