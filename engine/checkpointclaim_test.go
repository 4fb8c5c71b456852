package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// A hand-off's claim (checkpointclaim.go) writes no task record: the step
// keeps it, and every reader of the task reads it from there until a write
// of the record supersedes it. These tests hold each reader to that.

// requireNoTaskRecord requires that taskID has no task record stored.
func requireNoTaskRecord(t *testing.T, st store.Store, taskID, why string) {
	t.Helper()
	_, err := st.Get(t.Context(), record.TaskKey(taskID))
	require.ErrorIs(t, err, store.ErrNotFound, why)
}

// eagerClaim submits def, claims its first task by a poll and completes it
// asking for act-b: the task answered is a claim its checkpoint keeps.
func (b *bundle) eagerClaim(def definition.Definition) (*runstate.Snapshot, *Task) {
	b.t.Helper()
	run := b.submit(def)
	next := b.completeEager(b.poll("act-a"), "w1", "act-b")
	require.Len(b.t, next, 1)
	requireNoTaskRecord(b.t, b.store, next[0].TaskID, "an eager claim writes no task record")
	return run, next[0]
}

func TestCheckpointClaim_AHandOffWritesNoTaskRecordAndItsReportCompletesIt(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	polled := b.longPoll(b.ctx, "w2", 1, "act-b")
	b.complete(ta, `{"a":1}`)
	tb := received(t, polled)
	require.Len(t, tb, 1)
	requireNoTaskRecord(t, b.store, tb[0].TaskID, "a hand-off writes no task record")
	st := checkpointOf(t, b, run.RunID).Step("b")
	require.Equal(t, shortToken(run.RunID, tb[0].Token), st.ClaimToken)
	require.Equal(t, "w2", st.ClaimWorker)

	b.complete(tb[0], `{"b":2}`)
	requireNoTaskRecord(t, b.store, tb[0].TaskID, "its report writes none either")
	got := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, got.Status)
	require.Len(t, got.Step("b").Attempts, 1)
	st = checkpointOf(t, b, run.RunID).Step("b")
	require.Equal(t, shortToken(run.RunID, tb[0].Token), st.ClaimToken, "the token stays, for duplicates")
	require.Empty(t, st.ClaimWorker)
	require.True(t, st.ClaimedAt.IsZero() && st.ClaimDeadline.IsZero())
}

// A report of a checkpoint claim sent again — to the engine that applied
// it, or to one that only reads the store, as after a restart — is a
// duplicate with the same token and result, and a lost claim otherwise.
func TestCheckpointClaim_AReportSentAgainIsADuplicateOnAFreshEngineReadingOnlyTheStore(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	run, tb := b.eagerClaim(seq("a", "b", "c"))
	b.complete(tb, `1`)
	for _, e := range []*bundle{b, setupWith(t, st)} {
		res, err := e.eng.CompleteTask(e.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.NoError(t, err)
		require.True(t, res.Duplicate)
		_, err = e.eng.FailTask(e.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", ErrorClass: definition.ErrorValidation})
		require.Equal(t, CodeTaskClaimLost, CodeOf(err), "a failure of a completed claim")
		_, err = e.eng.CompleteTask(e.ctx, ReportParams{TenantID: tenant, Token: tb.TaskID + "#00", WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.Equal(t, CodeTaskClaimLost, CodeOf(err), "another token")
		_, err = e.eng.CompleteTask(e.ctx, ReportParams{TenantID: "tenant-b", Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		require.Equal(t, CodeTaskClaimLost, CodeOf(err), "another tenant")
		hb, err := e.eng.HeartbeatTask(e.ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token})
		require.NoError(t, err)
		require.True(t, hb.CancelRequested, "a heartbeat of the reported claim asks to stop")
	}
	requireNoTaskRecord(t, st, tb.TaskID, "no duplicate, heartbeat or lost claim wrote the record")
	snap := b.run(run.RunID)
	require.Len(t, snap.Step("b").Attempts, 1)
	require.Equal(t, runstate.StepScheduled, snap.Step("c").Status)
}

// A failure whose retry was claimed by another hand-off since is still a
// duplicate when reported again: the step keeps the ended claim's token.
func TestCheckpointClaim_AFailureReportedAgainAfterItsRetryWasHandedOffIsADuplicate(t *testing.T) {
	b := setup(t)
	def := seq("a", "b")
	def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 3}
	run, first := b.eagerClaim(def)
	b.fail(first, definition.ErrorTransient)
	polled := b.longPoll(b.ctx, "w2", 1, "act-b")
	b.clock.Advance(time.Minute)
	b.tick()
	second := received(t, polled)
	require.Len(t, second, 1)
	require.Equal(t, 2, second[0].EngineAttempt)
	requireNoTaskRecord(t, b.store, second[0].TaskID, "the retry is a checkpoint claim too")
	again := b.fail(first, definition.ErrorTransient)
	require.True(t, again.Duplicate)
	b.complete(second[0], `1`)
	require.True(t, b.fail(first, definition.ErrorTransient).Duplicate, "still, once the retry was reported too")
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.Len(t, snap.Step("b").Attempts, 2)
}

// The first heartbeat of a checkpoint claim writes its task record (with
// its details), and the record rules from then on; the report after it
// completes the claim and keeps the details out of nothing.
func TestCheckpointClaim_TheFirstHeartbeatWritesTheRecordWhichRulesFromThenOn(t *testing.T) {
	b := setup(t)
	run, tb := b.eagerClaim(seq("a", "b"))
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token, Details: json.RawMessage(`{"p":1}`)})
	require.NoError(t, err)
	require.False(t, hb.CancelRequested)
	require.Equal(t, tb.Deadline, hb.Deadline)
	rec, version := storedTask(t, b.store, tb.TaskID)
	require.NotZero(t, version)
	require.Equal(t, record.TaskClaimed, rec.State)
	require.Equal(t, tb.Token, rec.Token)
	require.JSONEq(t, `{"p":1}`, string(rec.HeartbeatDetails))
	b.complete(tb, `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`2`)})
	require.NoError(t, err)
	require.True(t, res.Duplicate)
}

// The first heartbeat racing the report, on two engines of one store: the
// report applies exactly once, and the heartbeat either kept the claim
// alive before it or asks to stop.
func TestCheckpointClaim_TheFirstHeartbeatRacingTheReportNeitherLosesNorRevivesTheClaim(t *testing.T) {
	st := memstore.New(memstore.Config{})
	engines := []*bundle{setupWith(t, st), setupWith(t, st)}
	for range 20 {
		run, tb := engines[0].eagerClaim(seq("a", "b"))
		var wg sync.WaitGroup
		var hb *HeartbeatResult
		var hbErr, repErr error
		wg.Go(func() {
			hb, hbErr = engines[1].eng.HeartbeatTask(engines[1].ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token, Details: json.RawMessage(`1`)})
		})
		wg.Go(func() {
			_, repErr = engines[0].eng.CompleteTask(engines[0].ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`2`)})
		})
		wg.Wait()
		require.NoError(t, hbErr)
		require.NoError(t, repErr)
		require.NotNil(t, hb)
		snap := engines[1].run(run.RunID)
		require.Equal(t, runstate.RunCompleted, snap.Status)
		require.Len(t, snap.Step("b").Attempts, 1, "the report applied once")
		again, err := engines[1].eng.HeartbeatTask(engines[1].ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token})
		require.NoError(t, err)
		require.True(t, again.CancelRequested, "the claim stays ended")
	}
}

// A checkpoint claim never reported times out at its attempt deadline,
// through the deadline index, exactly once across two engines; the
// timeout writes its record (lost) and the step forgets the claim.
func TestCheckpointClaim_TheAttemptDeadlineOfANeverReportedClaimFiresOnceAcrossTwoEngines(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	other := setupWith(t, st, func(c *Config) { c.Clock = b.clock })
	other.clock = b.clock
	def := seq("a", "b")
	def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 3}
	run, tb := b.eagerClaim(def)
	b.clock.Advance(tb.Deadline.Sub(b.clock.Now()) + time.Second)
	var wg sync.WaitGroup
	for _, e := range []*bundle{b, other} {
		wg.Go(func() { _ = fireDueDeadlines(e.ctx, e.eng) })
	}
	wg.Wait()
	for _, e := range []*bundle{b, other} {
		require.NoError(t, fireDueDeadlines(e.ctx, e.eng))
	}
	snap := b.run(run.RunID)
	attempts := snap.Step("b").Attempts
	require.Len(t, attempts, 1, "the deadline fired once")
	require.Equal(t, runstate.AttemptTimedOut, attempts[0].Outcome)
	rec, _ := storedTask(t, st, tb.TaskID)
	require.Equal(t, record.TaskLost, rec.State, "the timeout wrote its record")
	require.Empty(t, checkpointOf(t, b, run.RunID).Step("b").ClaimToken, "the step forgot the claim")
	_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`2`)})
	require.Equal(t, CodeTaskClaimLost, CodeOf(err), "a late report of the timed-out claim")
}

// A report racing the attempt deadline of a checkpoint claim, on two
// engines: the attempt ends exactly once, as the one that won says.
func TestCheckpointClaim_AReportRacingTheDeadlineEndsTheAttemptOnce(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	other := setupWith(t, st, func(c *Config) { c.Clock = b.clock })
	other.clock = b.clock
	for range 10 {
		def := seq("a", "b")
		def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 1}
		run, tb := b.eagerClaim(def)
		b.clock.Advance(tb.Deadline.Sub(b.clock.Now()) + time.Second)
		var wg sync.WaitGroup
		var repErr error
		wg.Go(func() {
			_, repErr = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`2`)})
		})
		wg.Go(func() { _ = fireDueDeadlines(other.ctx, other.eng) })
		wg.Wait()
		require.NoError(t, fireDueDeadlines(other.ctx, other.eng))
		snap := b.run(run.RunID)
		attempts := snap.Step("b").Attempts
		require.Len(t, attempts, 1, "the attempt ended once")
		if repErr == nil {
			require.Equal(t, runstate.AttemptSucceeded, attempts[0].Outcome)
			require.Equal(t, runstate.RunCompleted, snap.Status)
		} else {
			require.Equal(t, CodeTaskClaimLost, CodeOf(repErr), "the report lost to the deadline")
			require.Equal(t, runstate.AttemptTimedOut, attempts[0].Outcome)
		}
	}
}

// The heartbeat timeout of a checkpoint claim fires: its timer finds the
// claim in the step, times the attempt out and writes its record.
func TestCheckpointClaim_TheHeartbeatTimeoutOfAClaimWithoutARecordFires(t *testing.T) {
	b := setup(t)
	def := seq("a", "b")
	def.Actions[1].HeartbeatTimeout = definition.Duration(30 * time.Second)
	def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 1}
	run, tb := b.eagerClaim(def)
	require.False(t, checkpointOf(t, b, run.RunID).Step("b").ClaimHeartbeatDue.IsZero())
	b.clock.Advance(31 * time.Second)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.AttemptTimedOut, snap.Step("b").Attempts[0].Outcome)
	require.Equal(t, runstate.RunFailed, snap.Status)
	rec, _ := storedTask(t, b.store, tb.TaskID)
	require.Equal(t, record.TaskLost, rec.State)
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token})
	require.NoError(t, err)
	require.True(t, hb.CancelRequested)
}

// An eager claim whose completion's call ended is given back: the claim
// its checkpoint kept becomes a ready record, and the step forgets it.
func TestCheckpointClaim_AnUndeliveredClaimIsGivenBackAsAReadyRecord(t *testing.T) {
	b, es := setupEnding(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	ctx, end := context.WithCancel(b.ctx)
	defer end()
	es.endAfterNextCommit(end)
	_, err := b.eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{}`),
		Next: &PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-b"}}})
	require.ErrorIs(t, err, context.Canceled)
	s := checkpointOf(t, b, run.RunID)
	require.Empty(t, s.Step("b").ClaimToken, "the give-back took the claim out of its step")
	rec, _ := storedTask(t, b.store, s.Step("b").TaskID)
	require.Equal(t, record.TaskReady, rec.State)
	tb := b.requireReadyAgain("act-b", "b")
	b.complete(tb, `{}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// A poller's in-flight count settles a checkpoint claim reported to
// another engine.
func TestCheckpointClaim_AClaimReportedToAnotherEngineIsSettled(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	other := setupWith(t, st)
	_, tb := b.eagerClaim(seq("a", "b"))
	gone, err := settledTokens(b.ctx, b.eng, []string{tb.Token})
	require.NoError(t, err)
	require.Empty(t, gone, "still claimed")
	other.complete(tb, `1`)
	gone, err = settledTokens(b.ctx, b.eng, []string{tb.Token})
	require.NoError(t, err)
	require.Equal(t, []string{tb.Token}, gone)
}

// Retention removes a run with a claim its checkpoint keeps, and the
// heartbeat timer that claim names, which no task record names.
func TestCheckpointClaim_RetentionRemovesTheTimersOfAClaimWithoutARecord(t *testing.T) {
	b := setup(t)
	def := seq("a", "b")
	def.Actions[1].HeartbeatTimeout = definition.Duration(time.Hour)
	run, _ := b.eagerClaim(def)
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Timer.KeyPrefix()})
	require.NoError(t, err)
	for _, it := range res.Items {
		require.NotContains(t, string(it.Key), run.RunID, "a timer of the removed run is left")
	}
	_, err = b.store.Get(b.ctx, record.RunKey(run.RunID))
	require.True(t, errors.Is(err, store.ErrNotFound))
}

// A failure reported to the engine that made a checkpoint claim, after
// another engine's heartbeat wrote the claim's record with details, is
// decided on that record: the claim's absence it read is a condition of
// its commit, so the details reach the step's next attempt.
func TestCheckpointClaim_AFailureAfterAnotherEnginesFirstHeartbeatKeepsItsDetails(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st)
	other := setupWith(t, st)
	def := seq("a", "b")
	def.Actions[1].Retry = definition.RetryPolicy{MaxAttempts: 3}
	_, tb := b.eagerClaim(def)
	_, err := other.eng.HeartbeatTask(other.ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token, Details: json.RawMessage(`{"done":7}`)})
	require.NoError(t, err)
	b.fail(tb, definition.ErrorTransient)
	b.clock.Advance(time.Minute)
	b.tick()
	next := b.poll("act-b")
	require.Equal(t, 2, next.EngineAttempt)
	require.JSONEq(t, `{"done":7}`, string(next.HeartbeatDetails))
}

// On every store, a checkpoint claim is reported with eager dispatch, the
// store reopened as a restarted process reopens it, and the report sent
// again to a fresh engine: it is a duplicate, a heartbeat asks to stop, and
// the eager claim its first answer carried, read back from the checkpoint
// alone, is given back and completes the run.
func TestCheckpointClaim_AcrossARestartOnEveryStoreADuplicateStaysOneAndAClaimStillOutCompletes(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			first, reopen := backend.open(t)
			b := setupWith(t, first)
			b.noProjectionCheck = true // its store is closed by the restart; r checks the same runs
			run := b.submit(seq("a", "b", "c"))
			tb := b.completeEager(b.poll("act-a"), "w1", "act-b")[0]
			tc := b.completeEager(tb, "w1", "act-c")[0]
			requireNoTaskRecord(t, first, tb.TaskID, "an eager claim writes no task record")
			requireNoTaskRecord(t, first, tc.TaskID, "an eager claim writes no task record")

			r := setupWith(t, reopen(first))
			res, err := r.eng.CompleteTask(r.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`{}`)})
			require.NoError(t, err)
			require.True(t, res.Duplicate)
			hb, err := r.eng.HeartbeatTask(r.ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token})
			require.NoError(t, err)
			require.True(t, hb.CancelRequested)
			// The retried completion's worker never had c's claim: the fresh
			// engine, reading it from the checkpoint alone, gives it back.
			again := r.poll("act-c")
			require.Equal(t, tc.TaskID, again.TaskID)
			require.NotEqual(t, tc.Token, again.Token)
			r.complete(again, `3`)
			snap := r.run(run.RunID)
			require.Equal(t, runstate.RunCompleted, snap.Status)
			for _, id := range []string{"a", "b", "c"} {
				require.Len(t, snap.Step(id).Attempts, 1, "step %s ran once", id)
			}
		})
	}
}

// A hand-off claim as an older weftd stored it — in its task record, with
// no claim in the checkpoint's step — is read from the record: its report
// completes it (leaving the record claimed, the checkpoint ending it), a
// duplicate is one, and a heartbeat after it asks to stop.
func TestPersistedFormat_AHandOffClaimAnOlderWeftdKeptInItsTaskRecordIsReportedAsBefore(t *testing.T) {
	b := setup(t)
	run, tb := b.eagerClaim(seq("a", "b"))
	rec, version, err := b.eng.records.Task(b.ctx, tb.TaskID)
	require.NoError(t, err)
	require.Zero(t, version)
	s, ckptVersion, err := b.eng.records.LoadCheckpointForChange(b.ctx, run.RunID)
	require.NoError(t, err)
	st := s.Step("b")
	st.ClaimToken, st.ClaimWorker, st.ClaimedAt, st.ClaimDeadline, st.ClaimHeartbeatDue = "", "", time.Time{}, time.Time{}, time.Time{}
	rec.Seq = s.LastSeq
	_, err = b.store.Commit(b.ctx, &store.Batch{
		Conditions: []store.Condition{store.IfVersion(runlog.CheckpointKey(run.RunID), ckptVersion)},
		Ops: []store.Op{runlog.PutCheckpoint(run.RunID, s),
			store.Put(record.TaskKey(tb.TaskID), runcodec.AppendTask(nil, rec.Stored()))}})
	require.NoError(t, err)
	b.eng.records.ForgetCheckpoint(run.RunID)
	b.eng.records.ForgetTask(tb.TaskID)

	b.complete(tb, `2`)
	stored, _ := storedTask(t, b.store, tb.TaskID)
	require.Equal(t, record.TaskClaimed, stored.State)
	require.Equal(t, "completed", claimEnded(checkpointOf(t, b, run.RunID), &stored))
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`2`)})
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	hb, err := b.eng.HeartbeatTask(b.ctx, HeartbeatParams{TenantID: tenant, Token: tb.Token})
	require.NoError(t, err)
	require.True(t, hb.CancelRequested)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
