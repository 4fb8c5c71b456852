package runlog

import (
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// olderAppend adds a decision's events to b as a weftd before the run's
// one entry did: its records, and one outbox entry per record,
// ob:{run}:{first run_seq}, referring to it (runcodec.OutboxRef).
func olderAppend(b *store.Batch, tenantID string, events []runstate.Event, keyRows bool) Appended {
	a := AppendEvents(b, tenantID, events, NoOutbox, keyRows)
	for first := 0; first < len(events); {
		last := entryEnd(events, first)
		ref := runcodec.OutboxRef{TenantID: tenantID}
		if last > first {
			ref.LastSeq, ref.Grouped = events[last].Seq, true
		}
		b.Ops = append(b.Ops, store.Put(OutboxKey(events[first].RunID, events[first].Seq), runcodec.AppendOutboxRef(nil, ref)))
		first = last + 1
	}
	return a
}
