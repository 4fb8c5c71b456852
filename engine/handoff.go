package engine

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Hand-off: a decision that makes a task ready while a long poll for it
// waits in this process claims the task for that poll inside its own commit
// and hands it over, instead of writing a ready entry that the poll then
// claims in a second commit (Temporal's "sync match"). The claim is the one a
// poll makes (claimTask): the same task record, token, attempt and heartbeat
// timers and StepStarted event, so timeouts, retries, fencing, heartbeats
// and reports work unchanged. A task is claimed at most once: it never gets a
// ready entry, so no other poll, here or in another process, can see it, and
// the claim commits with the decision under the run's checkpoint version and
// fencing epoch, like any claim.
//
// A long poll is a handOffSlot, listed by its queue from the time it begins
// (oldest first) while it has room: its MaxTasks, less the tasks its own
// scan claims and those decisions reserved or handed to it. A decision
// reserves room in a slot before it commits, only in a poll whose call is
// still live and that asks for the task's kind and name; after the commit it
// delivers the task, and if the commit fails it gives the room back. A poll
// answers with what its scan claimed and what was handed to it, first
// waiting for the reservations still committing; a poll whose call has ended
// by then gives them back instead (undelivered.go). What remains is the
// window of a worker that crashes right after receiving its answer, and a
// commit whose outcome is unknown, whose claim the attempt timeout retries.
//
// It holds under cas-required too: only polls of this process are handed
// tasks, and the claim commits in the decision's batch, with its fencing.
//
// Eager dispatch is the same claim for the worker whose completion the
// decision applies, when its CompleteTask asked for next tasks
// (TaskReport.Next): its slot is served before any waiting poll, is never
// listed (only that decision reaches it), and its tasks are answered with the
// completion. A worker running a sequence so takes each next step with its
// report, with no poll in between.

// handOffSlot is one long poll, as decisions may hand it tasks: up to its
// MaxTasks in all, counting the tasks its own scan claims.
type handOffSlot struct {
	queue    string
	seq      uint64 // when its poll began: lower is served first
	ctx      context.Context
	workerID string
	names    map[string]TaskKind
	max      int     // the poll's MaxTasks
	held     int     // tasks the poll's own claims hold or may claim
	reserved int     // decisions committing a claim for it
	handed   []*Task // claims committed for it, not yet answered
	open     bool    // the poll takes hand-offs
	listed   bool    // in its queue's list
	// signal says a reservation ended (delivered or released).
	signal chan struct{}
}

// free answers how many more tasks the poll may be given.
func (s *handOffSlot) free() int { return s.max - s.held - s.reserved - len(s.handed) }

// handOffs lists the polls waiting in this process, by queue, oldest first.
type handOffs struct {
	mu      sync.Mutex
	seq     uint64
	waiting map[string][]*handOffSlot
}

func newHandOffs() *handOffs { return &handOffs{waiting: map[string][]*handOffSlot{}} }

// slotFor answers the slot of a poll that begins now; it takes no hand-off
// until opened.
func (h *handOffs) slotFor(ctx context.Context, p PollParams) *handOffSlot {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	return &handOffSlot{queue: queueID(p.TenantID, p.Queue), seq: h.seq, ctx: ctx, workerID: p.WorkerID,
		names: p.taskNames(), max: p.MaxTasks, signal: make(chan struct{}, 1)}
}

// open lets decisions hand the slot's poll tasks.
func (h *handOffs) open(s *handOffSlot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.open = true
	h.relist(s)
}

// relist keeps s listed exactly while it is open and has room; the caller
// holds mu.
func (h *handOffs) relist(s *handOffSlot) {
	want := s.open && s.free() > 0
	switch {
	case want && !s.listed:
		list := h.waiting[s.queue]
		i := len(list)
		for i > 0 && list[i-1].seq > s.seq {
			i--
		}
		h.waiting[s.queue] = slices.Insert(list, i, s)
	case !want && s.listed:
		list := slices.DeleteFunc(h.waiting[s.queue], func(o *handOffSlot) bool { return o == s })
		if len(list) == 0 {
			delete(h.waiting, s.queue)
		} else {
			h.waiting[s.queue] = list
		}
	}
	s.listed = want
}

// reserve takes, for task t of queue, room in the longest-waiting slot whose
// poll asks for t's kind and name and whose call is still live; nil when
// none.
func (h *handOffs) reserve(queue string, t *taskRecord) *handOffSlot {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.waiting[queue] {
		if s.ctx.Err() == nil && wants(s.names, t) {
			s.reserved++
			h.relist(s)
			return s
		}
	}
	return nil
}

// reserveEager takes room for task t of queue in s, the slot of a reporting
// worker that asked for its next tasks, if its call is live and it asks for
// t's kind and name; nil otherwise. The slot is never listed: only the
// decision applying that worker's report reaches it.
func (h *handOffs) reserveEager(s *handOffSlot, queue string, t *taskRecord) *handOffSlot {
	if s == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.queue != queue || s.ctx.Err() != nil || !wants(s.names, t) || s.free() <= 0 {
		return nil
	}
	s.reserved++
	return s
}

// deliver hands a committed claim to the slot's poll.
func (h *handOffs) deliver(s *handOffSlot, task *Task) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.reserved--
	s.handed = append(s.handed, task)
	notify(s)
}

// release gives back a reservation whose claim did not commit.
func (h *handOffs) release(s *handOffSlot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.reserved--
	h.relist(s)
	notify(s)
}

func notify(s *handOffSlot) {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// hold takes room for up to n claims of the poll's own; it answers how many.
func (h *handOffs) hold(s *handOffSlot, n int) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n = max(0, min(n, s.free()))
	s.held += n
	h.relist(s)
	return n
}

// unhold gives back room held for claims that were not made.
func (h *handOffs) unhold(s *handOffSlot, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.held -= n
	h.relist(s)
}

// wasHanded reports whether a task was handed to the poll.
func (h *handOffs) wasHanded(s *handOffSlot) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(s.handed) > 0
}

// close ends the slot's hand-offs and answers the tasks handed to it. A
// reservation still committing is waited for: it delivers or releases.
func (h *handOffs) close(s *handOffSlot) []*Task {
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

// awaitHandOff is one wait of a long poll whose slot is open: until a
// reservation for it ends, wake closes, the call ends or d passes.
func awaitHandOff(ctx context.Context, s *handOffSlot, wake <-chan struct{}, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-s.signal:
	case <-ctx.Done():
	case <-wake:
	case <-timer.C:
	}
}

// pendingHandOff is a claim a decision made for a waiting poll.
type pendingHandOff struct {
	slot *handOffSlot
	task *Task
}

// handOff claims, for polls waiting in this process, the tasks the
// decision made ready and that a poll could claim now; their ready entries
// are never written. It runs after the decision, on its final state.
func (c *change) handOff() {
	if c.e == nil || c.e.wake == nil {
		return
	}
	kept := c.readyPuts[:0]
	for _, r := range c.readyPuts {
		if !c.handOffOne(r) {
			kept = append(kept, r)
		}
	}
	c.readyPuts = kept
}

// handOffOne hands one new ready task to a waiting poll, if one wants it.
func (c *change) handOffOne(r readyEntry) bool {
	t := r.task
	if t == nil || t.State != taskReady || t.NotBefore.After(c.now) || !c.claimableNow(t) {
		return false
	}
	queue := queueID(t.TenantID, t.Queue)
	s := c.e.wake.handOffs.reserveEager(c.eager, queue, t)
	if s == nil {
		s = c.e.wake.handOffs.reserve(queue, t)
	}
	if s == nil {
		return false
	}
	c.handOffs = append(c.handOffs, pendingHandOff{slot: s}) // released if anything below fails
	actor := c.actor
	c.actor = "activity-worker:" + s.workerID // as the poll's own claim records it
	task, err := c.claimTask(t, s.workerID, s.names["v:"+t.Activity] == TaskVerify)
	c.actor = actor
	if err != nil || task == nil {
		panic(&Error{Code: CodeInternal, RunID: t.RunID, Message: "hand-off of a claimable task " + t.TaskID + " made no claim"})
	}
	c.handOffs[len(c.handOffs)-1].task = task
	c.dropWrites(r.key) // the entry was put and deleted within this decision
	c.wake = dropOne(c.wake, queue)
	return true
}

// claimableNow reports whether a poll's claim of t would claim it now
// (claimTask's own conditions), so that a hand-off never retires or skips a
// task.
func (c *change) claimableNow(t *taskRecord) bool {
	st := c.state.Step(t.ActionID)
	current := st != nil && (st.TaskID == t.TaskID || st.CompTaskID == t.TaskID)
	return current && !c.state.Status.Terminal() && c.state.Status != runstate.RunPaused
}

// dropWrites forgets every write of key made so far in the decision.
func (c *change) dropWrites(key []byte) {
	c.ops = slices.DeleteFunc(c.ops, func(op store.Op) bool { return string(op.Key) == string(key) })
}

// dropOne removes one occurrence of v from list.
func dropOne(list []string, v string) []string {
	if i := slices.Index(list, v); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// settleHandOffs delivers the decision's hand-offs once it committed, and
// otherwise puts their slots back.
func (c *change) settleHandOffs(committed bool) {
	for _, h := range c.handOffs {
		if committed && h.task != nil {
			c.e.wake.handOffs.deliver(h.slot, h.task)
		} else {
			c.e.wake.handOffs.release(h.slot)
		}
	}
	c.handOffs = nil
}
