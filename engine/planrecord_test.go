package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// planCountingStore counts the plan records its commits wrote, and can hold
// every read of a plan record until holdReads readers wait at once: the
// submissions that made them then all find the plan not stored.
type planCountingStore struct {
	store.Store
	planPuts  atomic.Int64 // plan records written by a commit that succeeded
	holdReads int
	mu        sync.Mutex
	waiting   int
	release   chan struct{}
}

func (s *planCountingStore) Get(ctx context.Context, key []byte) (store.Item, error) {
	if bytes.HasPrefix(key, keyspace.Plan.KeyPrefix()) && s.holdReads > 0 {
		s.mu.Lock()
		if s.release == nil {
			s.release = make(chan struct{})
		}
		release := s.release
		if s.waiting++; s.waiting == s.holdReads {
			close(release)
		}
		s.mu.Unlock()
		<-release
	}
	return s.Store.Get(ctx, key)
}

func (s *planCountingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	res, err := s.Store.Commit(ctx, b)
	if err == nil {
		for _, op := range b.Ops {
			if op.Kind == store.OpPut && bytes.HasPrefix(op.Key, keyspace.Plan.KeyPrefix()) {
				s.planPuts.Add(1)
			}
		}
	}
	return res, err
}

// requireRunRecordsReferToTheirPlan requires that every run record stored
// holds no definition, and that the one plan record stored is the
// definition's, under the tenant's key.
func requireRunRecordsReferToTheirPlan(t *testing.T, st store.Store, tenantID string, def definition.Definition, runs int) {
	t.Helper()
	prepared, err := definition.Prepare(def)
	require.NoError(t, err)
	keys := storedKeys(t, st)
	records := 0
	for k, v := range keys {
		parts, err := store.SplitKey([]byte(k))
		require.NoError(t, err)
		if parts[0] == keyspace.Run.Name && len(parts) == 2 {
			records++
			require.NotContains(t, v, `"definition"`, "run record %s embeds its definition", k)
			require.Contains(t, v, `"plan_sha256":"`+prepared.PlanSHA256+`"`)
		}
	}
	require.Equal(t, runs, records)
	require.Equal(t, string(record.EncodePlan(prepared.JSON)), keys[string(record.PlanKey(tenantID, prepared.PlanSHA256))])
}

// TestSubmit_WritesAPlansRecordOnceAcrossItsRuns: the runs of one plan
// refer to one plan record, written by the first submission alone — also
// by engines that start with an empty cache over the same store — and
// every run loads its definition from it and runs to the end.
func TestSubmit_WritesAPlansRecordOnceAcrossItsRuns(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			st := &planCountingStore{Store: backend.open(t)}
			b := setupWith(t, st)
			def := seq("a")
			var ids []string
			for i := range 10 {
				res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: i%2 == 0, SubmittedBy: "alice"})
				require.NoError(t, err)
				ids = append(ids, res.Run.RunID)
			}
			b.restart() // a new engine knows no plan: it reads the record once, and writes none
			for range 5 {
				ids = append(ids, b.submit(def).RunID)
			}
			require.EqualValues(t, 1, st.planPuts.Load(), "the plan record is written once")
			requireRunRecordsReferToTheirPlan(t, st, tenant, def, len(ids))
			b.restart()
			for _, id := range ids {
				if b.run(id).Status == runstate.RunPending {
					_, err := b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: id, Actor: "alice"})
					require.NoError(t, err)
				}
			}
			for range ids {
				b.complete(b.poll("act-a"), `{}`)
			}
			for _, id := range ids {
				snap := b.run(id)
				require.Equal(t, runstate.RunCompleted, snap.Status)
				require.Equal(t, "plan", snap.PlanID)
			}
		})
	}
}

// TestSubmit_FirstSubmissionsOfAPlanRacingAllSucceedAndStoreItOnce: four
// engines over one store each submit the same new plan, all having found
// its record not stored: one batch writes it, the others lose its
// absent-condition and are made again without it — every submission
// succeeds, and the record is written once.
func TestSubmit_FirstSubmissionsOfAPlanRacingAllSucceedAndStoreItOnce(t *testing.T) {
	const engines = 4
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			st := &planCountingStore{Store: backend.open(t), holdReads: engines}
			b := setupWith(t, st)
			def := seq("a", "b")
			var wg sync.WaitGroup
			ids := make([]string, engines)
			errs := make([]error, engines)
			for i := range engines {
				eng, err := New(Config{Store: st, Clock: b.clock})
				require.NoError(t, err)
				wg.Go(func() {
					res, err := eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
					if errs[i] = err; err == nil {
						ids[i] = res.Run.RunID
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			require.EqualValues(t, 1, st.planPuts.Load(), "the plan record is written once")
			requireRunRecordsReferToTheirPlan(t, st, tenant, def, engines)
			st.holdReads = 0
			b.restart()
			for range ids {
				b.complete(b.poll("act-a"), `{}`)
			}
			for _, id := range ids {
				require.Equal(t, "b", b.run(id).Steps[1].ActionID)
			}
		})
	}
}

// TestLoadRun_ARunWhosePlanRecordIsMissingFailsClearly: a run whose plan
// record is gone fails to load with an error that says so — never a
// panic, never a run with no steps, and never the same plan's record of
// another tenant, though that one is stored and this engine holds it.
func TestLoadRun_ARunWhosePlanRecordIsMissingFailsClearly(t *testing.T) {
	b := setup(t)
	b.noProjectionCheck = true // the run without its plan cannot be projected
	def := seq("a")
	mine, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, SubmittedBy: "alice"})
	require.NoError(t, err)
	theirs, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: "tenant-b", Definition: def, SubmittedBy: "bob"})
	require.NoError(t, err)
	prepared, err := definition.Prepare(def)
	require.NoError(t, err)
	_, err = b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Delete(record.PlanKey(tenant, prepared.PlanSHA256))}})
	require.NoError(t, err)
	b.restart()
	_, err = b.eng.GetRun(b.ctx, GetRunParams{TenantID: "tenant-b", RunID: theirs.Run.RunID})
	require.NoError(t, err, "the other tenant's run loads: its plan is now held by this engine")
	_, err = b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: mine.Run.RunID})
	require.Error(t, err)
	require.Contains(t, err.Error(), "plan record is missing")
	_, err = b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: mine.Run.RunID, Actor: "alice"})
	require.Error(t, err, "nothing is decided for a run without its plan")
	require.NotEqual(t, CodeNotFound, CodeOf(err), "the run exists: its plan is what is missing")
}

// TestLoadRun_APlanRecordOfAnotherDefinitionIsRefused: a plan record that
// does not hold the definition its key's SHA-256 names (a damaged store)
// is refused: the run never runs another plan.
func TestLoadRun_APlanRecordOfAnotherDefinitionIsRefused(t *testing.T) {
	b := setup(t)
	b.noProjectionCheck = true
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), SubmittedBy: "alice"})
	require.NoError(t, err)
	own, err := definition.Prepare(seq("a"))
	require.NoError(t, err)
	other, err := definition.Prepare(seq("x", "y"))
	require.NoError(t, err)
	_, err = b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(record.PlanKey(tenant, own.PlanSHA256), record.EncodePlan(other.JSON))}})
	require.NoError(t, err)
	b.restart()
	_, err = b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: res.Run.RunID})
	require.ErrorIs(t, err, record.ErrPlanMismatch)
}

// TestLoadRun_ARunRecordThatHoldsItsDefinitionLoadsAndRuns: a run record
// as an older weftd wrote it — version 1, its definition inside, no plan
// record — loads and is driven to the end by this engine.
func TestLoadRun_ARunRecordThatHoldsItsDefinitionLoadsAndRuns(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a", "b"), SubmittedBy: "alice",
				Input: json.RawMessage(`{"n":1}`)})
			require.NoError(t, err)
			id := res.Run.RunID
			rec, err := b.eng.records.LoadRun(b.ctx, id)
			require.NoError(t, err)
			old := *rec
			old.FormatVersion = 1
			body, err := json.Marshal(&old) // an older weftd's EncodeRun: json.Marshal's bytes
			require.NoError(t, err)
			require.True(t, strings.Contains(string(body), `"definition":{"plan_id":"plan"`))
			_, err = b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(record.RunKey(id), body),
				store.Delete(record.PlanKey(tenant, rec.PlanSHA256))}})
			require.NoError(t, err)
			b.restart()
			_, err = b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: id, Actor: "alice"})
			require.NoError(t, err)
			b.complete(b.poll("act-a"), `{}`)
			b.complete(b.poll("act-b"), `{}`)
			snap := b.run(id)
			require.Equal(t, runstate.RunCompleted, snap.Status)
			require.Equal(t, "plan", snap.PlanID)
			require.Len(t, snap.Steps, 2)
		})
	}
}

// TestDeleteRun_LeavesThePlanRecordItsOtherRunsReferTo: removing a run
// leaves its plan record, which is not the run's: the plan's other runs
// still load, and the plan is submitted again without writing it.
func TestDeleteRun_LeavesThePlanRecordItsOtherRunsReferTo(t *testing.T) {
	st := &planCountingStore{Store: setupOnceChecked(t)}
	b := setupWith(t, st)
	def := seq("a")
	gone, kept := b.submit(def).RunID, b.submit(def).RunID
	b.complete(b.poll("act-a"), `{}`)
	b.complete(b.poll("act-a"), `{}`)
	_, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: gone})
	require.NoError(t, err)
	b.tick()
	_, err = b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: gone})
	require.Equal(t, CodeNotFound, CodeOf(err))
	b.restart()
	require.Equal(t, runstate.RunCompleted, b.run(kept).Status)
	b.submit(def)
	require.EqualValues(t, 1, st.planPuts.Load())
}
