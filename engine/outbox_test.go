package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

func TestOutbox_EveryAppendedEventIsEnqueuedInTheSameBatch(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	b.eng.cfg.Outbox = true
	run := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `1`)
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: OutboxPrefix()})
	require.NoError(t, err)
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID, PageSize: 100})
	require.NoError(t, err)
	require.Len(t, res.Items, len(page.Events), "one outbox entry per event")
	resolved, err := ResolveOutbox(b.ctx, st, res.Items)
	require.NoError(t, err)
	for i, it := range res.Items {
		require.True(t, runcodec.IsOutboxRef(it.Value), "the entry refers to its event, it holds no copy")
		require.Less(t, len(it.Value), 16)
		got := resolved[i]
		require.NoError(t, got.Err)
		require.Equal(t, tenant, got.TenantID)
		want, err := json.Marshal(page.Events[i])
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got.Event), "the bus carries the event's JSON")
		require.Equal(t, page.Events[i].ID, got.EventID)
		require.Equal(t, page.Events[i].Seq, got.RunSeq)
		require.Equal(t, page.Events[i].Type, got.EventType)
		require.Equal(t, run.RunID, got.RunID)
	}
}

func TestOutbox_OffWritesNoEntries(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	b.submit(seq("a"))
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: OutboxPrefix()})
	require.NoError(t, err)
	require.Empty(t, res.Items)
}

func TestOutbox_AnOlderEntryResolvesFromTheCopyItHoldsByteForByte(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	event := []byte(`{"event_type":"RunStarted","event_id":"e-1","run_id":"r-1","run_seq":4,"data":{"reason":"<b>&"}}`)
	old := append(append([]byte(`{"tenant_id":"t","event":`), event...), '}') // as an older weftd wrote it
	got, err := ResolveOutbox(ctx, st, []store.Item{{Key: outboxKey("r-1", 4), Value: old}})
	require.NoError(t, err)
	require.NoError(t, got[0].Err)
	require.Equal(t, OutboxEvent{TenantID: "t", EventID: "e-1", RunID: "r-1", RunSeq: 4, EventType: "RunStarted", Event: event}, got[0])
}

func TestOutbox_AnEntryThatCannotBeResolvedAnswersItsErrorAlone(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	ev := runstate.Event{Type: runstate.EvRunStarted, ID: "e-2", RunID: "r-1", Seq: 2, IdempotencyKey: "k"}
	_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(eventKey("r-1", 2), runcodec.AppendEvent(nil, &ev))}})
	require.NoError(t, err)
	ref := runcodec.AppendOutboxRef(nil, "t")
	got, err := ResolveOutbox(ctx, st, []store.Item{
		{Key: outboxKey("r-1", 1), Value: ref},            // its event is not stored
		{Key: outboxKey("r-1", 2), Value: ref},            // resolves
		{Key: outboxKey("r-1", 3), Value: []byte("junk")}, // poison
		{Key: []byte("ob:malformed"), Value: ref},
		{Key: outboxKey("r-1", 5), Value: []byte(`{"tenant_id":"t","event":{"event_id":"x"}}`)}, // no envelope
	})
	require.NoError(t, err)
	require.Len(t, got, 5)
	require.ErrorContains(t, got[0].Err, "not stored")
	require.NoError(t, got[1].Err)
	require.Equal(t, "e-2", got[1].EventID)
	for _, i := range []int{2, 3, 4} {
		require.Error(t, got[i].Err, "entry %d", i)
	}
}
