package engine

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// recorder is a decision's I/O: it reads the store (seeing the decision's
// own writes first) and records what the decision produces — the new
// checkpoint, the events describing it, every other write, the conditions
// they commit on, and the effects dispatch applies after the commit. It
// commits as one conditional batch guarded by the checkpoint's version
// (batch), so a decision is applied whole or not at all, and never over a
// state it did not read.
type recorder struct {
	// run is the run's record (immutable); state is the state the decision
	// decides on, which the rules (decide) change in place.
	run   *record.Run
	state *runstate.State
	e     *Engine
	ctx   context.Context
	// newRun says the decision creates the run (a submission): its batch
	// requires that no checkpoint exists.
	newRun bool
	now    time.Time
	actor  string

	events []runstate.Event
	conds  []store.Condition
	ops    []store.Op
	dirty  bool
	alerts []pendingAlert
	// eff is what the decision hands dispatch once its commit settles:
	// woken queues, hand-offs (dispatch.go).
	eff dispatch.Effects[*Task]
	// readyPuts are the ready-queue entries the decision writes (queue
	// hints, hand-off).
	readyPuts []readyEntry
	// taskPuts are the task records the decision writes, with their keys,
	// as written (engine/internal/cache); a key noted again supersedes.
	taskPuts []cache.NotedTask
	// removesRun: the decision deletes the run's checkpoint with its last
	// records (retention.go), so the batch writes no checkpoint.
	removesRun bool
	// arena is the memory events, ops, conds and taskPuts start in, given
	// back once the decision's commit settles (arena.go); nil: none.
	arena *decisionArena
	// prepared is what the decision read for its rules before they ran
	// (prepare.go).
	prepared prepared
	// appended is where the batch holds the decision's events and outbox
	// entries, for the outbox cache once it commits (Config.OutboxCache).
	appended runlog.Appended
	// observing: Config.Observer is told of this decision; claimed and
	// ended are the claims and attempt ends it noted for it (observe.go).
	observing      bool
	claimed, ended []ObservedTask
}

// emit appends an event to the run's log, emitted by the decision's actor.
func (c *recorder) emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	c.emitBy(c.actor, typ, stepID, logical, engineAttempt, data)
}

// emitBy appends an event to the run's log, emitted by actor. An event
// whose key the run has appended already — by an earlier decision (the
// checkpoint's record) or by this one — is not appended: it inserts nothing
// (docs/semantics.md#event-idempotency-key). A run whose checkpoint has no
// record (stored by an older engine) appends it, and its key row's
// condition fails the decision instead.
func (c *recorder) emitBy(actor, typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	if stepID == "" {
		stepID = runstate.RunStepID
	}
	if logical < 1 {
		logical = 1
	}
	if c.state.KeysTracked && c.keyAppended(typ, stepID, logical, engineAttempt) {
		if c.e != nil {
			c.e.log.Debug("event not appended: its idempotency key exists", "run_id", c.run.RunID,
				"event_type", typ, "step_id", stepID, "logical_attempt", logical)
		}
		return
	}
	c.state.LastSeq++
	ev := runstate.Event{
		Type:           typ,
		ID:             newEventID(),
		RunID:          c.run.RunID,
		Seq:            c.state.LastSeq,
		IdempotencyKey: runstate.IdempotencyKey(c.run.RunID, stepID, logical, typ, c.run.Definition.PlanVersion, engineAttempt),
		EmittedAt:      c.now,
		EmittedBy:      actor,
		StepID:         stepID,
		LogicalAttempt: logical,
		EngineAttempt:  engineAttempt,
		PlanVersion:    c.run.Definition.PlanVersion,
		Data:           data,
	}
	if c.events == nil {
		c.events = make([]runstate.Event, 0, eventsPerDecision)
	}
	c.events = append(c.events, ev)
	c.dirty = true
}

// keyAppended reports whether the run has appended an event with this key:
// the checkpoint's record holds the earlier decisions', and this
// decision's own are its events until batch records them.
func (c *recorder) keyAppended(typ, stepID string, logical, engineAttempt int) bool {
	for i := range c.events {
		if c.events[i].SameKey(typ, stepID, logical, engineAttempt) {
			return true
		}
	}
	return c.state.HasKey(typ, stepID, logical, engineAttempt)
}

// eventsPerDecision is room for the events of most decisions: a step's
// completion records the attempt, the step's end and the next step's start;
// a submission, the run's submission and start and its first step's.
const eventsPerDecision = 8

// newEventID answers a random (version 4) UUID as uuid.NewString does, read
// into the stack: the string is its one allocation.
func newEventID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read never fails
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant RFC 4122
	return u.String()
}

// savepoint marks a point a decision can roll back to, before it has changed
// anything but the log and its writes.
type savepoint struct {
	ops, conds, events, alerts int
	readyPuts                  int
	lastSeq                    uint64
	signals                    int
	dirty                      bool
}

func (c *recorder) savepoint() savepoint {
	return savepoint{len(c.ops), len(c.conds), len(c.events), len(c.alerts), len(c.readyPuts), c.state.LastSeq, c.state.SignalCount, c.dirty}
}

// rollback forgets everything recorded since sp.
func (c *recorder) rollback(sp savepoint) {
	c.ops, c.conds, c.events, c.alerts = c.ops[:sp.ops], c.conds[:sp.conds], c.events[:sp.events], c.alerts[:sp.alerts]
	c.readyPuts = c.readyPuts[:sp.readyPuts]
	c.state.LastSeq, c.state.SignalCount, c.dirty = sp.lastSeq, sp.signals, sp.dirty
}

// put writes a record: a task record in binary (runcodec), any other as JSON.
func (c *recorder) put(key []byte, v any) {
	if t, ok := v.(*record.Task); ok {
		b := runcodec.AppendTask(make([]byte, 0, taskRecordSize), t.Stored())
		c.ops = append(c.ops, store.Put(key, b))
		c.notePutTask(key, t, b)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("engine: record %T does not marshal: %v", v, err))
	}
	c.ops = append(c.ops, store.Put(key, b))
}

// taskRecordSize is room for a claimed task record in binary.
const taskRecordSize = 256

// del deletes a key. A ready entry this decision made (makeReady) was
// never in the store: it vanishes, with no write and no delete.
func (c *recorder) del(key []byte) {
	if len(c.readyPuts) > 0 && c.dropReady(key) {
		return
	}
	c.ops = append(c.ops, store.Delete(key))
}

// dropWrites forgets every write of key made so far in the decision.
func (c *recorder) dropWrites(key []byte) {
	c.ops = slices.DeleteFunc(c.ops, func(op store.Op) bool { return string(op.Key) == string(key) })
}

// require adds a precondition.
func (c *recorder) require(cond store.Condition) { c.conds = append(c.conds, cond) }

// setTimer writes a durable timer, in binary (runcodec.Timer).
func (c *recorder) setTimer(t record.Timer) {
	c.ops = append(c.ops, store.Put(record.TimerKey(t.Due, t.RunID, string(t.Kind), t.Ref), t.AppendTimer(nil)))
}

// clearTimer deletes a durable timer. An attempt timer is put once, by the
// claim that set its deadline (claimTask), and every way out of that claim
// deletes it before the task can be claimed again, so it is removed with
// store.DeleteOnce (engine/deleteonce_test.go checks this in every test).
func (c *recorder) clearTimer(due time.Time, kind record.TimerKind, ref string) {
	key := record.TimerKey(due, c.run.RunID, string(kind), ref)
	if kind == record.TimerAttempt {
		c.ops = append(c.ops, store.DeleteOnce(key))
		return
	}
	c.del(key)
}

// batch answers the conditional batch for a checkpoint read at version. It
// validates every event first (validateEvents) and answers no batch at all
// when one is invalid.
func (c *recorder) batch(version uint64) (*store.Batch, error) {
	if err := c.validateEvents(); err != nil {
		return nil, err
	}
	ckpt := runlog.CheckpointKey(c.run.RunID) // the fence's key and the checkpoint's
	fence := store.IfVersion(ckpt, version)
	if c.newRun {
		fence = store.IfAbsent(ckpt)
	}
	outbox, keyRows := c.e != nil && c.e.cfg.Outbox, !c.state.KeysTracked
	conds := 1 + len(c.conds)
	if keyRows {
		conds += len(c.events)
	}
	// the checkpoint, the events' writes, the other writes
	b := c.newBatch(conds, 1+runlog.EventWrites(c.events, outbox, keyRows)+len(c.ops))
	b.Conditions = append(append(b.Conditions, fence), c.conds...)
	if c.state.KeysTracked {
		c.state.NoteKeys(c.events) // the checkpoint's record of the keys appended
	}
	if c.dirty && !c.removesRun {
		b.Ops = append(b.Ops, c.putCheckpoint(ckpt))
	}
	c.appended = runlog.AppendEvents(b, c.run.TenantID, c.events, outbox, keyRows)
	b.Ops = appendLastWrites(b.Ops, c.ops)
	return b, nil
}

// validateEvents checks every event of a decision against the proto's
// rules (eventpb.Check) before anything is written
// (docs/semantics.md#event-validation): one invalid event fails the whole
// decision, so none of its events, checkpoint or records is persisted.
func (c *recorder) validateEvents() error {
	validate := eventpb.Check
	if c.e != nil && c.e.cfg.validateEvent != nil {
		validate = c.e.cfg.validateEvent
	}
	for i := range c.events {
		if err := validate(&c.events[i]); err != nil {
			return fault.SchemaValidationFailed(&c.events[i], err)
		}
	}
	return nil
}

// appendLastWrites appends to out, for a key written more than once in a
// decision, only its last write, in the order of the last writes. A
// decision writes a few keys: they are compared pairwise, and only a long
// list is indexed by a map.
func appendLastWrites(out, ops []store.Op) []store.Op {
	if len(ops) > 64 {
		last := make(map[string]int, len(ops))
		for i, op := range ops {
			last[string(op.Key)] = i
		}
		for i, op := range ops {
			if last[string(op.Key)] == i {
				out = append(out, op)
			}
		}
		return out
	}
	for i, op := range ops {
		if !writtenAgain(ops[i+1:], op.Key) {
			out = append(out, op)
		}
	}
	return out
}

// writtenAgain reports whether one of later writes key.
func writtenAgain(later []store.Op, key []byte) bool {
	for _, op := range later {
		if string(op.Key) == string(key) {
			return true
		}
	}
	return false
}

// maxMutateRetries bounds how often one decision is re-made after losing a
// compare-and-set race or an ambiguous commit.
const maxMutateRetries = 32

// decision is one mutating call's part in the commit pipeline
// (commitDecision): which run it changes, as whom, what it reads and how it
// decides.
type decision struct {
	// runID is the run it changes; prepare may name it instead.
	runID string
	actor string
	// fromStore makes even the first attempt decide on the store's
	// checkpoint (drive: a tenure's fence must see the store's epoch).
	fromStore bool
	// prepare, when set, reads what the decision needs besides the run and
	// its checkpoint (a task record) before each attempt: from the store
	// when fresh (every attempt after the first), so that a decision made
	// again never sees what its earlier attempt read or changed. It answers
	// the run to change, or done when the call is answered without a
	// commit.
	prepare func(ctx context.Context, fresh bool) (runID string, done bool, err error)
	// decide is the decision: it changes the run through the change, and
	// answers an error to commit nothing.
	decide func(*change) error
	// lostRace, when set, reports whether a failed attempt lost a race on
	// what prepare read: the decision is made again from fresh reads.
	lostRace func(err error) bool
	// newRun, for a submission, is the run the decision creates: its state
	// starts as initial, and the batch requires that no checkpoint exists.
	newRun  *record.Run
	initial *runstate.State
	// contended answers a decision that lost every race (default: the run
	// is changing too fast).
	contended func() error
	// removal: the decision is a batch of the run's removal (retention.go),
	// the only kind that sees a run being removed; to every other the run
	// is not found.
	removal bool
	// noRules: the decision applies no rule (a heartbeat, a removal batch),
	// so nothing is read for them (prepare).
	noRules bool
}

// mutate makes and commits a decision about a run (commitDecision).
func (e *Engine) mutate(ctx context.Context, runID, actor string, decide func(*change) error) (*change, error) {
	return e.commitDecision(ctx, decision{runID: runID, actor: actor, decide: decide})
}

// commitDecision is the one commit pipeline every mutating path goes
// through: read, decide, build the batch with its conditions and fencing
// epoch, commit, and settle the decision's effects. A lost race on the
// checkpoint (or on what prepare read), a retryable store error, or a commit
// whose outcome is unknown, is resolved by reading again and deciding again,
// never by blindly re-sending: decisions are made from the state they read,
// so one that was already applied decides nothing the second time. An error
// from decide is answered without committing anything.
//
// The first decision is made on the checkpoint this engine last committed or
// read, when it has one, without reading the store (decisions from the
// cache): the commit's condition on the checkpoint's version is what proves
// it current, so a stale one — another engine committed since — decides
// nothing. A decision from the cache that does not commit (an error, nothing
// to do, a failed condition) is made again on the store's state before it
// is answered, so nothing is ever answered from a stale state.
func (e *Engine) commitDecision(ctx context.Context, d decision) (*change, error) {
	fresh := d.fromStore
	for range maxMutateRetries {
		runID := d.runID
		if d.prepare != nil {
			id, done, err := d.prepare(ctx, fresh)
			if err != nil || done {
				return nil, err
			}
			runID = id
		}
		ch, retry, err := decideOnce(ctx, e, runID, d, fresh)
		if !retry && (err == nil || d.lostRace == nil || !d.lostRace(err)) {
			return ch, err
		}
		fresh = true
	}
	if d.contended != nil {
		return nil, d.contended()
	}
	return nil, fault.Unavailable(d.runID, "run "+d.runID+" is changing too fast; retry")
}

// startingState answers the state a decision starts from and its version:
// a new run's initial state, the cached checkpoint unless fresh (cached
// true), else the store's.
func startingState(ctx context.Context, e *Engine, runID string, d decision, fresh bool) (*record.Run, *runstate.State, uint64, bool, error) {
	if d.newRun != nil {
		return d.newRun, d.initial.Clone(), 0, false, nil
	}
	run, err := e.records.LoadRun(ctx, runID)
	if err != nil {
		return nil, nil, 0, false, err
	}
	state, version, cached, err := e.records.CheckpointToDecideOn(ctx, runID, fresh)
	if err == nil && state.Removing && !d.removal {
		return nil, nil, 0, false, cache.RunNotFound(runID)
	}
	return run, state, version, cached, err
}

// decideOnce makes and commits one decision under the run's lock, and
// answers whether it must be made again (a lost race on the checkpoint, an
// unknown outcome, or a decision from the cache that did not commit). The
// tasks it hands to waiting polls are delivered only if it committed.
func decideOnce(ctx context.Context, e *Engine, runID string, d decision, fresh bool) (ch *change, retry bool, err error) {
	unlock := e.locks.lock(runID)
	defer unlock()
	run, state, version, cached, err := startingState(ctx, e, runID, d, fresh)
	if err != nil {
		return nil, false, err
	}
	now := e.now()
	if d.newRun != nil {
		now = d.newRun.CreatedAt
	}
	ch = newChange(e, ctx, run, state, now, d.actor)
	ch.newRun = d.newRun != nil
	ch.observeDecision()
	ch.useArena(e.arenas.take())
	defer ch.giveArenaBack() // deferred first, so run last: after the effects settle
	committed := false
	defer func() {
		if !committed {
			e.dispatch.Settle(ch.effects(), false) // its hand-offs' room goes back
		}
	}()
	defer ch.observeEnd(&committed, &err)
	if !d.noRules {
		if ch.prepared, err = prepare(ctx, e, run, state); err != nil {
			return ch, false, err
		}
	}
	from := state.Status
	if err = d.decide(ch); err != nil {
		return ch, cached, err
	}
	ch.indexForRetention(from)
	if err := ch.handOff(); err != nil {
		return ch, cached, err
	}
	if !ch.dirty && len(ch.ops) == 0 {
		return ch, cached, nil
	}
	batch, err := ch.batch(version)
	if err != nil {
		return ch, cached, err
	}
	settleRider := store.Ride(ctx, batch) // the call's audit record commits with its decision
	res, err := ch.commitObserved(ctx, batch)
	settleRider(err)
	if err != nil {
		e.records.ForgetCheckpoint(runID) // it may be stale, or the commit may have applied
		e.records.ForgetTasks(ch.taskPuts)
	}
	var cf *store.ConditionFailedError
	switch {
	case err == nil:
		committed = true
		if ch.dirty && !ch.removesRun {
			e.records.CheckpointCommitted(runID, res.Versions[0], ch.state)
		}
		e.records.TasksCommitted(ch.taskPuts, batch, res)
		e.cfg.OutboxCache.Committed(batch, res, ch.appended)
		e.dispatch.Settle(ch.effects(), true)
		for _, a := range ch.alerts {
			e.alert(ch.ctx, a.name, a.attrs...)
		}
		return ch, false, nil
	case conflictOn(err, runlog.CheckpointKey(runID)), errors.Is(err, store.ErrOutcomeUnknown), errors.Is(err, store.ErrRetryable):
		return ch, true, err
	case cached && errors.As(err, &cf):
		return ch, true, err // decided on the cache: decide again on the store's state
	default:
		return ch, false, err
	}
}

// conflictOn reports whether err is a failed condition on key.
func conflictOn(err error, key []byte) bool {
	var cf *store.ConditionFailedError
	return errors.As(err, &cf) && string(cf.Key) == string(key)
}

// notePutTask remembers a task record the decision writes, as written.
func (c *recorder) notePutTask(key []byte, t *record.Task, body []byte) {
	c.taskPuts = append(c.taskPuts, cache.NotedTask{Key: key, Record: *t, Body: body})
}
