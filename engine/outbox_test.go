package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/faultstore"
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

// ackedStore records the version of every outbox entry a Commit answered
// as committed (an error, an outcome unknown among them, records none).
type ackedStore struct {
	store.Store
	mu    sync.Mutex
	acked map[string]uint64
}

func (s *ackedStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	res, err := s.Store.Commit(ctx, b)
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, op := range b.Ops {
		if bytes.HasPrefix(op.Key, runlog.OutboxPrefix()) {
			s.acked[string(op.Key)] = res.Versions[i]
		}
	}
	return res, nil
}

// blindStore finds no key: what resolves through it came from the cache.
type blindStore struct{ store.Store }

func (blindStore) Get(context.Context, []byte) (store.Item, error) {
	return store.Item{}, store.ErrNotFound
}

func TestOutboxCache_HoldsOnlyWhatACommitAnsweredAsCommitted(t *testing.T) {
	fs, err := faultstore.New(memstore.New(memstore.Config{}), faultstore.Config{})
	require.NoError(t, err)
	st := &ackedStore{Store: fs, acked: map[string]uint64{}}
	cache := runlog.NewOutboxCache(0, 0)
	b := setupWith(t, st, func(c *Config) { c.Outbox, c.OutboxCache = true, cache })

	committed := b.submit(seq("a", "b"))
	fs.InjectNext(faultstore.AfterCommit) // written, but its outcome unknown to the engine
	unknown := b.submit(seq("a"))
	task := b.poll("act-a")
	fs.InjectNext(faultstore.BeforeCommit) // nothing written
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
	require.Error(t, err)
	b.complete(task, `1`)
	fs.InjectNext(faultstore.Retryable)
	b.complete(b.poll("act-a"), `2`)
	b.complete(b.poll("act-b"), `3`)

	res, err := fs.Scan(b.ctx, &store.ScanParams{Prefix: runlog.OutboxPrefix()})
	require.NoError(t, err)
	resolved, err := cache.ResolveOutbox(b.ctx, blindStore{fs}, res.Items)
	require.NoError(t, err)
	served := map[string]bool{}
	for i, it := range res.Items {
		if resolved[i].Err != nil {
			continue // not held: it would have been read from the store
		}
		served[string(it.Key)] = true
		v, ok := st.acked[string(it.Key)]
		require.True(t, ok, "%s served from memory, but no commit of it was answered as committed", it.Key)
		require.Equal(t, v, it.Version)
	}
	for key, v := range st.acked {
		require.True(t, served[key], "%s (version %d) was committed and is held", key, v)
	}
	unknownEntries := 0 // its submission's entry: the run's first
	for _, it := range res.Items {
		if bytes.Equal(it.Key, runlog.OutboxKey(unknown.RunID, 1)) {
			unknownEntries++
			require.False(t, served[string(it.Key)], "an entry whose commit's outcome was unknown is never served from memory")
		}
	}
	require.Equal(t, 1, unknownEntries, "the commit whose outcome was unknown did write its entry")
	require.NotEmpty(t, served)
	require.NotEqual(t, committed.RunID, unknown.RunID)
}
