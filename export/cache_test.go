package export_test

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
)

// eventReads counts the reads of event records (wf:…:ev:…): each Get of
// one and each Scan of a run's. It hides a store's GetMany, so that
// store.GetMany reads one Get at a time.
type eventReads struct {
	store.Store
	n atomic.Int64
}

func isEventKey(key []byte) bool {
	return bytes.HasPrefix(key, keyspace.Run.KeyPrefix()) && bytes.Contains(key, []byte(":ev:"))
}

func (s *eventReads) Get(ctx context.Context, key []byte) (store.Item, error) {
	if isEventKey(key) {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, key)
}

func (s *eventReads) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if isEventKey(p.Prefix) {
		s.n.Add(1)
	}
	return s.Store.Scan(ctx, p)
}

// writeCommitted commits, as the engine does, decisions of perDecision
// events each on runs runs — each with the run's checkpoint, the first
// putting the run's outbox entry and the others asserting it — and notes
// in cache, as the engine does once a commit succeeded, those for which
// noted answers true (nil cache: none). It answers every ref written.
func writeCommitted(t *testing.T, st store.Store, cache *runlog.OutboxCache, runs, decisions, perDecision int, noted func(i int) bool) []ref {
	t.Helper()
	var refs []ref
	i := 0
	for r := range runs {
		run := fmt.Sprintf("run-%04d", r)
		seq := uint64(0)
		for d := range decisions {
			var events []runstate.Event
			for range perDecision {
				seq++
				events = append(events, testEvent(run, seq))
				refs = append(refs, ref{run, seq})
			}
			b := &store.Batch{Ops: []store.Op{runlog.PutCheckpoint(run, &runstate.State{LastSeq: seq})}}
			outbox := runlog.OutboxKept
			if d == 0 {
				outbox = runlog.OutboxPut
			}
			appended := runlog.AppendEvents(b, tenant, events, outbox, false)
			res, err := st.Commit(context.Background(), b)
			require.NoError(t, err)
			if noted(i) {
				cache.Committed(b, res, appended)
			}
			i++
		}
	}
	return refs
}

func always(int) bool { return true }

// The worker of the process that committed the events publishes them from
// its outbox cache, on every backend, without reading one back.
func TestWorker_PublishesWhatItsProcessCommittedWithoutReadingItBack(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			st := &eventReads{Store: be.open(t)}
			cache := runlog.NewOutboxCache(0, 0)
			refs := writeCommitted(t, st, cache, 20, 10, 4, always)
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(st, bus, export.Config{BatchSize: 64, OutboxCache: cache})
			require.NoError(t, err)
			drain(t, w)
			require.Zero(t, requireAllDelivered(t, st, refs, bus.Messages()), "no duplicates")
			require.Zero(t, st.n.Load(), "no event read back")
			runs, _ := cache.Len()
			require.Zero(t, runs, "every run's events dropped once published")
		})
	}
}

// A run whose events the cache does not hold whole — one of its decisions
// another process's, or committed before a restart, or its last not noted
// (its checkpoint is not at the version the cache knows) — is read from the
// store, and everything is published.
func TestWorker_ReadsTheRunsItsOutboxCacheDoesNotHoldWhole(t *testing.T) {
	t.Parallel()
	st := &eventReads{Store: memStore(t)}
	cache := runlog.NewOutboxCache(0, 0)
	// of 10 runs of 10 decisions: run 0's first decision, run 3's fifth and
	// run 6's last are not noted
	notNoted := map[int]bool{0: true, 34: true, 69: true}
	refs := writeCommitted(t, st, cache, 10, 10, 3, func(i int) bool { return !notNoted[i] })
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{BatchSize: 50, OutboxCache: cache})
	require.NoError(t, err)
	drain(t, w)
	require.Zero(t, requireAllDelivered(t, st, refs, bus.Messages()), "no duplicates")
	require.EqualValues(t, 3, st.n.Load(), "one read of the events of each run not held whole, and only those")
}

// A worker killed between publish and acknowledgement, whose process (and
// outbox cache) is gone, is followed by one with an empty cache: it reads
// what is left from the store and nothing is lost.
func TestWorker_KilledWithItsOutboxCacheLosesNothing(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	cache := runlog.NewOutboxCache(0, 0)
	refs := writeCommitted(t, st, cache, 100, 25, 4, always) // 10,000 events
	bus := export.NewMemoryBus()
	pub := &killingPublisher{inner: bus, killEvery: 997}
	kills := 0
	for life := 0; !lifeDrainsWith(t, st, pub, &kills, cache); life++ {
		require.Less(t, life, 1000, "outbox never drained")
		cache = runlog.NewOutboxCache(0, 0) // a restart: nothing in memory
	}
	require.Greater(t, kills, 1)
	dups := requireAllDelivered(t, st, refs, bus.Messages())
	require.Positive(t, dups, "a kill before acknowledgement publishes again")
}
