package engine

import (
	"fmt"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The run's log and checkpoint as stored (docs/persisted-format.md): each
// event once, in runcodec's binary form, with its idempotency key's row and,
// when export is on, one outbox entry per decision that refers to its
// events; the checkpoint in the same form. Records an older weftd wrote as
// JSON still decode.

// checkpointPut writes a run's checkpoint.
func checkpointPut(runID string, s *runstate.State) store.Op {
	return store.Put(checkpointKey(runID), runcodec.AppendState(make([]byte, 0, 128+192*len(s.Steps)), s))
}

// decodeCheckpoint decodes a stored checkpoint.
func decodeCheckpoint(runID string, b []byte) (*runstate.State, error) {
	var s runstate.State
	if err := runcodec.DecodeState(b, &s); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", runID, err)
	}
	return &s, nil
}

// appendEvents adds a decision's events to its batch: each event, and its
// idempotency key on an absent-condition (docs/semantics.md#event-idempotency-key);
// with outbox, one outbox entry for the export worker in the same batch
// (docs/semantics.md#outbox), which refers to the events instead of copying
// them: ob:{run}:{first run_seq} names the run's events up to the last.
func appendEvents(b *store.Batch, tenantID string, events []runstate.Event, outbox bool) {
	for i := range events {
		ev := &events[i]
		idem := eventIdemKey(ev.RunID, ev.IdempotencyKey)
		b.Conditions = append(b.Conditions, store.IfAbsent(idem))
		b.Ops = append(b.Ops, store.Put(eventKey(ev.RunID, ev.Seq), runcodec.AppendEvent(make([]byte, 0, 256), ev)),
			store.Put(idem, []byte(store.Uint64(ev.Seq))))
	}
	if !outbox {
		return
	}
	for first := 0; first < len(events); {
		last := first // a decision's events have consecutive run_seqs; any gap starts an entry of its own
		for last+1 < len(events) && events[last+1].Seq == events[last].Seq+1 {
			last++
		}
		ref := runcodec.OutboxRef{TenantID: tenantID}
		if last > first {
			ref.LastSeq = events[last].Seq
		}
		b.Ops = append(b.Ops, store.Put(outboxKey(events[first].RunID, events[first].Seq), runcodec.AppendOutboxRef(nil, ref)))
		first = last + 1
	}
}
