package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// A run has one outbox entry, ob:{run}:, naming its events from its first
// unexported run_seq: its decisions after the first write none.
func TestOutbox_ARunHasOneEntryNamingEveryEventItAppended(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	b.eng.cfg.Outbox = true
	run := b.submit(seq("a", "b"))
	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `2`)
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: runlog.OutboxPrefix()})
	require.NoError(t, err)
	require.Len(t, res.Items, 1, "one entry for the run")
	require.Equal(t, runlog.RunOutboxKey(run.RunID), res.Items[0].Key)
	entry, err := runlog.ParseRunEntry(res.Items[0])
	require.NoError(t, err)
	require.Equal(t, runlog.RunEntry{RunID: run.RunID, TenantID: tenant, From: 1}, entry)
	require.Equal(t, uint64(1), res.Items[0].Version, "put once, never written again")
	page, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run.RunID, PageSize: 100})
	require.NoError(t, err)
	resolved, err := (*runlog.OutboxCache)(nil).ResolveRuns(b.ctx, st, []runlog.RunRequest{{RunID: run.RunID, TenantID: tenant, From: entry.From}})
	require.NoError(t, err)
	require.NoError(t, resolved[0].Err)
	got := resolved[0].Events
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

// hookStore runs hook once, before the first commit that match answers
// true for, and passes everything else through.
type hookStore struct {
	store.Store
	mu    sync.Mutex
	match func(*store.Batch) bool
	hook  func()
}

func (s *hookStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.mu.Lock()
	hook := s.hook
	if hook != nil && s.match != nil && s.match(b) {
		s.hook = nil
	} else {
		hook = nil
	}
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.Store.Commit(ctx, b)
}

// conditionOn answers a match for a batch with a condition of kind on key.
func conditionOn(kind store.ConditionKind, key []byte) func(*store.Batch) bool {
	return func(b *store.Batch) bool {
		for _, c := range b.Conditions {
			if c.Kind == kind && bytes.Equal(c.Key, key) {
				return true
			}
		}
		return false
	}
}

// deletes answers a match for a batch that deletes key.
func deletes(key []byte) func(*store.Batch) bool {
	return func(b *store.Batch) bool {
		for _, op := range b.Ops {
			if op.Kind == store.OpDelete && bytes.Equal(op.Key, key) {
				return true
			}
		}
		return false
	}
}

// requireExportedInOrder drains the worker and checks that the bus got
// every event of the run at least once, each first time in run_seq order,
// and that the outbox is empty.
func requireExportedInOrder(t *testing.T, b *bundle, st store.Store, w *export.Worker, bus *export.MemoryBus, runID string) {
	t.Helper()
	for range 20 {
		stats, err := w.RunOnce(b.ctx)
		require.NoError(t, err)
		if stats.Seen == 0 {
			break
		}
	}
	res, err := st.Scan(b.ctx, &store.ScanParams{Prefix: runlog.OutboxPrefix()})
	require.NoError(t, err)
	require.Empty(t, res.Items, "the outbox is empty once exported")
	events := b.runEvents(runID)
	var first []uint64
	seen := map[uint64]bool{}
	for _, m := range bus.Messages() {
		if m.RunID == runID && !seen[m.RunSeq] {
			seen[m.RunSeq] = true
			first = append(first, m.RunSeq)
		}
	}
	want := make([]uint64, len(events))
	for i, ev := range events {
		want[i] = ev.Seq
	}
	require.Equal(t, want, first, "every event published, in run_seq order")
}

// outboxBackends are the stores the outbox races run on.
var outboxBackends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"memory", func(*testing.T) store.Store { return memstore.New(memstore.Config{}) }},
	{"postgresql", func(t *testing.T) store.Store { return sqltest.Open(t, sqltest.NewSchema(t)) }},
}

// A decision that commits after the export worker read a run's events and
// before its deletion of the run's entry moves the run's checkpoint: the
// deletion fails, the entry stays, and the next pass publishes the
// decision's events — none is lost, and the order holds.
func TestOutbox_ADecisionBetweenTheExportersReadAndItsDeletionIsPublishedNext(t *testing.T) {
	for _, be := range outboxBackends {
		t.Run(be.name, func(t *testing.T) {
			hs := &hookStore{Store: be.open(t)}
			cache := runlog.NewOutboxCache(0, 0)
			b := setupWith(t, hs, func(c *Config) { c.Outbox, c.OutboxCache = true, cache })
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(hs, bus, export.Config{OutboxCache: cache})
			require.NoError(t, err)
			run := b.submit(seq("a", "b"))
			task := b.poll("act-a")
			put, err := hs.Get(b.ctx, runlog.RunOutboxKey(run.RunID))
			require.NoError(t, err)
			hs.match, hs.hook = deletes(runlog.RunOutboxKey(run.RunID)), func() { b.complete(task, `1`) }
			stats, err := w.RunOnce(b.ctx)
			require.NoError(t, err)
			require.Positive(t, stats.Published)
			entry, err := hs.Get(b.ctx, runlog.RunOutboxKey(run.RunID))
			require.NoError(t, err, "the deletion lost to the decision: the entry stays")
			require.Equal(t, put.Version, entry.Version, "as the submission put it")
			b.complete(b.poll("act-b"), `2`)
			requireExportedInOrder(t, b, hs, w, bus, run.RunID)
		})
	}
}

// A decision that takes its run's entry for there (its process's cache says
// so) while the export worker — another process's — deleted it loses the
// race on the entry's condition, is made again, and puts the entry anew
// from its own first event: none is lost.
func TestOutbox_ADecisionRacingTheExportersDeletionIsMadeAgainAndLosesNoEvent(t *testing.T) {
	for _, be := range outboxBackends {
		t.Run(be.name, func(t *testing.T) {
			hs := &hookStore{Store: be.open(t)}
			b := setupWith(t, hs, func(c *Config) { c.Outbox, c.OutboxCache = true, runlog.NewOutboxCache(0, 0) })
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(hs, bus, export.Config{}) // another process's: its own cache
			require.NoError(t, err)
			run := b.submit(seq("a", "b"))
			key := runlog.RunOutboxKey(run.RunID)
			exported := false
			hs.match = conditionOn(store.CondPresent, key)
			hs.hook = func() {
				_, err := w.RunOnce(b.ctx) // publishes the run's events so far and deletes its entry
				require.NoError(t, err)
				exported = true
			}
			b.complete(b.poll("act-a"), `1`)
			require.True(t, exported, "the decision asserted the entry the worker then deleted")
			entry, err := hs.Get(b.ctx, key)
			require.NoError(t, err, "made again, the decision put the entry")
			got, err := runlog.ParseRunEntry(entry)
			require.NoError(t, err)
			require.Greater(t, got.From, uint64(1), "from the decision's first event")
			b.complete(b.poll("act-b"), `2`)
			requireExportedInOrder(t, b, hs, w, bus, run.RunID)
		})
	}
}

// A decision whose process takes its run for having no entry while another
// engine put one loses the race on the entry's absence, and made again
// asserts it: the entry keeps naming the run's events from its first.
func TestOutbox_ADecisionThatTakesAnEntryForAbsentIsMadeAgainAndKeepsIt(t *testing.T) {
	st := memstore.New(memstore.Config{})
	cache := runlog.NewOutboxCache(0, 0)
	b := setupWith(t, st, func(c *Config) { c.Outbox, c.OutboxCache = true, cache })
	run := b.submit(seq("a"))
	cache.Exported(run.RunID) // wrong: the entry is there
	b.complete(b.poll("act-a"), `1`)
	entry, err := st.Get(b.ctx, runlog.RunOutboxKey(run.RunID))
	require.NoError(t, err)
	got, err := runlog.ParseRunEntry(entry)
	require.NoError(t, err)
	require.Equal(t, uint64(1), got.From)
	require.Equal(t, uint64(1), entry.Version, "not written again")
}

// Decisions and an export worker running at once, in every interleaving
// the scheduler makes — the worker deleting runs' entries as their next
// decisions assert them, in this process (one cache) and as another
// process (its own) — lose no event and keep each run's order.
func TestOutbox_DecisionsAndAConcurrentExporterLoseNoEvent(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared-cache=%v", shared), func(t *testing.T) {
			st := memstore.New(memstore.Config{})
			cache := runlog.NewOutboxCache(0, 0)
			b := setupWith(t, st, func(c *Config) { c.Outbox, c.OutboxCache = true, cache })
			workerCache := cache
			if !shared {
				workerCache = runlog.NewOutboxCache(0, 0)
			}
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(st, bus, export.Config{OutboxCache: workerCache, Linger: -1, PollInterval: time.Millisecond, BatchSize: 4})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(b.ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = w.Run(ctx) }()
			var runs []string
			for range 20 {
				runs = append(runs, b.submit(seq("a", "b", "c")).RunID)
			}
			for _, act := range []string{"act-a", "act-b", "act-c"} {
				for range runs {
					b.complete(b.poll(act), `1`)
				}
			}
			cancel()
			<-done
			for _, id := range runs {
				requireExportedInOrder(t, b, st, w, bus, id)
			}
		})
	}
}
