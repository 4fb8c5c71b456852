package engine

import (
	"context"
	"encoding/json"
	"fmt"
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
	run := b.submit(seq("a", "b"))
	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `2`)
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: OutboxPrefix()})
	require.NoError(t, err)
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID, PageSize: 100})
	require.NoError(t, err)
	require.Less(t, len(res.Items), len(page.Events), "one outbox entry per decision, not per event")
	resolved, err := ResolveOutbox(b.ctx, st, res.Items)
	require.NoError(t, err)
	var got []OutboxEvent
	for i, it := range res.Items {
		require.True(t, runcodec.IsOutboxRef(it.Value), "the entry refers to its events, it holds no copy")
		require.Less(t, len(it.Value), 16)
		require.NoError(t, resolved[i].Err)
		require.NotEmpty(t, resolved[i].Events)
		require.Equal(t, it.Key, outboxKey(run.RunID, resolved[i].Events[0].RunSeq), "an entry's key names its first event")
		got = append(got, resolved[i].Events...)
	}
	require.Len(t, got, len(page.Events), "every event is exported, once")
	for i, ev := range got {
		require.Equal(t, tenant, ev.TenantID)
		want, err := json.Marshal(page.Events[i])
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(ev.Event), "the bus carries the event's JSON")
		require.Equal(t, page.Events[i].ID, ev.EventID)
		require.Equal(t, page.Events[i].Seq, ev.RunSeq)
		require.Equal(t, page.Events[i].Type, ev.EventType)
		require.Equal(t, run.RunID, ev.RunID)
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
	require.Equal(t, []OutboxEvent{{TenantID: "t", EventID: "e-1", RunID: "r-1", RunSeq: 4, EventType: "RunStarted", Event: event}}, got[0].Events)
}

func TestOutbox_AnEntryThatCannotBeResolvedAnswersItsErrorAlone(t *testing.T) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b := &store.Batch{}
	for seq := uint64(2); seq <= 4; seq++ {
		ev := runstate.Event{Type: runstate.EvRunStarted, ID: fmt.Sprintf("e-%d", seq), RunID: "r-1", Seq: seq, IdempotencyKey: "k"}
		b.Ops = append(b.Ops, store.Put(eventKey("r-1", seq), runcodec.AppendEvent(nil, &ev)))
	}
	_, err := st.Commit(ctx, b)
	require.NoError(t, err)
	one := runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t"})
	got, err := ResolveOutbox(ctx, st, []store.Item{
		{Key: outboxKey("r-1", 1), Value: one}, // its event is not stored
		{Key: outboxKey("r-1", 2), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: 4})}, // resolves
		{Key: outboxKey("r-1", 3), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: 5})}, // 5 is missing
		{Key: outboxKey("r-1", 6), Value: []byte("junk")},                                                               // poison
		{Key: []byte("ob:malformed"), Value: one},
		{Key: outboxKey("r-1", 7), Value: []byte(`{"tenant_id":"t","event":{"event_id":"x"}}`)}, // no envelope
		{Key: outboxKey("r-1", 8), Value: runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: "t", LastSeq: 1 << 40})},
	})
	require.NoError(t, err)
	require.Len(t, got, 7)
	require.ErrorContains(t, got[0].Err, "not stored")
	require.NoError(t, got[1].Err)
	require.Len(t, got[1].Events, 3)
	for i, ev := range got[1].Events {
		require.Equal(t, uint64(2+i), ev.RunSeq, "in run_seq order")
		require.Equal(t, fmt.Sprintf("e-%d", 2+i), ev.EventID)
	}
	require.ErrorContains(t, got[2].Err, "run_seq 5")
	for _, i := range []int{3, 4, 5, 6} {
		require.Error(t, got[i].Err, "entry %d", i)
		require.Empty(t, got[i].Events)
	}
}
