package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// change is one decision about one run, as it is recorded: the state it
// decides on (with what prepare read for its rules), and what it produces —
// the new checkpoint, the events describing it, every other write, the
// conditions they commit on, and the effects dispatch applies after the
// commit. It never reads the store. It commits as one conditional batch
// guarded by the checkpoint's version (batch.go), so a decision is applied
// whole or not at all, and never over a state it did not read.
// commitDecision (decision.go) makes it, commits it and settles its effects;
// the rules (package decide) write through it as a decide.Recorder
// (ruleRecorder).
type change struct {
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
	// claims are the claims the decision keeps in its checkpoint instead
	// of task records (claimInCheckpoint).
	claims []*record.Task
	// removesRun: the decision deletes the run's checkpoint with its last
	// records (retention.go), so the batch writes no checkpoint.
	removesRun bool
	// arena is the memory events, ops, conds and taskPuts start in, given
	// back once the decision's commit settles (arena.go); nil: none.
	arena *decisionArena
	// prepared is what the decision read for its rules before they ran
	// (prepare.go).
	prepared prepared
	// outbox is what the batch does with the run's outbox entry
	// (outboxWrite); appended is where it holds the decision's events, for
	// the outbox cache once it commits (Config.OutboxCache).
	outbox   runlog.OutboxWrite
	appended runlog.Appended
	// observing: Config.Observer is told of this decision; claimed and
	// ended are the claims and attempt ends it noted for it (observe.go).
	observing      bool
	claimed, ended []ObservedTask
	// eager is the slot of the worker whose report the decision applies,
	// when it asked for its next tasks (eager dispatch): served before any
	// waiting poll.
	eager *dispatch.Slot[*Task]
	// completed is the task record a completion with eager dispatch
	// finished: the tokens of the tasks eager dispatch claims for the
	// worker are written into it (recordEagerClaims).
	completed *record.Task
	// decision is the rules applied to the run (rules), made on first use
	// (ruled).
	decision decide.Decision
	ruled    bool
	// preempt: the decision left the run QUEUED with its concurrency key
	// full under strategy cancelInProgress; the run-queue reconciler
	// cancels the key's oldest started run (runconcurrency.go).
	preempt bool
	// slotsFreed: the decision gives a run's concurrency slots back.
	slotsFreed bool
	// flowWakes are the queues whose flow-control slots the decision gave
	// back: their polls are woken.
	flowWakes []string
	// flowHeld is a due schedule-to-start timer's read: flow control holds
	// the ready task now (flowHeldNow).
	flowHeld bool
}

// newChange answers a decision about run, starting from state.
func newChange(e *Engine, ctx context.Context, run *record.Run, state *runstate.State, now time.Time, actor string) *change {
	return &change{run: run, state: state, e: e, ctx: ctx, now: now, actor: actor}
}

// emit appends an event to the run's log, emitted by the decision's actor.
func (c *change) emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	c.emitBy(c.actor, typ, stepID, logical, engineAttempt, data)
}

// emitBy appends an event to the run's log, emitted by actor. An event
// whose key the run has appended already — by an earlier decision (the
// checkpoint's record) or by this one — is not appended: it inserts nothing
// (docs/semantics.md#event-idempotency-key). A run whose checkpoint has no
// record (stored by an older engine) appends it, and its key row's
// condition fails the decision instead.
func (c *change) emitBy(actor, typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
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
		ID:             runstate.EventID(c.run.RunID, c.state.LastSeq),
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
func (c *change) keyAppended(typ, stepID string, logical, engineAttempt int) bool {
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

// savepoint marks a point a decision can roll back to, before it has changed
// anything but the log and its writes.
type savepoint struct {
	ops, conds, events, alerts int
	readyPuts                  int
	lastSeq                    uint64
	signals                    int
	dirty                      bool
}

func (c *change) savepoint() savepoint {
	return savepoint{len(c.ops), len(c.conds), len(c.events), len(c.alerts), len(c.readyPuts), c.state.LastSeq, c.state.SignalCount, c.dirty}
}

// rollback forgets everything recorded since sp.
func (c *change) rollback(sp savepoint) {
	c.ops, c.conds, c.events, c.alerts = c.ops[:sp.ops], c.conds[:sp.conds], c.events[:sp.events], c.alerts[:sp.alerts]
	c.readyPuts = c.readyPuts[:sp.readyPuts]
	c.state.LastSeq, c.state.SignalCount, c.dirty = sp.lastSeq, sp.signals, sp.dirty
}

// put writes a record: a task record in binary (runcodec), any other as JSON.
func (c *change) put(key []byte, v any) {
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
func (c *change) del(key []byte) {
	if len(c.readyPuts) > 0 && c.dropReady(key) {
		return
	}
	c.ops = append(c.ops, store.Delete(key))
}

// dropWrites forgets every write of key made so far in the decision.
func (c *change) dropWrites(key []byte) {
	c.ops = slices.DeleteFunc(c.ops, func(op store.Op) bool { return string(op.Key) == string(key) })
}

// require adds a precondition.
func (c *change) require(cond store.Condition) { c.conds = append(c.conds, cond) }

// setTimer writes a durable timer, in binary (runcodec.Timer).
func (c *change) setTimer(t record.Timer) {
	c.ops = append(c.ops, store.Put(record.TimerKey(t.Due, t.RunID, string(t.Kind), t.Ref), t.AppendTimer(nil)))
}

// clearTimer deletes a durable timer. An attempt timer is put once, by the
// claim that set its deadline (claimTask), and every way out of that claim
// deletes it before the task can be claimed again, so it is removed with
// store.DeleteOnce (engine/deleteonce_test.go checks this in every test).
func (c *change) clearTimer(due time.Time, kind record.TimerKind, ref string) {
	key := record.TimerKey(due, c.run.RunID, string(kind), ref)
	if kind == record.TimerAttempt {
		c.ops = append(c.ops, store.DeleteOnce(key))
		return
	}
	c.del(key)
}

// notePutTask remembers a task record the decision writes, as written.
func (c *change) notePutTask(key []byte, t *record.Task, body []byte) {
	c.taskPuts = append(c.taskPuts, cache.NotedTask{Key: key, Record: *t, Body: body})
}

// rules answers the decision rules (package decide) over this change: what
// the run does next, recorded through the change's recorder.
func (c *change) rules() *decide.Decision {
	if !c.ruled {
		run := decide.Run{ID: c.run.RunID, Definition: &c.run.Definition, PlanSHA256: c.run.PlanSHA256, Input: c.run.Input,
			Admission: decide.Admission{Mode: c.e.cfg.backpressureOf(c.run), Delay: c.e.cfg.Delay}, MaxFanOut: c.e.cfg.MaxFanOut}
		if c.prepared.rules.Slots != decide.SlotsUnread { // the decision may start the run
			context := runContext(c.run, c.run.SubmittedBy)
			run.Context = &context
		}
		c.decision, c.ruled = decide.New(run, c.state, c.now, &c.prepared.rules, ruleRecorder{c}), true
	}
	return &c.decision
}

// transition changes the run's status through the one transition table; an
// illegal transition fails the whole decision, so it is never applied.
func (c *change) transition(to runstate.RunStatus) error {
	from := c.state.Status
	if from == to {
		return nil
	}
	if !runstate.RunTransitionAllowedFor(c.state, to) {
		return fault.Broken(fault.IllegalTransition(decide.RunMove(c.run.RunID, from, to)))
	}
	if from == runstate.RunQueued && !c.state.QueuedAt.IsZero() {
		dequeueKeyed(c, c.run, c.state)
		c.state.QueuedAt = time.Time{}
	}
	if to.Terminal() {
		c.releaseSlots()
		releaseAllFlowSlots(c)
		dropDeadlines(c)
	}
	c.state.Status = to
	c.state.Substatus = ""
	c.state.Message = ""
	c.dirty = true
	return nil
}

// setStep changes a step's status through the step transition table.
func (c *change) setStep(st *runstate.StepState, to runstate.StepStatus) error {
	if st.Status == to {
		return nil
	}
	if !runstate.StepTransitionAllowed(st.Status, to) {
		return fault.Broken(fault.IllegalTransition(decide.StepMove(c.run.RunID, st.ActionID, st.Status, to)))
	}
	st.Status = to
	c.dirty = true
	return nil
}

// newTask writes a ready task and its queue entry.
func (c *change) newTask(a *definition.Action, st *runstate.StepState, kind TaskKind, activity, queue string, timeout definition.Duration, notBefore time.Time) *record.Task {
	attempt := st.EngineAttempt
	if kind == TaskCompensation {
		attempt = st.CompAttempt
	}
	t := &record.Task{
		FormatVersion:    record.Version,
		TaskID:           fmt.Sprintf("%s/%s/%d/%s%d", c.run.RunID, a.ID, st.LogicalAttempt, kind, attempt),
		RunID:            c.run.RunID,
		TenantID:         c.run.TenantID,
		ActionID:         a.ID,
		Kind:             kind,
		Queue:            queue,
		Activity:         activity,
		LogicalAttempt:   st.LogicalAttempt,
		EngineAttempt:    attempt,
		NotBefore:        notBefore,
		Seq:              c.state.LastSeq + 1,
		Timeout:          timeout,
		HeartbeatTimeout: a.HeartbeatTimeout,
		State:            record.TaskReady,
	}
	if p := c.run.EffectivePriority(); p != record.DefaultPriority {
		t.Priority = p // its ready entry goes to the queue's lane of p
	}
	scheduleStart(c, t, a, notBefore) // the schedule-to-start timer (timers.go)
	if kind == TaskActivity {
		t.Flow = flowOfTask(c, a)
		fairOfTask(c, a, t) // its fairness key and weight (fair.go)
		if t.Flow != nil && t.Flow.Err != "" {
			t.StartDue = c.now // its attempt fails at once (startTimedOut)
		}
	}
	c.makeReady(t, true) // the record is written with the entry, unless a hand-off claims it
	return t
}

// makeReady makes t ready in its queue: its ready entry, and the
// schedule-to-start timer its StartDue names (startDue), are written when
// the decision is made unless a hand-off claims t first (handOff). Its
// queue's polls are woken after the commit. t must have no ready entry in
// the store: a task new in this decision, or one its claim took out of its
// queue (unclaim). newTask says t is new, its record not yet written.
func (c *change) makeReady(t *record.Task, newTask bool) []byte {
	key := t.ReadyKey()
	c.readyPuts = append(c.readyPuts, readyEntry{key: key, task: t, startDue: t.StartDue, newTask: newTask})
	return key
}

// pendingReady answers the ready entry this decision made for t (deleted
// since or not), or nil.
func (c *change) pendingReady(t *record.Task) *readyEntry {
	for i := range c.readyPuts {
		if r := &c.readyPuts[i]; r.task == t {
			return r
		}
	}
	return nil
}

// unready removes t's ready entry: one this decision made vanishes, any
// other is deleted.
func (c *change) unready(t *record.Task) {
	if r := c.pendingReady(t); r != nil && !r.gone {
		r.gone = true
		return
	}
	c.del(t.ReadyKey())
}

// dropReady makes the held-back ready entry at key vanish; it reports
// whether there was one.
func (c *change) dropReady(key []byte) bool {
	for i := range c.readyPuts {
		if r := &c.readyPuts[i]; !r.gone && string(r.key) == string(key) {
			r.gone = true
			return true
		}
	}
	return false
}

// effects answers what the decision hands dispatch once its commit settles.
func (c *change) effects() *dispatch.Effects[*Task] {
	c.eff.Ready, c.eff.Queues = c.eff.Ready[:0], c.eff.Queues[:0]
	for _, r := range c.readyPuts {
		if r.gone {
			continue
		}
		t := r.task
		c.eff.Ready = append(c.eff.Ready, dispatch.Ready{Prefix: record.QueuePrefix(t.TenantID, t.Lane()), Key: r.key})
		c.eff.Queues = append(c.eff.Queues, dispatch.QueueKey(t.TenantID, t.Queue))
	}
	for _, q := range c.flowWakes {
		key := dispatch.QueueKey(c.run.TenantID, q)
		c.eff.Queues = append(c.eff.Queues, key)
		c.e.flow.woke(key)
	}
	if len(c.events) > 0 && !c.newRun { // a run being created has no watchers yet
		c.eff.Run = c.run.RunID
		c.eff.Ended = c.state.Status.Terminal()
	}
	return &c.eff
}

// retireTask ends a task nobody may run or report any more: its queue entry
// goes, and its record says lost, so a late report changes nothing. Writing
// the record without reading it is safe: every claim also changes the
// checkpoint this change is conditioned on.
func (c *change) retireTask(taskID, readyKey string) {
	if taskID == "" {
		return
	}
	if readyKey != "" {
		c.del([]byte(readyKey))
	}
	for _, st := range c.state.Steps {
		if st.TaskID == taskID && st.FlowSlot != "" {
			releaseFlowSlot(c, st, queueOrDefault(c.run.Action(st.ActionID).Queue))
		}
	}
	c.put(record.TaskKey(taskID), &record.Task{FormatVersion: record.Version, TaskID: taskID, RunID: c.run.RunID,
		TenantID: c.run.TenantID, State: record.TaskLost})
}

// recordRecon writes the step's reconciliation record as the rules left it
// (decide merges it with the record the decision's prepare read).
func (c *change) recordRecon(a *definition.Action, st *runstate.StepState, u decide.Recon) {
	op := operationID(c.run.RunID, a.ID, st.LogicalAttempt)
	c.put(reconKey(c.run.RunID, a.Activity, op), &reconRecord{FormatVersion: record.Version, WorkflowID: c.run.RunID,
		ActivityName: a.Activity, OperationID: op, IdempotencyKey: u.Key, Status: u.Status, Result: u.Result, Error: u.Err,
		Diagnostic: u.Diagnostic, CreatedAt: u.CreatedAt, UpdatedAt: c.now})
}

// takeSlots takes for the run the free slot of every limit that the
// decision's prepare found, each on condition that nobody took it since.
func (c *change) takeSlots() {
	for _, k := range c.prepared.freeSlots {
		c.require(store.IfAbsent(k))
		c.ops = append(c.ops, store.Put(k, []byte(c.run.RunID)))
		c.state.Slots = append(c.state.Slots, string(k))
	}
}

// releaseSlots gives the run's slots back (the run ended); once the
// decision commits, this engine's run queue is asked for a pass
// (kickRunQueue).
func (c *change) releaseSlots() {
	for _, k := range c.state.Slots {
		c.del([]byte(k))
	}
	if len(c.state.Slots) > 0 {
		c.slotsFreed = true
	}
	c.state.Slots = nil
}

// ruleRecorder is the change as the decision rules write through it
// (decide.Recorder).
type ruleRecorder struct{ c *change }

func (r ruleRecorder) Emit(typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	r.c.emit(typ, stepID, logical, engineAttempt, data)
}

func (r ruleRecorder) EmitBy(actor, typ, stepID string, logical, engineAttempt int, data runstate.EventData) {
	r.c.emitBy(actor, typ, stepID, logical, engineAttempt, data)
}

func (r ruleRecorder) MoveRun(to runstate.RunStatus) error { return r.c.transition(to) }

func (r ruleRecorder) MoveStep(st *runstate.StepState, to runstate.StepStatus) error {
	return r.c.setStep(st, to)
}

func (r ruleRecorder) Changed() { r.c.dirty = true }

// SetTimer and ClearTimer keep the rules' timer kinds, which are the
// persisted names of record.TimerKind (TestRules_TimerAndTaskKindsAreThePersistedOnes).
func (r ruleRecorder) SetTimer(t decide.Timer) {
	r.c.setTimer(record.Timer{RunID: r.c.run.RunID, Kind: record.TimerKind(t.Kind), Ref: t.Ref, Due: t.Due})
}

func (r ruleRecorder) ClearTimer(t decide.Timer) {
	r.c.clearTimer(t.Due, record.TimerKind(t.Kind), t.Ref)
}

func (r ruleRecorder) NewTask(kind decide.TaskKind, a *definition.Action, st *runstate.StepState, notBefore time.Time) (string, string) {
	activity, queue, timeout := a.Activity, a.Queue, a.Timeout
	if kind == decide.TaskCompensation {
		h := a.Compensation
		activity, queue, timeout = h.Operation, h.Queue, h.Timeout
	}
	t := r.c.newTask(a, st, TaskKind(kind), activity, queue, timeout, notBefore)
	return t.TaskID, string(t.ReadyKey())
}

func (r ruleRecorder) RetireTask(taskID, readyKey string) { r.c.retireTask(taskID, readyKey) }

func (r ruleRecorder) RecordRecon(a *definition.Action, st *runstate.StepState, rc decide.Recon) {
	r.c.recordRecon(a, st, rc)
}

func (r ruleRecorder) TakeSlots() { r.c.takeSlots() }

func (r ruleRecorder) Enqueue() { enqueueKeyed(r.c) }

func (r ruleRecorder) Preempt() { r.c.preempt = true }

// Alert raises an alert when, and only if, the decision commits.
func (r ruleRecorder) Alert(name string, attrs ...slog.Attr) {
	r.c.alerts = append(r.c.alerts, pendingAlert{name, attrs})
}
