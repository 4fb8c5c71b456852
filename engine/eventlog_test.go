package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// asOlderWeftd rewrites a run's checkpoint and events in the JSON an older
// weftd stored them as.
func asOlderWeftd(t *testing.T, st store.Store, runID string) {
	t.Helper()
	res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: keyspace.Run.KeyPrefix(runID), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	b := &store.Batch{}
	for _, it := range res.Items {
		var v any
		switch {
		case runcodec.IsEventGroup(it.Value): // an older weftd stored each event alone
			evs, err := runcodec.DecodeEvents(it.Value, runID, nil)
			require.NoError(t, err)
			for _, ev := range evs {
				js, err := json.Marshal(ev)
				require.NoError(t, err)
				b.Ops = append(b.Ops, store.Put(runlog.EventKey(runID, ev.Seq), js))
			}
			continue
		case len(it.Value) > 0 && it.Value[0] == runcodec.FormatEvent:
			var ev runstate.Event
			require.NoError(t, runcodec.DecodeEvent(it.Value, &ev))
			v = ev
		case runcodec.IsCheckpoint(it.Value):
			var s runstate.State
			require.NoError(t, runcodec.DecodeState(it.Value, &s))
			v = &s
		default:
			continue
		}
		js, err := json.Marshal(v)
		require.NoError(t, err)
		b.Ops = append(b.Ops, store.Put(it.Key, js))
	}
	require.Len(t, b.Ops, 1+int(mustLastSeq(t, st, runID)), "the checkpoint and every event")
	_, err = st.Commit(t.Context(), b)
	require.NoError(t, err)
}

func mustLastSeq(t *testing.T, st store.Store, runID string) uint64 {
	item, err := st.Get(t.Context(), runlog.CheckpointKey(runID))
	require.NoError(t, err)
	s, err := runlog.DecodeCheckpoint(runID, item.Value)
	require.NoError(t, err)
	return s.LastSeq
}

func TestPersistedFormat_ARunAnOlderWeftdStoredAsJSONLoadsAndGoesOn(t *testing.T) {
	st := memstore.New(memstore.Config{})
	older := setupWith(t, st)
	run := older.submit(seq("a", "b"))
	older.complete(older.poll("act-a"), `{"a":1}`)
	before := older.run(run.RunID)
	eventsBefore, err := older.eng.ListEvents(older.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	asOlderWeftd(t, st, run.RunID)

	b := setupWith(t, st) // a newer weftd: no cache, only the store
	require.Equal(t, before, b.run(run.RunID), "the JSON checkpoint reads as it was")
	events, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Equal(t, eventsBefore.Events, events.Events, "the JSON events read as they were")

	b.complete(b.poll("act-b"), `{"b":2}`) // decided on the JSON checkpoint, written in binary
	after := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, after.Status)
	item, err := st.Get(b.ctx, runlog.CheckpointKey(run.RunID))
	require.NoError(t, err)
	require.True(t, runcodec.IsCheckpoint(item.Value), "written in binary")
	all, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Equal(t, eventsBefore.Events, all.Events[:len(eventsBefore.Events)], "the log reads across both formats")
	require.Equal(t, after.LastEventSeq, all.Events[len(all.Events)-1].Seq)
}

// asV1Groups rewrites a run's event groups in the form an older weftd
// stored them (runcodec.FormatEventGroup: each event's own stored form),
// and answers how many it rewrote.
func asV1Groups(t *testing.T, st store.Store, runID string) int {
	t.Helper()
	res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: runlog.EventPrefix(runID), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	b := &store.Batch{}
	for _, it := range res.Items {
		if f := runcodec.Format(it.Value); f != runcodec.FormatEventDeltas && f != runcodec.FormatEventDeltasIDs && f != runcodec.FormatEventDeltasRun {
			continue
		}
		v1 := []byte{runcodec.FormatEventGroup}
		require.NoError(t, runcodec.EachStoredEvent(it.Value, runID, func(form []byte) error {
			v1 = protowire.AppendTag(v1, 1, protowire.BytesType)
			v1 = protowire.AppendBytes(v1, form)
			return nil
		}))
		b.Ops = append(b.Ops, store.Put(it.Key, v1))
	}
	_, err = st.Commit(t.Context(), b)
	require.NoError(t, err)
	return len(b.Ops)
}

// A run whose event groups an older weftd stored (0x07) lists the same
// events as when they are stored as what they do not share (0x09), and a
// newer weftd goes on appending to it.
func TestPersistedFormat_EventGroupsAnOlderWeftdStoredListAsTheSameEvents(t *testing.T) {
	st := memstore.New(memstore.Config{})
	older := setupWith(t, st)
	run := older.submit(seq("a", "b"))
	older.complete(older.poll("act-a"), `{"a":1}`)
	before, err := older.eng.ListEvents(older.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.NotZero(t, asV1Groups(t, st, run.RunID), "the run has groups")

	b := setupWith(t, st) // a newer weftd: no cache, only the store
	events, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Equal(t, before.Events, events.Events, "0x07 groups read as the 0x09 ones did")
	b.complete(b.poll("act-b"), `{"b":2}`)
	all, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Equal(t, before.Events, all.Events[:len(before.Events)], "the log reads across both formats")
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// TestEvents_AnEventsIDIsTheOneItsRunAndRunSeqDerive: every event a run
// appends has runstate.EventID(run_id, run_seq) for its event_id, read
// back from the store by a process that never saw it (docs/semantics.md#events).
func TestEvents_AnEventsIDIsTheOneItsRunAndRunSeqDerive(t *testing.T) {
	st := memstore.New(memstore.Config{})
	a := setupWith(t, st)
	run := a.submit(seq("a", "b"))
	a.complete(a.poll("act-a"), `{"a":1}`)
	a.complete(a.poll("act-b"), `{"b":2}`)
	b := setupWith(t, st)
	events, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Greater(t, len(events.Events), 6)
	for _, ev := range events.Events {
		require.Equal(t, runstate.EventID(run.RunID, ev.Seq), ev.ID, "run_seq %d", ev.Seq)
	}
}
