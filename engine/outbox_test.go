package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

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
	for i, it := range res.Items {
		var entry OutboxEntry
		require.NoError(t, json.Unmarshal(it.Value, &entry))
		require.Equal(t, tenant, entry.TenantID)
		var ev runstate.Event
		require.NoError(t, json.Unmarshal(entry.Event, &ev))
		require.Equal(t, page.Events[i].ID, ev.ID)
		require.Equal(t, page.Events[i].Seq, ev.Seq)
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
