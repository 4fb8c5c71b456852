package engine

import (
	"slices"
	"sync"

	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// decisionArena is the room a decision records in: its events, its writes
// and conditions before they become the batch's, and the task records it
// notes for the cache. A decision takes one when it starts (newChange) and
// gives it back once its commit has settled (decideOnce), so that its
// successors record in the same memory rather than in new allocations — an
// event is the largest value a decision makes.
//
// The batch itself (its conditions and writes) and its checkpoint's value
// are the arena's too, kept with their capacity from one decision to the
// next: a store copies what it keeps of a batch before Commit returns
// (store.Store), the outbox cache and the task cache read the committed
// batch before the arena is given back, and keep only the events' values,
// which the batch encodes into buffers of its own (runlog.AppendEvents).
//
// Nothing else outside the recorder ever holds the arena's memory: the
// write latency budget only reads the events' types, dispatch only counts
// them, and the cache copies the task records it keeps
// (cache.Records.TasksCommitted). A recorder whose events, writes,
// conditions or task records outgrow the arena goes on in ordinary memory,
// which is never recycled.
type decisionArena struct {
	events   [eventsPerDecision]runstate.Event
	ops      [opsPerDecision]store.Op
	conds    [condsPerDecision]store.Condition
	taskPuts [taskPutsPerDecision]cache.NotedTask
	// batch is the decision's batch (batchOf); checkpoint, the
	// memory its checkpoint's value is encoded in.
	batch      store.Batch
	checkpoint []byte
}

// opsPerDecision, condsPerDecision and taskPutsPerDecision are room for the
// writes, conditions and task records of most decisions: a completion that
// hands the next task off writes both tasks, their attempt timers and a
// queue's entries.
const (
	opsPerDecision      = 8
	condsPerDecision    = 4
	taskPutsPerDecision = 2
)

// keptBatchOps and keptCheckpointBytes bound the batch and checkpoint
// memory an arena keeps for the next decision: a rare large decision's
// is left to the collector.
const (
	keptBatchOps        = 256
	keptCheckpointBytes = 64 << 10
)

// arenas recycles decisions' arenas, per engine.
type arenas struct {
	pool sync.Pool
	// poison, for tests of this package only, fills a given-back arena with
	// events, writes, conditions and task records no decision makes, where
	// clearing it would hide a use after it was given back.
	poison bool
}

// take answers an arena for a decision: recycled, or new.
func (a *arenas) take() *decisionArena {
	if d, ok := a.pool.Get().(*decisionArena); ok {
		return d
	}
	return new(decisionArena)
}

// give takes back an arena whose decision's commit has settled: cleared (or
// poisoned), so that it holds nothing of that decision.
func (a *arenas) give(d *decisionArena) {
	if a.poison {
		d.fillWithPoison()
	} else {
		d.clear()
	}
	a.pool.Put(d)
}

// clear empties the arena, keeping the capacity of its batch's slices and
// its checkpoint's memory within bounds.
func (d *decisionArena) clear() {
	conds, ops, ckpt := d.batch.Conditions, d.batch.Ops, d.checkpoint
	*d = decisionArena{}
	clear(conds)
	clear(ops)
	if cap(ops) <= keptBatchOps && cap(conds) <= keptBatchOps {
		d.batch.Conditions, d.batch.Ops = conds[:0], ops[:0]
	}
	if cap(ckpt) <= keptCheckpointBytes {
		d.checkpoint = ckpt[:0]
	}
}

// poisonType is the type of every event, and poisonKey the key of every
// write, condition and task record, a poisoned arena holds: no decision
// makes them, and no event type has that name.
const poisonType = "RecycledArenaPoison"

var poisonKey = []byte("recycled-arena-poison")

// fillWithPoison overwrites everything in the arena with poison.
func (d *decisionArena) fillWithPoison() {
	for i := range d.events {
		d.events[i] = runstate.Event{Type: poisonType, RunID: poisonType, StepID: poisonType, Seq: 1 << 62,
			Data: runstate.EventData{Output: []byte(poisonType)}}
	}
	for i := range d.ops {
		d.ops[i] = store.Put(poisonKey, poisonKey)
	}
	for i := range d.conds {
		d.conds[i] = store.IfAbsent(poisonKey)
	}
	for i := range d.taskPuts {
		d.taskPuts[i] = cache.NotedTask{Key: poisonKey, Record: record.Task{TaskID: poisonType}, Body: poisonKey}
	}
	for i := range d.batch.Conditions {
		d.batch.Conditions[i] = store.IfAbsent(poisonKey)
	}
	for i := range d.batch.Ops {
		d.batch.Ops[i] = store.Put(poisonKey, poisonKey)
	}
	ckpt := d.checkpoint[:cap(d.checkpoint)]
	for i := range ckpt {
		ckpt[i] = poisonKey[i%len(poisonKey)]
	}
	d.batch.Conditions, d.batch.Ops, d.checkpoint = d.batch.Conditions[:0], d.batch.Ops[:0], ckpt[:0]
}

// newBatch answers the decision's batch, with room for conds conditions and
// ops writes: the arena's, when the recorder has one.
func newBatch(c *change, conds, ops int) *store.Batch {
	if c.arena == nil {
		return &store.Batch{Conditions: make([]store.Condition, 0, conds), Ops: make([]store.Op, 0, ops)}
	}
	b := &c.arena.batch
	b.Conditions, b.Ops = slices.Grow(b.Conditions[:0], conds), slices.Grow(b.Ops[:0], ops)
	return b
}

// putCheckpoint is the write of the decision's checkpoint, encoded in the
// arena's memory when the recorder has one (which keeps it, grown, for the
// next decision).
func putCheckpoint(c *change, key []byte) store.Op {
	if c.arena == nil {
		return runlog.PutCheckpointAt(key, c.state)
	}
	op := runlog.PutCheckpointIn(c.arena.checkpoint, key, c.state)
	c.arena.checkpoint = op.Value[:0]
	return op
}

// useArena makes the recorder record in arena, from empty.
func useArena(c *change, arena *decisionArena) {
	c.arena = arena
	c.events, c.ops, c.conds, c.taskPuts = arena.events[:0], arena.ops[:0], arena.conds[:0], arena.taskPuts[:0]
}

// giveArenaBack gives the recorder's arena back once its decision's commit
// has settled: the recorder then records nothing, and holds none of the
// arena's memory.
func giveArenaBack(c *change) {
	if c.arena == nil {
		return
	}
	arena := c.arena
	c.arena, c.events, c.ops, c.conds, c.taskPuts = nil, nil, nil, nil, nil
	c.appended = runlog.Appended{} // it names the events
	c.e.arenas.give(arena)
}
