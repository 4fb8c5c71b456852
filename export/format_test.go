package export_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
)

// An older weftd's outbox entries hold a copy of their event; they export
// beside the references a newer one writes, in order, as the same message.
func TestWorker_OlderEntriesThatCopyTheirEventStillExportBesideReferences(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := be.open(t)
			var refs []ref
			b := &store.Batch{}
			for seq := uint64(1); seq <= 6; seq++ {
				refs = append(refs, ref{"run-0000", seq})
				if seq%2 == 1 { // an older weftd's entry, and no event stored beside it: it is not read
					b.Ops = append(b.Ops, store.Put(export.OutboxKey("run-0000", seq), legacyOutboxValue(t, "run-0000", seq)))
					continue
				}
				b.Ops = append(b.Ops, entryOps(t, "run-0000", seq)...)
			}
			_, err := st.Commit(ctx, b)
			require.NoError(t, err)
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(st, bus, export.Config{})
			require.NoError(t, err)
			drain(t, w)
			msgs := bus.Messages()
			requireAllDelivered(t, st, refs, msgs)
			for i, m := range msgs {
				require.Equal(t, uint64(i+1), m.RunSeq, "in run_seq order")
				var ev map[string]any
				require.NoError(t, json.Unmarshal(m.Event, &ev), "the bus carries the event's JSON")
				require.Equal(t, m.EventID, ev["event_id"])
				require.Equal(t, "StepCompleted", ev["event_type"])
			}
		})
	}
}

// A reference whose event is not stored cannot be published: it is
// dead-lettered as undecodable, and the run's other events go on.
func TestWorker_AReferenceToAMissingEventIsDeadLetteredAsUndecodable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeOutbox(t, st, 1, 3)
	_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(export.OutboxKey("run-0000", 4), outboxValue(t, "run-0000", 4))}})
	require.NoError(t, err)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, stats.Published)
	require.Equal(t, 1, stats.DeadLettered)
	it, err := st.Get(ctx, export.DeadLetterKey("run-0000", 4))
	require.NoError(t, err)
	var d export.DeadLetter
	require.NoError(t, json.Unmarshal(it.Value, &d))
	require.Equal(t, export.ReasonUndecodable, d.Reason)
	require.Contains(t, d.LastError, "not stored")
	require.Equal(t, outboxValue(t, "run-0000", 4), d.RawEntry, "the entry as it was, for replay once repaired")
	require.Len(t, bus.Messages(), len(refs))
	require.Zero(t, countPrefix(t, st, engine.OutboxPrefix()))
}
