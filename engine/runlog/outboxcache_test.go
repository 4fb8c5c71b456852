package runlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// eventScans counts the scans of a run's events, and answers none of them
// while blind: what resolves through it then came from the cache.
type eventScans struct {
	store.Store
	scans atomic.Int64
	blind bool
}

func (s *eventScans) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if bytes.Contains(p.Prefix, []byte(":ev:")) {
		s.scans.Add(1)
		if s.blind {
			return &store.ScanResult{}, nil
		}
	}
	return s.Store.Scan(ctx, p)
}

// committedBatch is a decision's batch as committed, and where AppendEvents
// put its events.
type committedBatch struct {
	batch    *store.Batch
	res      *store.CommitResult
	appended Appended
}

// decide commits one decision of n events on run, as the engine does: the
// checkpoint first, the events, the run's entry put (the run's first) or
// asserted.
func decide(t testing.TB, rng *rand.Rand, st store.Store, run string, last *uint64, n int) committedBatch {
	var events []runstate.Event
	for range n {
		*last++
		seq := *last
		events = append(events, runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("ev-%s-%d", run, seq),
			RunID: run, Seq: seq, StepID: fmt.Sprintf("step-%d", rng.IntN(9)), PlanVersion: "1",
			IdempotencyKey: fmt.Sprintf("k-%d", seq), EmittedAt: time.Unix(rng.Int64N(1<<31), rng.Int64N(1e9)).UTC(),
			Data: runstate.EventData{Output: json.RawMessage(fmt.Sprintf(`{"n":%d,"s":"%s"}`, rng.Int(), "<&>"[rng.IntN(3):]))}})
	}
	outbox := OutboxKept
	if events[0].Seq == 1 {
		outbox = OutboxPut
	}
	b := &store.Batch{Ops: []store.Op{PutCheckpoint(run, &runstate.State{LastSeq: *last})}}
	appended := AppendEvents(b, "t", events, outbox, rng.IntN(2) == 0)
	res, err := st.Commit(context.Background(), b)
	require.NoError(t, err)
	return committedBatch{b, res, appended}
}

// eventsOf answers what resolved runs name, one line per event.
func eventsOf(t *testing.T, got []ResolvedRun) []string {
	var out []string
	for _, r := range got {
		require.NoError(t, r.Err)
		for _, ev := range r.Events {
			out = append(out, fmt.Sprintf("%s %s %s %d %s %s", ev.TenantID, ev.EventID, ev.RunID, ev.RunSeq, ev.EventType, ev.Event))
		}
	}
	return out
}

// The cache serves a run's events — byte for byte what the store's would
// resolve to — only while the run's checkpoint is at the version the last
// commit it noted gave it: a decision it did not note (another process's,
// or one whose outcome was unknown) makes the run read from the store.
func TestOutboxCache_ServesARunsEventsOnlyAtTheCheckpointItsLastNotedCommitGave(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	st := &eventScans{Store: memstore.New(memstore.Config{})}
	cache := NewOutboxCache(0, 0)
	lasts := map[string]*uint64{}
	var reqs []RunRequest
	for r := range 6 {
		run := fmt.Sprintf("run-%d", r)
		lasts[run] = new(uint64)
		for range 1 + rng.IntN(4) {
			c := decide(t, rng, st, run, lasts[run], 1+rng.IntN(4))
			cache.Committed(c.batch, c.res, c.appended)
		}
		reqs = append(reqs, RunRequest{RunID: run, TenantID: "t", From: 1 + uint64(r%2)})
	}
	want, err := (*OutboxCache)(nil).ResolveRuns(ctx, st, reqs)
	require.NoError(t, err)
	require.EqualValues(t, 6, st.scans.Load())

	st.blind = true
	got, err := cache.ResolveRuns(ctx, st, reqs)
	require.NoError(t, err)
	require.EqualValues(t, 6, st.scans.Load(), "every run served from memory")
	require.Equal(t, eventsOf(t, want), eventsOf(t, got))
	for i := range got {
		require.Equal(t, want[i].Checkpoint, got[i].Checkpoint, "the deletion requires the checkpoint read")
	}

	decide(t, rng, st, "run-2", lasts["run-2"], 2) // committed, not noted
	got, err = cache.ResolveRuns(ctx, st, reqs)
	require.NoError(t, err)
	require.EqualValues(t, 7, st.scans.Load(), "the run whose checkpoint moved is read from the store, alone")
	require.Empty(t, got[2].Events, "blind: nothing served from memory for it")
}

// A run whose noted events do not reach back to the run_seq asked for —
// a decision before them not noted — is read from the store.
func TestOutboxCache_ARunNotedOnlyFromLaterOnIsReadFromTheStore(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	st := &eventScans{Store: memstore.New(memstore.Config{})}
	cache := NewOutboxCache(0, 0)
	var last uint64
	decide(t, rng, st, "r", &last, 2) // outcome unknown: not noted
	c := decide(t, rng, st, "r", &last, 2)
	cache.Committed(c.batch, c.res, c.appended)
	got, err := cache.ResolveRuns(ctx, st, []RunRequest{{RunID: "r", TenantID: "t", From: 1}})
	require.NoError(t, err)
	require.EqualValues(t, 1, st.scans.Load())
	require.Len(t, got[0].Events, 4)
	got, err = cache.ResolveRuns(ctx, st, []RunRequest{{RunID: "r", TenantID: "t", From: 3}})
	require.NoError(t, err)
	require.EqualValues(t, 1, st.scans.Load(), "from the first it noted on, it serves")
	require.Len(t, got[0].Events, 2)
}

func TestOutboxCache_NotesNothingWithoutTheOutboxOrACommitResult(t *testing.T) {
	events := []runstate.Event{{RunID: "r", Seq: 1, IdempotencyKey: "a"}}
	cache := NewOutboxCache(0, 0)
	b := &store.Batch{}
	cache.Committed(b, &store.CommitResult{Versions: make([]uint64, len(b.Ops))}, AppendEvents(b, "t", events, NoOutbox, true))
	cache.Committed(b, nil, AppendEvents(b, "t", events, OutboxPut, true))
	_, known := cache.Live("r")
	require.False(t, known)
	var none *OutboxCache
	none.Committed(b, &store.CommitResult{Versions: make([]uint64, len(b.Ops))}, AppendEvents(&store.Batch{}, "t", events, OutboxPut, true))
	_, known = none.Live("r")
	require.False(t, known)
}

// What the engine asks of it: a run's entry is live once a commit that put
// or asserted it was noted, gone once the export worker deleted it, and
// unknown once forgotten (a lost race on it).
func TestOutboxCache_KnowsWhetherARunHasItsEntryFromWhatItsProcessDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	st := memstore.New(memstore.Config{})
	cache := NewOutboxCache(0, 0)
	var last uint64
	c := decide(t, rng, st, "r", &last, 3)
	cache.Committed(c.batch, c.res, c.appended)
	live, known := cache.Live("r")
	require.True(t, known && live)
	cache.Exported("r")
	live, known = cache.Live("r")
	require.True(t, known)
	require.False(t, live)
	runs, bytes := cache.Len()
	require.Zero(t, runs+bytes, "an exported run's events are dropped")
	cache.Forget("r")
	_, known = cache.Live("r")
	require.False(t, known)
}

func TestOutboxCache_StaysWithinItsBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	st := memstore.New(memstore.Config{})
	cache := NewOutboxCache(10, 4<<10)
	for r := range 200 {
		var last uint64
		run := fmt.Sprintf("run-%d", r)
		for range 3 {
			c := decide(t, rng, st, run, &last, 1+rng.IntN(4))
			cache.Committed(c.batch, c.res, c.appended)
		}
		runs, bytes := cache.Len()
		require.LessOrEqual(t, runs, 10)
		require.LessOrEqual(t, bytes, 4<<10+1)
	}
}

// Published drops what the export worker published of a run; what it
// still holds is served from the run_seq after.
func TestOutboxCache_PublishedDropsARunsEventsThroughTheLastPublished(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	st := &eventScans{Store: memstore.New(memstore.Config{}), blind: true}
	cache := NewOutboxCache(0, 0)
	var last uint64
	for range 3 {
		c := decide(t, rng, st, "r", &last, 2)
		cache.Committed(c.batch, c.res, c.appended)
	}
	_, before := cache.Len()
	cache.Published("r", 4)
	_, after := cache.Len()
	require.Less(t, after, before)
	got, err := cache.ResolveRuns(ctx, st, []RunRequest{{RunID: "r", TenantID: "t", From: 5}})
	require.NoError(t, err)
	require.Len(t, got[0].Events, 2)
	require.EqualValues(t, 5, got[0].Events[0].RunSeq)
	require.Zero(t, st.scans.Load())
}
