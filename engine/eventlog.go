package engine

import (
	"fmt"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The run's log and checkpoint as stored (docs/persisted-format.md): each
// event once, in runcodec's binary form, with its idempotency key's row and,
// when export is on, an outbox entry that refers to it; the checkpoint in
// the same form. Records an older weftd wrote as JSON still decode.

// checkpointPut writes a run's checkpoint.
func checkpointPut(s *runstate.State) store.Op {
	return store.Put(checkpointKey(s.RunID), runcodec.AppendState(nil, s))
}

// decodeCheckpoint decodes a stored checkpoint.
func decodeCheckpoint(runID string, b []byte) (*runstate.State, error) {
	var s runstate.State
	if err := runcodec.DecodeState(b, &s); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", runID, err)
	}
	return &s, nil
}

// appendEvent adds an event to a decision's batch: the event, its
// idempotency key on an absent-condition (docs/semantics.md#event-idempotency-key),
// and, with outbox, a reference for the export worker in the same batch
// (docs/semantics.md#outbox).
func appendEvent(b *store.Batch, tenantID string, ev *runstate.Event, outbox bool) {
	idem := eventIdemKey(ev.RunID, ev.IdempotencyKey)
	b.Conditions = append(b.Conditions, store.IfAbsent(idem))
	b.Ops = append(b.Ops, store.Put(eventKey(ev.RunID, ev.Seq), runcodec.AppendEvent(nil, ev)),
		store.Put(idem, []byte(store.Uint64(ev.Seq))))
	if outbox {
		b.Ops = append(b.Ops, store.Put(outboxKey(ev.RunID, ev.Seq), runcodec.AppendOutboxRef(nil, tenantID)))
	}
}
