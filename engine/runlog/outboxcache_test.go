package runlog

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// countingStore counts the reads of the events an outbox entry names (it
// hides memstore's GetMany, so that store.GetMany reads one Get at a time),
// and answers none of them while blind.
type countingStore struct {
	store.Store
	reads atomic.Int64
	blind bool
}

func (s *countingStore) Get(ctx context.Context, key []byte) (store.Item, error) {
	s.reads.Add(1)
	if s.blind {
		return store.Item{}, fmt.Errorf("blind: %w", store.ErrNotFound)
	}
	return s.Store.Get(ctx, key)
}

// committedBatch is a decision's batch as committed, and where AppendEvents
// put its events.
type committedBatch struct {
	batch    *store.Batch
	res      *store.CommitResult
	appended Appended
}

// randomDecisions commits n decisions' events to st, each on a run of its
// own choosing among a few, with a random number of events (their run_seqs
// sometimes with a gap), random payloads, with and without idempotency
// rows, and answers them.
func randomDecisions(t testing.TB, rng *rand.Rand, st store.Store, n int) []committedBatch {
	ctx := context.Background()
	next := map[string]uint64{}
	var out []committedBatch
	for range n {
		run := fmt.Sprintf("run-%d", rng.IntN(8))
		tenant := fmt.Sprintf("tenant-%d", rng.IntN(3))
		var events []runstate.Event
		for range 1 + rng.IntN(5) {
			next[run] += 1 + uint64(rng.IntN(4)/3) // now and then a gap
			seq := next[run]
			events = append(events, runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("ev-%s-%d", run, seq),
				RunID: run, Seq: seq, StepID: fmt.Sprintf("step-%d", rng.IntN(9)), PlanVersion: "1",
				IdempotencyKey: fmt.Sprintf("k-%d", seq), EmittedAt: time.Unix(rng.Int64N(1<<31), rng.Int64N(1e9)).UTC(),
				Data: runstate.EventData{Output: json.RawMessage(fmt.Sprintf(`{"n":%d,"s":"%s"}`, rng.Int(), "<&>"[rng.IntN(3):])),
					Reason: string(rune('a' + rng.IntN(26)))}})
		}
		b := &store.Batch{}
		appended := AppendEvents(b, tenant, events, true, rng.IntN(2) == 0)
		b.Conditions = nil
		res, err := st.Commit(ctx, b)
		require.NoError(t, err)
		out = append(out, committedBatch{b, res, appended})
	}
	return out
}

// scanOutbox answers every outbox entry of st.
func scanOutbox(t testing.TB, st store.Store) []store.Item {
	res, err := st.Scan(context.Background(), &store.ScanParams{Prefix: OutboxPrefix(), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	return res.Items
}

func TestOutboxCache_ServesExactlyWhatTheStoreHolds(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 16))
		mem := memstore.New(memstore.Config{})
		st := &countingStore{Store: mem}
		commits := randomDecisions(t, rng, st, 1+rng.IntN(60))
		page := scanOutbox(t, st)
		fromStore, err := ResolveOutbox(ctx, st, page)
		require.NoError(t, err)
		cache := NewOutboxCache(0, 0)
		for _, c := range commits {
			cache.Committed(c.batch, c.res, c.appended)
		}
		st.reads.Store(0)
		fromCache, err := cache.ResolveOutbox(ctx, st, page)
		require.NoError(t, err)
		require.Zero(t, st.reads.Load(), "seed %d: every entry was served from the cache", seed)
		require.Equal(t, fromStore, fromCache, "seed %d", seed)
		for _, e := range fromCache {
			require.NoError(t, e.Err)
		}
		entries, bytes := cache.Len()
		require.Zero(t, entries, "an entry is served from memory once")
		require.Zero(t, bytes)
	}
}

func TestOutboxCache_AnEntryItDoesNotHoldIsReadFromTheStore(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	st := &countingStore{Store: memstore.New(memstore.Config{})}
	commits := randomDecisions(t, rng, st, 40)
	cache := NewOutboxCache(0, 0)
	for i, c := range commits {
		if i%2 == 0 { // the others: another process's, or committed before a restart
			cache.Committed(c.batch, c.res, c.appended)
		}
	}
	page := scanOutbox(t, st)
	want, err := ResolveOutbox(ctx, st, page)
	require.NoError(t, err)
	st.reads.Store(0)
	got, err := cache.ResolveOutbox(ctx, st, page)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NotZero(t, st.reads.Load())

	st.reads.Store(0)
	got, err = NewOutboxCache(0, 0).ResolveOutbox(ctx, st, page) // after a restart: empty
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.EqualValues(t, len(page), st.reads.Load(), "every entry's record read from the store")
}

func TestOutboxCache_ServesAnEntryOnlyAtTheVersionItsCommitGaveIt(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 3))
	st := &countingStore{Store: memstore.New(memstore.Config{}), blind: true}
	commits := randomDecisions(t, rng, st, 1)
	cache := NewOutboxCache(0, 0)
	cache.Committed(commits[0].batch, commits[0].res, commits[0].appended)
	page := scanOutbox(t, st)
	require.Len(t, page, 1)
	page[0].Version++ // the entry written again since: not the one the cache holds
	got, err := cache.ResolveOutbox(ctx, st, page)
	require.NoError(t, err)
	require.Error(t, got[0].Err, "read from the (blind) store, not served from memory")
	entries, _ := cache.Len()
	require.Zero(t, entries, "the entry held at another version is dropped")
}

func TestOutboxCache_ServesAnEntryAtMostOnce(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(4, 4))
	st := &countingStore{Store: memstore.New(memstore.Config{})}
	commits := randomDecisions(t, rng, st, 5)
	cache := NewOutboxCache(0, 0)
	for _, c := range commits {
		cache.Committed(c.batch, c.res, c.appended)
	}
	page := scanOutbox(t, st)
	first, err := cache.ResolveOutbox(ctx, st, page)
	require.NoError(t, err)
	require.Zero(t, st.reads.Load())
	again, err := cache.ResolveOutbox(ctx, st, page) // a publish that failed: the next pass
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.NotZero(t, st.reads.Load(), "the second time from the store")
}

func TestOutboxCache_NotesNothingWithoutTheOutboxOrACommitResult(t *testing.T) {
	events := []runstate.Event{{RunID: "r", Seq: 1, IdempotencyKey: "a"}}
	cache := NewOutboxCache(0, 0)
	b := &store.Batch{}
	cache.Committed(b, &store.CommitResult{Versions: make([]uint64, len(b.Ops))}, AppendEvents(b, "t", events, false, true))
	b = &store.Batch{}
	cache.Committed(b, nil, AppendEvents(b, "t", events, true, true))
	entries, _ := cache.Len()
	require.Zero(t, entries)
	var none *OutboxCache
	none.Committed(b, &store.CommitResult{Versions: make([]uint64, len(b.Ops))}, AppendEvents(&store.Batch{}, "t", events, true, true))
}

func TestOutboxCache_StaysWithinItsBounds(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		maxEntries, maxBytes int
	}{
		{"by entries", 64, 1 << 30},
		{"by bytes", 1 << 20, 16 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(5, 5))
			st := &countingStore{Store: memstore.New(memstore.Config{})}
			commits := randomDecisions(t, rng, st, 2000)
			cache := NewOutboxCache(tc.maxEntries, tc.maxBytes)
			for _, c := range commits {
				cache.Committed(c.batch, c.res, c.appended)
				entries, bytes := cache.Len()
				require.LessOrEqual(t, entries, tc.maxEntries)
				require.LessOrEqual(t, bytes, tc.maxBytes)
			}
			last := commits[len(commits)-1]
			key := last.batch.Ops[len(last.batch.Ops)-1].Key // its last outbox entry
			it, err := st.Get(ctx, key)
			require.NoError(t, err)
			st.reads.Store(0)
			got, err := cache.ResolveOutbox(ctx, st, []store.Item{it})
			require.NoError(t, err)
			require.NoError(t, got[0].Err)
			require.Zero(t, st.reads.Load(), "the latest entry is still held")
		})
	}
}

func TestOutboxCache_ConcurrentCommitsAndResolvesServeWhatTheStoreHolds(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New(memstore.Config{})
	cache := NewOutboxCache(256, 1<<20)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for i := range 100 {
				run := fmt.Sprintf("run-%d-%d", g, i)
				ev := runstate.Event{Type: runstate.EvStepCompleted, ID: "ev-" + run, RunID: run, Seq: 1, IdempotencyKey: "k",
					Data: runstate.EventData{Reason: fmt.Sprint(rng.Int())}}
				b := &store.Batch{}
				appended := AppendEvents(b, "t", []runstate.Event{ev}, true, false)
				res, err := mem.Commit(ctx, b)
				if err != nil {
					panic(err)
				}
				cache.Committed(b, res, appended)
			}
		}()
	}
	var mu sync.Mutex
	var failed []error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, err)
	}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			page := scanOutbox(t, mem)
			got, err := cache.ResolveOutbox(ctx, mem, page)
			if err != nil {
				fail(err)
				return
			}
			for i, e := range got {
				if e.Err != nil || len(e.Events) != 1 || string(OutboxKey(e.Events[0].RunID, 1)) != string(page[i].Key) {
					fail(fmt.Errorf("entry %s resolved as %+v", page[i].Key, e))
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, failed)
}
