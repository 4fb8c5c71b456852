package engine

import (
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/store"
)

// batchOf answers the conditional batch for a checkpoint read at version. It
// validates every event first (validateEvents) and answers no batch at all
// when one is invalid.
func batchOf(c *change, version uint64) (*store.Batch, error) {
	if err := validateEvents(c); err != nil {
		return nil, err
	}
	ckpt := runlog.CheckpointKey(c.run.RunID) // the fence's key and the checkpoint's
	fence := store.IfVersion(ckpt, version)
	if c.newRun {
		fence = store.IfAbsent(ckpt)
	}
	keyRows := !c.state.KeysTracked
	writes, eventConds := runlog.EventWrites(c.events, c.outbox, keyRows)
	// the checkpoint, the events' writes, the other writes
	b := newBatch(c, 1+len(c.conds)+eventConds, 1+writes+len(c.ops))
	b.Conditions = append(append(b.Conditions, fence), c.conds...)
	if c.state.KeysTracked {
		c.state.NoteKeys(c.events) // the checkpoint's record of the keys appended
	}
	if c.dirty && !c.removesRun {
		b.Ops = append(b.Ops, putCheckpoint(c, ckpt))
	}
	c.appended = runlog.AppendEvents(b, c.run.TenantID, c.events, c.outbox, keyRows)
	b.Ops = appendLastWrites(b.Ops, c.ops)
	return b, nil
}

// validateEvents checks every event of a decision against the proto's
// rules (eventpb.Check) before anything is written
// (docs/semantics.md#event-validation): one invalid event fails the whole
// decision, so none of its events, checkpoint or records is persisted.
func validateEvents(c *change) error {
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
