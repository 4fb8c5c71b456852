package fill_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/bench/fill"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// stepClock advances one millisecond at every reading, so that two runs
// driven the same way see the same timings.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

const tenant = "default"

// bundle is one engine over its own store.
type bundle struct {
	eng *engine.Engine
	st  *memstore.Store
}

func setup(t testing.TB, start time.Time) *bundle {
	t.Helper()
	st := memstore.New(memstore.Config{})
	eng, err := engine.New(engine.Config{Store: st, Clock: &stepClock{now: start}, Outbox: true, Owner: "engine-test"})
	require.NoError(t, err)
	return &bundle{eng: eng, st: st}
}

func benchDefinition(steps int) definition.Definition {
	def := definition.Definition{PlanID: "bench", PlanVersion: "1"}
	for i := range steps {
		def.Actions = append(def.Actions, definition.Action{ID: "s" + strconv.Itoa(i+1), Order: i + 1, Activity: "bench.noop"})
	}
	return def
}

// runOne submits a workflow and works its tasks until it completes, on one
// goroutine, and answers its run id.
func (b *bundle) runOne(t testing.TB, requestID string) string {
	t.Helper()
	ctx := context.Background()
	res, err := b.eng.SubmitRun(ctx, engine.SubmitParams{TenantID: tenant, Definition: benchDefinition(3), Start: true,
		RunRequestID: requestID, SubmittedBy: "anonymous"})
	require.NoError(t, err)
	for range 10 {
		tasks, err := b.eng.PollTasks(ctx, engine.PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"bench.noop"}, MaxTasks: 4})
		require.NoError(t, err)
		for _, task := range tasks {
			_, err := b.eng.CompleteTask(ctx, engine.ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`{}`)})
			require.NoError(t, err)
		}
	}
	snap, err := b.eng.GetRun(ctx, engine.GetRunParams{TenantID: tenant, RunID: res.Run.RunID})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	return res.Run.RunID
}

func all(t *testing.T, st store.Store) []store.Item {
	t.Helper()
	res, err := st.Scan(context.Background(), &store.ScanParams{Limit: store.MaxScanLimit})
	require.NoError(t, err)
	require.Nil(t, res.Next)
	return res.Items
}

// TestClone_IsWhatTheEngineWrites: two runs of one definition, driven the
// same way a day apart by engines on their own stores, differ only in their
// identity. Cloning the first under the second's identity gives the second's
// records byte for byte.
func TestClone_IsWhatTheEngineWrites(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a, b := setup(t, t0), setup(t, t0.Add(24*time.Hour+1234*time.Millisecond))
	runA, runB := a.runOne(t, "template-a"), b.runOne(t, "template-b")

	ta, err := fill.Capture(t.Context(), a.st, runA, "template-a")
	require.NoError(t, err)
	require.Positive(t, ta.Skipped(), "the outbox entries were left out")
	tb, err := fill.Capture(t.Context(), b.st, runB, "template-b")
	require.NoError(t, err)

	ops, _, err := ta.Render(tb.Identity(), nil, nil)
	require.NoError(t, err)
	var want, shared []store.Item
	for _, it := range all(t, b.st) {
		switch {
		case string(it.Key[:3]) == "pl:":
			shared = append(shared, it) // the plan record: no clone's own, written once
		case string(it.Key[:3]) != "ob:":
			want = append(want, it)
		}
	}
	require.Len(t, shared, 1)
	require.Equal(t, shared, ta.Shared(), "the template's plan record is the one the engine writes")
	got := map[string]string{}
	for _, op := range ops {
		got[string(op.Key)] = string(op.Value)
	}
	require.Len(t, got, len(want))
	for _, it := range want {
		require.Contains(t, got, string(it.Key))
		require.Equal(t, string(it.Value), got[string(it.Key)], "record %s", it.Key)
	}
}

// TestFill_ClonesAreRunsTheEngineReads fills a store with clones and reads
// them back through the engine: snapshot, log, status index (which lists
// every run) and the run_request_id index all answer for every clone.
func TestFill_ClonesAreRunsTheEngineReads(t *testing.T) {
	ctx := t.Context()
	src := setup(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	tmpl, err := fill.Capture(ctx, src.st, src.runOne(t, "template"), "template")
	require.NoError(t, err)

	dst := setup(t, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	from := time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)
	res, err := fill.Fill(ctx, dst.st, tmpl, fill.Options{Runs: 25, RequestPrefix: "fill", CreatedFrom: from, BatchRuns: 4, Renderers: 3})
	require.NoError(t, err)
	require.Equal(t, 25, res.Runs)
	require.Equal(t, 25*tmpl.Records(), res.Records)
	require.Equal(t, 6*7, res.Commits, "7 batches of each of rr, rs, rx, sx, task and wf")
	require.NotEmpty(t, res.Samples)

	for _, id := range res.Samples {
		snap, err := dst.eng.GetRun(ctx, engine.GetRunParams{TenantID: tenant, RunID: id.RunID})
		require.NoError(t, err)
		require.Equal(t, runstate.RunCompleted, snap.Status)
		require.Equal(t, id.CreatedAt, snap.CreatedAt)
		require.Equal(t, id.RequestID, snap.RunRequestID)
		events, err := dst.eng.ListEvents(ctx, engine.ListEventsParams{TenantID: tenant, RunID: id.RunID, PageSize: 100})
		require.NoError(t, err)
		require.Len(t, events.Events, tmpl.Events())
		for i, ev := range events.Events {
			require.Equal(t, uint64(i+1), ev.Seq)
			require.Equal(t, id.EventIDs[i], ev.ID)
			require.Equal(t, runstate.IdempotencyKey(id.RunID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt), ev.IdempotencyKey)
			require.False(t, ev.EmittedAt.Before(id.CreatedAt), "event %d emitted before the run was created", i)
		}
		// The run_request_id index: submitting again answers the clone.
		again, err := dst.eng.SubmitRun(ctx, engine.SubmitParams{TenantID: tenant, Definition: benchDefinition(3), Start: true,
			RunRequestID: id.RequestID, SubmittedBy: "anonymous"})
		require.NoError(t, err)
		require.True(t, again.Existing)
		require.Equal(t, id.RunID, again.Run.RunID)
	}
	list, err := dst.eng.Queries().ListRuns(ctx, engine.ListRunsParams{TenantID: tenant, PageSize: 100})
	require.NoError(t, err)
	require.Len(t, list.Runs, 25)
	for i := 1; i < len(list.Runs); i++ {
		require.True(t, list.Runs[i-1].CreatedAt.After(list.Runs[i].CreatedAt), "newest first")
	}
	stats, err := dst.eng.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 25, stats.RunsByStatus[runstate.RunCompleted])
	require.Zero(t, stats.ReadyTasks)
}

// TestCompile_RefusesAnUnknownIdentifier: a record holding an identifier
// fill does not know is refused, never cloned unchanged.
func TestCompile_RefusesAnUnknownIdentifier(t *testing.T) {
	src := setup(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	runID := src.runOne(t, "template")
	items := all(t, src.st)
	items = append(items, store.Item{Key: keyspace.Run.Key(runID, "x"),
		Value: []byte(`{"run_id":"` + runID + `","secret":"0123456789abcdef0123456789abcdef"}`)})
	_, err := fill.Compile(items, runID, "template")
	require.ErrorContains(t, err, `holds identifier "0123456789abcdef0123456789abcdef"`)
}

// TestNewIdentity_TimeOrderedRunIDs: clone ids sort by creation time, like
// the engine's UUIDv7 ids.
func TestNewIdentity_TimeOrderedRunIDs(t *testing.T) {
	src := setup(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	tmpl, err := fill.Capture(t.Context(), src.st, src.runOne(t, "template"), "template")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 100 {
		id, err := tmpl.NewIdentity(at.Add(time.Duration(i)*time.Millisecond), "r-"+strconv.Itoa(i), rng)
		require.NoError(t, err)
		require.Greater(t, id.RunID, prev)
		prev = id.RunID
	}
}
