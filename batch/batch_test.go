package batch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

const tenant = "tenant-a"

// bundle is one test's store, engine and batches.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	store store.Store
	eng   *engine.Engine
	b     *Batches
}

// storeKinds are the backends the batch tests run on.
var storeKinds = []string{"memory", "pebble", "postgresql"}

func openStore(t *testing.T, kind string) store.Store {
	t.Helper()
	switch kind {
	case "memory":
		return memstore.New(memstore.Config{})
	case "pebble":
		st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	default:
		return sqltest.Open(t, sqltest.NewSchema(t))
	}
}

func setup(t *testing.T, st store.Store) *bundle {
	t.Helper()
	eng, err := engine.New(engine.Config{Store: st})
	require.NoError(t, err)
	return &bundle{t: t, ctx: context.Background(), store: st, eng: eng, b: batchesOn(t, st, eng, "p1")}
}

// batchesOn answers Batches over st as the process owner.
func batchesOn(t *testing.T, st store.Store, eng *engine.Engine, owner string) *Batches {
	t.Helper()
	b, err := New(Config{Store: st, Runs: eng, Owner: owner, LeaseTTL: time.Hour, Interval: 10 * time.Millisecond})
	require.NoError(t, err)
	return b
}

// waiting submits n runs that wait for a signal.
func (b *bundle) waiting(n int) []string {
	b.t.Helper()
	def := definition.Definition{PlanID: "waits", PlanVersion: "1", Actions: []definition.Action{
		{ID: "wait", Order: 1, WaitForSignal: &definition.SignalWait{SignalName: "go"}}}}
	var ids []string
	for range n {
		res, err := b.eng.SubmitRun(b.ctx, engine.SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
		require.NoError(b.t, err)
		ids = append(ids, res.Run.RunID)
	}
	return ids
}

// until ticks the batches until the batch is no longer running.
func (b *bundle) until(id string) *View {
	b.t.Helper()
	for range 1000 {
		require.NoError(b.t, b.b.Tick(b.ctx))
		v, _, _, err := b.b.Describe(b.ctx, tenant, id, 1, "")
		require.NoError(b.t, err)
		if v.State != StateRunning {
			return v
		}
	}
	b.t.Fatalf("batch %s never ended", id)
	return nil
}

func (b *bundle) status(runID string) runstate.RunStatus {
	b.t.Helper()
	snap, err := b.eng.GetRun(b.ctx, engine.GetRunParams{TenantID: tenant, RunID: runID})
	require.NoError(b.t, err)
	return snap.Status
}

func TestBatch_ActsOnEveryRunAndRecordsEachOutcome(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setup(t, openStore(t, kind))
			ids := b.waiting(5)
			_, err := b.eng.CancelRun(b.ctx, engine.ControlParams{TenantID: tenant, RunID: ids[2], Actor: "op"})
			require.NoError(t, err)
			selection := append(ids, "run-that-does-not-exist")
			v, existing, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "b1", Operation: OpPause, RunIDs: selection,
				Rate: 1000, CreatedBy: "op", Args: Args{Reason: "maintenance"}})
			require.NoError(t, err)
			require.False(t, existing)
			require.Equal(t, 6, v.Total)
			v = b.until("b1")
			require.Equal(t, StateCompleted, v.State)
			require.Equal(t, 4, v.Succeeded)
			require.Equal(t, 2, v.Failed)
			_, runs, next, err := b.b.Describe(b.ctx, tenant, "b1", 4, "")
			require.NoError(t, err)
			require.Len(t, runs, 4)
			require.Equal(t, "4", next)
			_, rest, next, err := b.b.Describe(b.ctx, tenant, "b1", 4, next)
			require.NoError(t, err)
			require.Empty(t, next)
			runs = append(runs, rest...)
			for i, r := range runs {
				require.Equal(t, selection[i], r.RunID, "selection order")
				switch i {
				case 2:
					require.Equal(t, OutcomeFailed, r.Outcome)
					require.Equal(t, string(engine.CodeIllegalTransition), r.Code, "a cancelled run cannot pause")
				case 5:
					require.Equal(t, OutcomeFailed, r.Outcome)
					require.Equal(t, string(engine.CodeNotFound), r.Code)
				default:
					require.Equal(t, OutcomeSucceeded, r.Outcome)
					require.Equal(t, runstate.RunPaused, b.status(r.RunID))
				}
			}
		})
	}
}

func TestBatch_TheSameBatchIDAgainAnswersTheOriginalBatch(t *testing.T) {
	b := setup(t, memstore.New(memstore.Config{}))
	ids := b.waiting(3)
	first, existing, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "b1", Operation: OpCancel, RunIDs: ids, CreatedBy: "op"})
	require.NoError(t, err)
	require.False(t, existing)
	again, existing, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "b1", Operation: OpPause, RunIDs: ids[:1], CreatedBy: "other"})
	require.NoError(t, err, "never a conflict")
	require.True(t, existing)
	require.Equal(t, first.CreatedAt, again.CreatedAt)
	require.Equal(t, OpCancel, again.Operation, "the original batch, whatever the retry asks")
	require.Equal(t, 3, again.Total)
	_, _, err = b.b.Start(b.ctx, StartParams{TenantID: "tenant-b", BatchID: "b1", Operation: OpCancel, RunIDs: ids, CreatedBy: "op"})
	require.NoError(t, err, "another tenant's batch id is its own")
}

func TestBatch_ActingOnARunAgainAfterACrashChangesItOnce(t *testing.T) {
	b := setup(t, memstore.New(memstore.Config{}))
	ids := b.waiting(2)
	_, _, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "b1", Operation: OpCancel, RunIDs: ids, CreatedBy: "op", Rate: 1000})
	require.NoError(t, err)
	// The engine acted on the first run, then the process died before it recorded it.
	id := signalID("b1")
	_, err = b.eng.CancelRun(b.ctx, engine.ControlParams{TenantID: tenant, RunID: ids[0], SignalID: &id, Actor: "op"})
	require.NoError(t, err)
	v := b.until("b1")
	require.Equal(t, 2, v.Succeeded, "the run acted on before the crash is answered by its first acceptance")
	events, err := b.eng.ListEvents(b.ctx, engine.ListEventsParams{TenantID: tenant, RunID: ids[0], PageSize: 100})
	require.NoError(t, err)
	cancelled := 0
	for _, ev := range events.Events {
		if ev.Type == runstate.EvRunCancelled {
			cancelled++
		}
	}
	require.Equal(t, 1, cancelled)
}

func TestBatch_AnotherProcessTakesABatchOnlyAfterItsOwnersLeaseEndsAndFencesIt(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setup(t, st)
	ids := b.waiting(4)
	_, _, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "b1", Operation: OpCancel, RunIDs: ids, CreatedBy: "op", Rate: 1})
	require.NoError(t, err)
	require.NoError(t, b.b.Tick(b.ctx)) // p1 takes it and acts on one run (rate 1/s)
	v, _, _, err := b.b.Describe(b.ctx, tenant, "b1", 1, "")
	require.NoError(t, err)
	require.Equal(t, "p1", v.Owner)
	require.Equal(t, 1, v.Done)

	p2 := batchesOn(t, st, b.eng, "p2")
	require.NoError(t, p2.Tick(b.ctx))
	v, _, _, err = p2.Describe(b.ctx, tenant, "b1", 1, "")
	require.NoError(t, err)
	require.Equal(t, "p1", v.Owner, "p1's lease has not ended: p2 leaves the batch alone")
	require.Equal(t, 1, v.Done)

	// p1's lease ends (it froze); p2 takes the batch over.
	k := key(tenant, "b1")
	rec, err := load(b.ctx, st, k)
	require.NoError(t, err)
	rec.rec.LeaseUntil, rec.rec.NextAt = time.Now().Add(-time.Second), time.Now().Add(-time.Second)
	require.NoError(t, save(b.ctx, st, rec))
	stale, err := load(b.ctx, st, k) // what p1 last saw
	require.NoError(t, err)
	require.NoError(t, p2.Tick(b.ctx))
	v, _, _, err = p2.Describe(b.ctx, tenant, "b1", 1, "")
	require.NoError(t, err)
	require.Equal(t, "p2", v.Owner)
	require.Equal(t, 2, v.Done)
	require.ErrorIs(t, b.b.actOnNext(b.ctx, stale), errRaced, "p1 wakes up: its write is fenced off")
	v, _, _, err = p2.Describe(b.ctx, tenant, "b1", 1, "")
	require.NoError(t, err)
	require.Equal(t, 2, v.Done, "nothing recorded twice")
}

func TestBatch_CancelLeavesTheRunsNotActedOnSkipped(t *testing.T) {
	b := setup(t, memstore.New(memstore.Config{}))
	ids := b.waiting(5)
	_, _, err := b.b.Start(b.ctx, StartParams{TenantID: tenant, BatchID: "b1", Operation: OpCancel, RunIDs: ids, CreatedBy: "op", Rate: 1})
	require.NoError(t, err)
	require.NoError(t, b.b.Tick(b.ctx))
	v, err := b.b.Cancel(b.ctx, tenant, "b1")
	require.NoError(t, err)
	require.Equal(t, StateCancelled, v.State)
	require.Equal(t, 1, v.Done)
	require.Equal(t, 4, v.Skipped)
	require.NoError(t, b.b.Tick(b.ctx))
	for _, id := range ids[1:] {
		require.Equal(t, runstate.RunBlocked, b.status(id), "left alone")
	}
	again, err := b.b.Cancel(b.ctx, tenant, "b1")
	require.NoError(t, err, "cancelling an ended batch answers it")
	require.Equal(t, StateCancelled, again.State)
}

func TestBatch_BadRequestsNameTheFieldAndWriteNothing(t *testing.T) {
	b := setup(t, memstore.New(memstore.Config{}))
	ids := b.waiting(1)
	for _, tc := range []struct {
		p     StartParams
		field string
	}{
		{StartParams{BatchID: "x", Operation: OpCancel}, "run_ids"},
		{StartParams{BatchID: "x", Operation: OpCancel, RunIDs: ids, Query: `status = "FAILED"`}, "run_ids"},
		{StartParams{BatchID: "x", Operation: OpCancel, Query: `status = "FAILED"`}, "query"},
		{StartParams{BatchID: "x", Operation: OpCancel, RunIDs: []string{"a", "a"}}, "run_ids[1]"},
		{StartParams{BatchID: "x", Operation: OpCancel, RunIDs: ids, Rate: 5000}, "rate"},
		{StartParams{BatchID: "x", Operation: OpRerunFrom, RunIDs: ids}, "from_step"},
		{StartParams{BatchID: "x", Operation: OpRetryStep, RunIDs: ids}, "action_id"},
		{StartParams{BatchID: "x", Operation: OpSignal, RunIDs: ids}, "signal_name"},
		{StartParams{BatchID: "x", Operation: "explode", RunIDs: ids}, "operation"},
		{StartParams{BatchID: "", Operation: OpCancel, RunIDs: ids}, "batch_id"},
	} {
		t.Run(fmt.Sprint(tc.field), func(t *testing.T) {
			tc.p.TenantID = tenant
			_, _, err := b.b.Start(b.ctx, tc.p)
			require.Equal(t, engine.CodeInvalidArgument, engine.CodeOf(err), "%v", err)
			var e *engine.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tc.field, e.Violations[0].Field)
			_, _, _, err = b.b.Describe(b.ctx, tenant, "x", 1, "")
			require.Equal(t, engine.CodeNotFound, engine.CodeOf(err), "nothing written")
		})
	}
}
