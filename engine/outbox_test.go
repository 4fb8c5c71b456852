package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
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
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: runlog.OutboxPrefix()})
	require.NoError(t, err)
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID, PageSize: 100})
	require.NoError(t, err)
	require.Less(t, len(res.Items), len(page.Events), "one outbox entry per decision, not per event")
	resolved, err := runlog.ResolveOutbox(b.ctx, st, res.Items)
	require.NoError(t, err)
	var got []runlog.OutboxEvent
	for i, it := range res.Items {
		require.True(t, runcodec.IsOutboxRef(it.Value), "the entry refers to its events, it holds no copy")
		require.Less(t, len(it.Value), 16)
		require.NoError(t, resolved[i].Err)
		require.NotEmpty(t, resolved[i].Events)
		require.Equal(t, it.Key, runlog.OutboxKey(run.RunID, resolved[i].Events[0].RunSeq), "an entry's key names its first event")
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
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: runlog.OutboxPrefix()})
	require.NoError(t, err)
	require.Empty(t, res.Items)
}
