package engine

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// A worker's report on an activity claim writes no task record: the
// decision's checkpoint ends the claim (claimEnded). These tests hold every
// reader of a task record to that.

// taskVersion answers a task record as stored and its version.
func storedTask(t *testing.T, st store.Store, taskID string) (record.Task, uint64) {
	t.Helper()
	it, err := st.Get(t.Context(), record.TaskKey(taskID))
	require.NoError(t, err)
	var rec record.Task
	require.NoError(t, record.DecodeTask(it.Value, &rec))
	return rec, it.Version
}

// checkpointOf answers the run's stored checkpoint.
func checkpointOf(t *testing.T, b *bundle, runID string) *runstate.State {
	t.Helper()
	s, _, err := b.eng.records.LoadCheckpoint(b.ctx, runID)
	require.NoError(t, err)
	return s
}

func TestReport_OnAnActivityClaimWritesNoTaskRecordAndItsCheckpointEndsTheClaim(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	_, claimed := storedTask(t, b.store, ta.TaskID)
	b.complete(ta, `1`)
	rec, version := storedTask(t, b.store, ta.TaskID)
	require.Equal(t, claimed, version, "the completion wrote no task record")
	require.Equal(t, record.TaskClaimed, rec.State)
	require.Equal(t, "completed", claimEnded(checkpointOf(t, b, run.RunID), &rec))

	tb := b.poll("act-b")
	_, claimed = storedTask(t, b.store, tb.TaskID)
	b.fail(tb, definition.ErrorValidation)
	rec, version = storedTask(t, b.store, tb.TaskID)
	require.Equal(t, claimed, version, "the failure wrote no task record")
	require.Equal(t, "failed", claimEnded(checkpointOf(t, b, run.RunID), &rec))
}

// The rules of a duplicate hold for a claim the checkpoint ended, on the
// engine that applied the report and on one that only reads the store: the
// same report again is a duplicate; another result, or another token, is a
// lost claim.
func TestReport_OnAClaimTheCheckpointEndedIsADuplicateOnlyWithItsTokenAndResult(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	b.complete(ta, `1`)
	for _, e := range []*bundle{b, setupWith(t, st)} {
		res, err := e.eng.CompleteTask(e.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.NoError(t, err)
		require.True(t, res.Duplicate)
		_, err = e.eng.FailTask(e.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", ErrorClass: definition.ErrorValidation})
		require.Equal(t, CodeTaskClaimLost, CodeOf(err), "a failure of a completed claim")
		_, err = e.eng.CompleteTask(e.ctx, ReportParams{TenantID: tenant, Token: ta.TaskID + "#00", WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.Equal(t, CodeTaskClaimLost, CodeOf(err), "another token")
		_, err = e.eng.CompleteTask(e.ctx, ReportParams{TenantID: "tenant-b", Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.Equal(t, CodeTaskClaimLost, CodeOf(err), "another tenant")
	}
	snap := b.run(run.RunID)
	require.Len(t, snap.Step("a").Attempts, 1)
	require.Equal(t, runstate.StepScheduled, snap.Step("b").Status)
}

// A failure retried since — its step's next attempt claimed — is still
// answered as a duplicate when reported again, and changes nothing.
func TestReport_AFailureReportedAgainAfterItsRetryWasClaimedIsADuplicate(t *testing.T) {
	b := setup(t)
	def := seq("a")
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 3}
	run := b.submit(def)
	first := b.poll("act-a")
	b.fail(first, definition.ErrorTransient)
	b.clock.Advance(time.Minute)
	b.tick()
	second := b.poll("act-a")
	require.Equal(t, 2, second.EngineAttempt)
	again := b.fail(first, definition.ErrorTransient)
	require.True(t, again.Duplicate)
	b.complete(second, `1`)
	again = b.fail(first, definition.ErrorTransient)
	require.True(t, again.Duplicate, "still, once the later attempt was reported too")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Len(t, snap.Step("a").Attempts, 2)
}

// Two reports of one claim racing, on two engines of one store: exactly
// one applies, the other is a duplicate.
func TestReport_TwoRacingReportsOfOneClaimApplyOnceAndTheOtherIsADuplicate(t *testing.T) {
	st := memstore.New(memstore.Config{})
	engines := []*bundle{setupWith(t, st), setupWith(t, st)}
	for range 20 {
		run := engines[0].submit(seq("a", "b"))
		ta := engines[0].poll("act-a")
		var wg sync.WaitGroup
		results := make([]*ReportResult, 2)
		errs := make([]error, 2)
		for i, e := range engines {
			wg.Go(func() {
				results[i], errs[i] = e.eng.CompleteTask(e.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
			})
		}
		wg.Wait()
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		require.True(t, results[0].Duplicate != results[1].Duplicate, "one applies, one is a duplicate")
		snap := engines[0].run(run.RunID)
		require.Len(t, snap.Step("a").Attempts, 1)
		engines[0].complete(engines[0].poll("act-b"), `2`)
	}
}

// A heartbeat after the report asks the worker to stop and writes nothing;
// heartbeats racing the report never bring the claim back.
func TestHeartbeat_OnAClaimAReportEndedAsksToCancelAndNeverRevivesIt(t *testing.T) {
	st := memstore.New(memstore.Config{})
	engines := []*bundle{setupWith(t, st), setupWith(t, st)}
	b := engines[0]
	for range 10 {
		run := b.submit(seq("a"))
		ta := b.poll("act-a")
		var wg sync.WaitGroup
		wg.Go(func() { b.complete(ta, `1`) })
		for range 3 {
			wg.Go(func() {
				_, err := engines[1].eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: ta.Token, Details: json.RawMessage(`{"p":1}`)})
				require.NoError(t, err)
			})
		}
		wg.Wait()
		_, version := storedTask(t, st, ta.TaskID)
		for _, e := range engines {
			hb, err := e.eng.HeartbeatTask(e.ctx, HeartbeatParams{TenantID: tenant, Token: ta.Token})
			require.NoError(t, err)
			require.True(t, hb.CancelRequested)
		}
		rec, after := storedTask(t, st, ta.TaskID)
		require.Equal(t, version, after, "a heartbeat after the report writes nothing")
		require.Equal(t, "completed", claimEnded(checkpointOf(t, b, run.RunID), &rec))
		snap := b.run(run.RunID)
		require.Equal(t, runstate.RunCompleted, snap.Status)
		require.Len(t, snap.Step("a").Attempts, 1)
	}
}

// A claim's heartbeat timer and attempt deadline, once a report ended the
// claim, time nothing out, however late they come.
func TestTimers_OfAClaimAReportEndedTimeNothingOut(t *testing.T) {
	b := setup(t)
	def := seq("a", "b")
	def.Actions[0].HeartbeatTimeout = definition.Ms(1000)
	def.Actions[0].Timeout = definition.Ms(2000)
	run := b.submit(def)
	ta := b.poll("act-a")
	b.complete(ta, `1`)
	b.clock.Advance(time.Minute)
	b.tick()
	snap := b.run(run.RunID)
	require.Len(t, snap.Step("a").Attempts, 1)
	require.Equal(t, runstate.AttemptSucceeded, snap.Step("a").Attempts[0].Outcome)
	require.Equal(t, runstate.StepSucceeded, snap.Step("a").Status)
	b.complete(b.poll("act-b"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// A report and the claim's deadline firing race: exactly one of them ends
// the attempt.
func TestReport_RacingTheAttemptDeadlineEndsTheAttemptOnce(t *testing.T) {
	st := memstore.New(memstore.Config{})
	engines := []*bundle{setupWith(t, st), setupWith(t, st)}
	for range 10 {
		def := seq("a")
		def.Actions[0].Timeout = definition.Ms(1000)
		def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 1} // a timeout fails the run: no retry to poll next time
		run := engines[0].submit(def)
		ta := engines[0].poll("act-a")
		engines[1].clock.Advance(time.Minute)
		var wg sync.WaitGroup
		var reportErr error
		wg.Go(func() {
			_, reportErr = engines[0].eng.CompleteTask(engines[0].ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		})
		wg.Go(func() { engines[1].tick() })
		wg.Wait()
		engines[1].tick()
		snap := engines[0].run(run.RunID)
		require.Len(t, snap.Step("a").Attempts, 1, "the attempt ends once (report: %v)", reportErr)
		if reportErr == nil {
			require.Equal(t, runstate.AttemptSucceeded, snap.Step("a").Attempts[0].Outcome)
		} else {
			require.Equal(t, CodeTaskClaimLost, CodeOf(reportErr))
			require.Equal(t, runstate.AttemptTimedOut, snap.Step("a").Attempts[0].Outcome)
		}
		engines[0].clock.Advance(time.Minute)
	}
}

// The poller accounting of an engine that did not apply a report counts
// the claim as settled once the checkpoint ends it.
func TestPollers_AClaimReportedToAnotherEngineIsSettled(t *testing.T) {
	st := memstore.New(memstore.Config{})
	a, other := setupWith(t, st), setupWith(t, st)
	a.submit(seq("a", "b"))
	ta := a.poll("act-a")
	gone, err := settledTokens(other.ctx, other.eng, []string{ta.Token})
	require.NoError(t, err)
	require.Empty(t, gone, "claimed, not reported")
	a.complete(ta, `1`)
	gone, err = settledTokens(other.ctx, other.eng, []string{ta.Token})
	require.NoError(t, err)
	require.Equal(t, []string{ta.Token}, gone)
}

// The tokens a completion's eager dispatch claimed stay in the completed
// step's checkpoint state only until their tasks are reported.
func TestEagerDispatch_AnEagerTasksReportTakesItsTokenOutOfTheCheckpoint(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b", "c"))
	ta := b.poll("act-a")
	next := &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-b", "act-c"}}
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`1`), Next: next})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 1)
	tb := res.Tasks[0]
	require.Equal(t, []string{shortToken(run.RunID, tb.Token)}, checkpointOf(t, b, run.RunID).Step("a").EagerTokens)
	rec, version, err := b.eng.records.Task(b.ctx, tb.TaskID)
	require.NoError(t, err)
	require.Zero(t, version, "an eager claim writes no task record")
	require.Equal(t, "a", rec.EagerOf)

	res, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`2`), Next: next})
	require.NoError(t, err)
	require.Len(t, res.Tasks, 1)
	s := checkpointOf(t, b, run.RunID)
	require.Empty(t, s.Step("a").EagerTokens, "b's report took its token out")
	require.Equal(t, []string{shortToken(run.RunID, res.Tasks[0].Token)}, s.Step("b").EagerTokens)
	b.complete(res.Tasks[0], `3`)
	s = checkpointOf(t, b, run.RunID)
	require.Equal(t, runstate.RunCompleted, s.Status)
	require.Empty(t, s.Step("b").EagerTokens)
}

// A completion an older weftd recorded in the task record — done, with its
// eager claims' tokens — is still a duplicate whose retry gives them back.
func TestPersistedFormat_ADoneRecordAnOlderWeftdWroteAnswersADuplicateAndGivesBackItsEagerClaims(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	report := ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-b"}}}
	first, err := b.eng.CompleteTask(b.ctx, report)
	require.NoError(t, err)
	require.Len(t, first.Tasks, 1)
	// As an older weftd stored it: the record done, its eager tokens in it.
	rec, _ := storedTask(t, b.store, ta.TaskID)
	rec.State, rec.Result, rec.EagerTokens = record.TaskDone, "completed", []string{first.Tasks[0].Token}
	js, err := json.Marshal(&rec)
	require.NoError(t, err)
	_, err = b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(record.TaskKey(ta.TaskID), js)}})
	require.NoError(t, err)
	b.eng.records.ForgetTask(ta.TaskID)

	again, err := b.eng.CompleteTask(b.ctx, report)
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	tb, _ := storedTask(t, b.store, first.Tasks[0].TaskID)
	require.Equal(t, record.TaskReady, tb.State, "given back")
	b.complete(b.poll("act-b"), `1`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// A run whose claims reports ended is removed whole: its task records go,
// and nothing its reports removed is deleted again.
func TestRetention_RemovesARunWhoseClaimsTheCheckpointEnded(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	b.complete(b.poll("act-a"), `1`)
	b.complete(b.poll("act-b"), `2`)
	_, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: record.TaskPrefix(run.RunID), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	require.Empty(t, res.Items)
}
