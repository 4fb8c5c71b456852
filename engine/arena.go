package engine

import (
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
// Nothing outside the recorder ever holds the arena's memory: the batch
// copies the writes and conditions into slices of its own and encodes the
// events into buffers of its own (recorder.batch), the write latency
// budget only reads the events' types, dispatch only counts them, and the
// cache copies the task records it keeps (cache.Records.TasksCommitted). A
// recorder whose events, writes, conditions or task records outgrow the
// arena goes on in ordinary memory, which is never recycled.
type decisionArena struct {
	events   [eventsPerDecision]runstate.Event
	ops      [opsPerDecision]store.Op
	conds    [condsPerDecision]store.Condition
	taskPuts [taskPutsPerDecision]cache.NotedTask
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
		*d = decisionArena{}
	}
	a.pool.Put(d)
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
}

// useArena makes the recorder record in arena, from empty.
func (c *recorder) useArena(arena *decisionArena) {
	c.arena = arena
	c.events, c.ops, c.conds, c.taskPuts = arena.events[:0], arena.ops[:0], arena.conds[:0], arena.taskPuts[:0]
}

// giveArenaBack gives the recorder's arena back once its decision's commit
// has settled: the recorder then records nothing, and holds none of the
// arena's memory.
func (c *recorder) giveArenaBack() {
	if c.arena == nil {
		return
	}
	arena := c.arena
	c.arena, c.events, c.ops, c.conds, c.taskPuts = nil, nil, nil, nil, nil
	c.appended = runlog.Appended{} // it names the events
	c.e.arenas.give(arena)
}
