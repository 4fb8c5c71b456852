package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// change collects what one decision about one run produces: the new
// checkpoint, the events describing it, and every other write. It commits as
// one conditional batch guarded by the checkpoint's version, so a decision is
// applied whole or not at all, and never over a state it did not read.
type change struct {
	e     *Engine
	ctx   context.Context
	err   error
	run   *runRecord
	state *runstate.State
	now   time.Time
	actor string

	events []runstate.Event
	conds  []store.Condition
	ops    []store.Op
	dirty  bool
	wake   []string
	alerts []pendingAlert
	// readyPuts are the ready-queue entries the decision writes (queueHints,
	// hand-off).
	readyPuts []readyEntry
	// handOffs are the claims the decision made for waiting polls.
	handOffs []pendingHandOff
	// eager is the slot of the worker whose report the decision applies,
	// when it asked for its next tasks (eager dispatch): served before any
	// waiting poll.
	eager *handOffSlot
	// taskPuts are the task records the decision writes, by key, as
	// written (taskcache.go).
	taskPuts map[string]notedTask
}

// readyEntry is a ready-queue entry, its queue's key prefix and its task.
type readyEntry struct {
	prefix, key []byte
	task        *taskRecord
}

// emit appends an event to the run's log.
func (c *change) emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	c.state.LastSeq++
	if stepID == "" {
		stepID = runstate.RunStepID
	}
	if logical < 1 {
		logical = 1
	}
	ev := runstate.Event{
		Type:           typ,
		ID:             uuid.NewString(),
		RunID:          c.run.RunID,
		Seq:            c.state.LastSeq,
		IdempotencyKey: runstate.IdempotencyKey(c.run.RunID, stepID, logical, typ, c.run.Definition.PlanVersion, engineAttempt),
		EmittedAt:      c.now,
		EmittedBy:      c.actor,
		StepID:         stepID,
		LogicalAttempt: logical,
		EngineAttempt:  engineAttempt,
		PlanVersion:    c.run.Definition.PlanVersion,
		Data:           data,
	}
	c.events = append(c.events, ev)
	c.dirty = true
}

// decide runs a decision. An illegal transition inside it (which panics with
// an *Error so that no caller can ignore it) and a failed read both end the
// decision with an error, and nothing is committed.
func (c *change) decide(fn func(*change) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	if err := fn(c); err != nil {
		return err
	}
	return c.err
}

// read gets a value during a decision, seeing the decision's own writes
// first; a failure ends the decision.
func (c *change) read(key []byte) ([]byte, bool) {
	for i := len(c.ops) - 1; i >= 0; i-- {
		if string(c.ops[i].Key) == string(key) && c.ops[i].Kind == store.OpPut {
			return c.ops[i].Value, true
		}
	}
	item, err := c.e.store.Get(c.ctx, key)
	if err != nil {
		if c.err == nil {
			c.err = fmt.Errorf("read %s: %w", key, err)
		}
		return nil, false
	}
	return item.Value, true
}

// savepoint marks a point a decision can roll back to, before it has changed
// anything but the log and its writes.
type savepoint struct {
	ops, conds, events, alerts int
	lastSeq                    uint64
	signals                    int
	dirty                      bool
}

func (c *change) savepoint() savepoint {
	return savepoint{len(c.ops), len(c.conds), len(c.events), len(c.alerts), c.state.LastSeq, c.state.SignalCount, c.dirty}
}

// rollback forgets everything recorded since sp.
func (c *change) rollback(sp savepoint) {
	c.ops, c.conds, c.events, c.alerts = c.ops[:sp.ops], c.conds[:sp.conds], c.events[:sp.events], c.alerts[:sp.alerts]
	c.state.LastSeq, c.state.SignalCount, c.dirty = sp.lastSeq, sp.signals, sp.dirty
}

// put writes a JSON record.
func (c *change) put(key []byte, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("engine: record %T does not marshal: %v", v, err))
	}
	c.ops = append(c.ops, store.Put(key, b))
	if t, ok := v.(*taskRecord); ok {
		c.notePutTask(key, t, b)
	}
}

// del deletes a key.
func (c *change) del(key []byte) { c.ops = append(c.ops, store.Delete(key)) }

// require adds a precondition.
func (c *change) require(cond store.Condition) { c.conds = append(c.conds, cond) }

// setTimer writes a durable timer.
func (c *change) setTimer(t timerRecord) {
	c.put(timerKey(t.Due, t.RunID, string(t.Kind), t.Ref), t)
}

// clearTimer deletes a durable timer.
func (c *change) clearTimer(due time.Time, kind timerKind, ref string) {
	c.del(timerKey(due, c.run.RunID, string(kind), ref))
}

// batch answers the conditional batch for a checkpoint read at version. It
// validates every event first (EventValidator) and answers no batch at all
// when one is invalid.
func (c *change) batch(version uint64) (*store.Batch, error) {
	if err := c.validateEvents(); err != nil {
		return nil, err
	}
	b := &store.Batch{Conditions: append([]store.Condition{store.IfVersion(checkpointKey(c.run.RunID), version)}, c.conds...)}
	if c.dirty {
		state, err := json.Marshal(c.state)
		if err != nil {
			panic("engine: checkpoint does not marshal: " + err.Error())
		}
		b.Ops = append(b.Ops, store.Put(checkpointKey(c.run.RunID), state))
	}
	for _, ev := range c.events {
		body, err := json.Marshal(ev)
		if err != nil {
			panic("engine: event does not marshal: " + err.Error())
		}
		idem := eventIdemKey(ev.RunID, ev.IdempotencyKey)
		b.Conditions = append(b.Conditions, store.IfAbsent(idem))
		b.Ops = append(b.Ops, store.Put(eventKey(ev.RunID, ev.Seq), body), store.Put(idem, []byte(store.Uint64(ev.Seq))))
		if c.e != nil && c.e.cfg.Outbox {
			b.Ops = append(b.Ops, store.Put(outboxKey(ev.RunID, ev.Seq), outboxEntry(c.run.TenantID, body)))
		}
	}
	b.Ops = append(b.Ops, lastWriteWins(c.ops)...)
	return b, nil
}

// lastWriteWins keeps, for a key written more than once in a decision, only
// its last write, in the order of first appearance.
func lastWriteWins(ops []store.Op) []store.Op {
	last := make(map[string]int, len(ops))
	for i, op := range ops {
		last[string(op.Key)] = i
	}
	out := make([]store.Op, 0, len(last))
	for i, op := range ops {
		if last[string(op.Key)] == i {
			out = append(out, op)
		}
	}
	return out
}

// maxMutateRetries bounds how often one decision is re-made after losing a
// compare-and-set race or an ambiguous commit.
const maxMutateRetries = 32

// mutate loads a run, lets decide change it, and commits the change as one
// conditional batch. A lost race on the checkpoint, or a commit whose outcome
// is unknown, is resolved by reading again and deciding again, never by
// blindly re-sending: decisions are made from the state they read, so one
// that was already applied decides nothing the second time. An error from
// decide is answered without committing anything.
//
// The first decision is made on the checkpoint this engine last committed or
// read, when it has one, without reading the store (decisions from the
// cache): the commit's condition on the checkpoint's version is what proves
// it current, so a stale one — another engine committed since — decides
// nothing. A decision from the cache that does not commit (an error, nothing
// to do, a failed condition) is made again on the store's state before it
// is answered, so nothing is ever answered from a stale state.
func (e *Engine) mutate(ctx context.Context, runID, actor string, decide func(*change) error) (*change, error) {
	return e.mutateFrom(ctx, runID, actor, decide, false)
}

// mutateFrom is mutate; fromStore makes even the first decision on the
// store's state (drive: a tenure's fence must see the store's epoch).
func (e *Engine) mutateFrom(ctx context.Context, runID, actor string, decide func(*change) error, fromStore bool) (*change, error) {
	unlock := e.lock(runID)
	defer unlock()
	for range maxMutateRetries {
		ch, retry, err := e.mutateOnce(ctx, runID, actor, decide, fromStore)
		if !retry {
			return ch, err
		}
		fromStore = true
	}
	return nil, &Error{Code: CodeUnavailable, RunID: runID, Message: "run " + runID + " is changing too fast; retry"}
}

// mutateOnce makes and commits one decision, and answers whether it must be
// made again (a lost race on the checkpoint, an unknown outcome, or a
// decision from the cache that did not commit). The tasks it hands to
// waiting polls are delivered only if it committed.
func (e *Engine) mutateOnce(ctx context.Context, runID, actor string, decide func(*change) error, fromStore bool) (ch *change, retry bool, err error) {
	run, err := e.loadRun(ctx, runID)
	if err != nil {
		return nil, false, err
	}
	state, version, cached, err := e.checkpointToDecideOn(ctx, runID, fromStore)
	if err != nil {
		return nil, false, err
	}
	ch = &change{e: e, ctx: ctx, run: run, state: state, now: e.now(), actor: actor}
	committed := false
	defer func() { ch.settleHandOffs(committed) }()
	if err := ch.decide(func(c *change) error {
		if err := decide(c); err != nil {
			return err
		}
		c.handOff()
		return nil
	}); err != nil {
		return ch, cached, err
	}
	if !ch.dirty && len(ch.ops) == 0 {
		return ch, cached, nil
	}
	batch, err := ch.batch(version)
	if err != nil {
		return ch, cached, err
	}
	res, err := e.commitWithinBudget(ctx, ch, batch)
	for _, r := range ch.readyPuts { // even when the outcome is unknown
		e.hints.lower(r.prefix, r.key)
	}
	if err != nil {
		e.checkpoints.remove(runID) // it may be stale, or the commit may have applied
		e.forgetTasks(ch)
	}
	var cf *store.ConditionFailedError
	switch {
	case err == nil:
		committed = true
		ch.settleHandOffs(true)
		if ch.dirty {
			e.checkpointCommitted(runID, res.Versions[0], ch.state)
		}
		e.tasksCommitted(ch, batch, res)
		e.afterCommit(ch)
		return ch, false, nil
	case conflictOn(err, checkpointKey(runID)), errors.Is(err, store.ErrOutcomeUnknown), errors.Is(err, store.ErrRetryable):
		return ch, true, err
	case cached && errors.As(err, &cf):
		return ch, true, err // decided on the cache: decide again on the store's state
	default:
		return ch, false, err
	}
}

// afterCommit wakes the polls of queues that gained tasks and the watchers
// of a run whose log grew, and raises the alerts the decision found.
func (e *Engine) afterCommit(ch *change) {
	for _, q := range ch.wake {
		e.wake.notify(q)
	}
	if len(ch.events) > 0 {
		e.wake.notify(runWatchKey(ch.run.RunID))
	}
	e.publishWakes(ch) // and other engines'
	for _, a := range ch.alerts {
		e.alert(ch.ctx, a.name, a.attrs...)
	}
}

// conflictOn reports whether err is a failed condition on key.
func conflictOn(err error, key []byte) bool {
	var cf *store.ConditionFailedError
	return errors.As(err, &cf) && string(cf.Key) == string(key)
}

// loadRun reads a run's immutable record, cached after the first read.
func (e *Engine) loadRun(ctx context.Context, runID string) (*runRecord, error) {
	if r, ok := e.runs.get(runID); ok {
		return r, nil
	}
	item, err := e.store.Get(ctx, runKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, runNotFound(runID)
	}
	if err != nil {
		return nil, err
	}
	var r runRecord
	if err := json.Unmarshal(item.Value, &r); err != nil {
		return nil, fmt.Errorf("run record %s: %w", runID, err)
	}
	e.runs.put(runID, &r)
	return &r, nil
}

func runNotFound(runID string) *Error {
	return &Error{Code: CodeNotFound, RunID: runID, Message: "run " + runID + " not found"}
}

// runWatchKey names a run's log in the waker (never a queue: queue keys hold a NUL).
func runWatchKey(runID string) string { return "run\x01" + runID }

// EventsAppended answers a channel closed the next time this engine appends
// events to the run's log, and a release to call once the caller no longer
// waits on it (a run no one waits on is forgotten). Take it before reading
// the log, then wait on it: an append in between closes it at once. Other
// engines' appends close it only through a Notifier, and not reliably, so
// watchers also look at the log on an interval.
func (e *Engine) EventsAppended(runID string) (<-chan struct{}, func()) {
	return e.wake.wait(runWatchKey(runID))
}
