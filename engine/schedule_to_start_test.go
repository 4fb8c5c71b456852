package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// startTimers answers the schedule-to-start timers the store holds.
func startTimers(t *testing.T, b *bundle) []record.Timer {
	t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Timer.KeyPrefix()})
	require.NoError(t, err)
	var out []record.Timer
	for _, it := range res.Items {
		var tr record.Timer
		require.NoError(t, record.DecodeTimer(it.Value, &tr))
		if tr.Kind == record.TimerStart {
			out = append(out, tr)
		}
	}
	return out
}

// unhandled is a one-action definition whose task waits at most wait for a
// worker, tried twice a second apart.
func unhandled(wait time.Duration) definition.Definition {
	def := seq("a", "b")
	def.Actions[0].ScheduleToStartTimeout = definition.Duration(wait)
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 2, Strategy: definition.BackoffConstant,
		InitialBackoff: definition.Duration(time.Second)}
	def.Actions[0].OnFailure = definition.OnFailureAbort
	return def
}

func scenarioScheduleToStart_AnUnclaimedTaskFailsItsAttemptWithItsOwnClassLeavesTheQueueAndRetries(t *testing.T, b *bundle) {
	run := b.submit(unhandled(time.Minute))
	require.Len(t, startTimers(t, b), 1, "the timer is written with the task")
	b.clock.Advance(time.Minute - time.Millisecond)
	b.tick()
	require.Equal(t, runstate.StepScheduled, b.run(run.RunID).Step("a").Status, "not yet due")

	b.clock.Advance(time.Millisecond)
	b.tick()
	snap := b.run(run.RunID)
	st := snap.Step("a")
	require.Equal(t, runstate.StepScheduled, st.Status, "no worker ever started it")
	require.Len(t, st.Attempts, 1)
	require.Equal(t, runstate.AttemptTimedOut, st.Attempts[0].Outcome)
	require.Equal(t, definition.ErrorScheduleToStart, st.Attempts[0].Error.Class)
	require.True(t, st.Attempts[0].Error.Retryable)
	require.Contains(t, st.Attempts[0].Error.Message, `activity task of "act-a" on queue "default"`)
	b.pollNone("act-a") // the task left the queue with the failure: a late poll finds nothing
	requireNoKeys(t, b, record.QueuePrefix(tenant, "default"))

	b.clock.Advance(time.Second)
	b.tick() // the retry's task waits again, with a timer of its own
	require.Len(t, startTimers(t, b), 1)
	b.clock.Advance(time.Minute)
	b.tick()
	snap = b.run(run.RunID)
	require.Equal(t, runstate.StepFailed, snap.Step("a").Status, "the retry policy is spent")
	require.Equal(t, definition.ErrorScheduleToStart, snap.Step("a").Error.Class)
	require.Equal(t, runstate.RunFailed, snap.Status, "on_failure abort fails the run: it never hangs")
	require.Empty(t, startTimers(t, b))
}

func scenarioScheduleToStart_AClaimInTimeRemovesTheTimer(t *testing.T, b *bundle) {
	run := b.submit(unhandled(time.Minute))
	b.clock.Advance(30 * time.Second)
	task := b.poll("act-a")
	require.Empty(t, startTimers(t, b), "the claim removed the timer")
	b.clock.Advance(time.Minute)
	b.tick()
	st := b.run(run.RunID).Step("a")
	require.Equal(t, runstate.StepRunning, st.Status)
	require.Empty(t, st.Attempts)
	b.complete(task, `1`)
	require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Step("a").Status)
}

func scenarioScheduleToStart_TheDeploymentDefaultAppliesAndOnFailureSkipMovesOn(t *testing.T, b *bundle) {
	b.eng.cfg.ScheduleToStartTimeout = 30 * time.Second
	def := seq("a", "b")
	def.Actions[0].Retry.MaxAttempts = 1
	def.Actions[0].OnFailure = definition.OnFailureSkip
	run := b.submit(def)
	b.clock.Advance(30 * time.Second)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.StepSkipped, snap.Step("a").Status)
	require.Equal(t, definition.ErrorScheduleToStart, snap.Step("a").Error.Class)
	require.Equal(t, "b", b.poll("act-b").ActionID, "the run went on")
}

func scenarioScheduleToStart_APausedRunsTaskWaitsAgainInsteadOfFailing(t *testing.T, b *bundle) {
	run := b.submit(unhandled(time.Minute))
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.clock.Advance(time.Minute)
	b.tick()
	require.Empty(t, b.run(run.RunID).Step("a").Attempts, "a paused run claims nothing, so nothing is late")
	require.Len(t, startTimers(t, b), 1, "the wait starts again")
	_, err = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	b.complete(b.poll("act-a"), `1`)
}

func scenarioScheduleToStart_AGivenBackTaskWaitsAgainFromItsGiveBack(t *testing.T, b *bundle) {
	run := b.submit(unhandled(time.Minute))
	task := b.poll("act-a")
	b.clock.Advance(10 * time.Second)
	giveBack(b.eng, []*Task{task})
	timers := startTimers(t, b)
	require.Len(t, timers, 1)
	require.Equal(t, clockNow(b.eng).Add(time.Minute), timers[0].Due)
	b.clock.Advance(time.Minute)
	b.tick()
	st := b.run(run.RunID).Step("a")
	require.Len(t, st.Attempts, 1)
	require.Equal(t, definition.ErrorScheduleToStart, st.Attempts[0].Error.Class)
}

// TestScheduleToStart_AClaimRacingTheTimerExactlyOneWins_PostgreSQL: a poll
// and the due timer race for the same task on PostgreSQL, many times over;
// each time exactly one wins: either the worker holds the task and no attempt
// failed, or the attempt failed schedule_to_start and the worker got nothing.
func TestScheduleToStart_AClaimRacingTheTimerExactlyOneWins_PostgreSQL(t *testing.T) {
	db := sqltest.Require(t)
	b := setupWith(t, sqltest.Open(t, db.NewSchema(t)))
	claims, fires := 0, 0
	for range 30 {
		run := b.submit(unhandled(time.Minute))
		b.clock.Advance(time.Minute) // due: the timer may fire, and a poll may still claim
		var (
			wg    sync.WaitGroup
			tasks []*Task
			err   error
		)
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			tasks, err = b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-a"}})
		})
		wg.Go(func() {
			<-start
			_ = b.eng.Tick(b.ctx)
		})
		close(start)
		wg.Wait()
		require.NoError(t, err)
		require.NoError(t, b.eng.Tick(b.ctx)) // a fire that lost a race looks again: nothing left to do
		st := b.run(run.RunID).Step("a")
		switch len(tasks) {
		case 1:
			claims++
			require.Equal(t, runstate.StepRunning, st.Status)
			require.Empty(t, st.Attempts, "the claim won, yet the attempt failed")
			b.complete(tasks[0], `1`)
			b.complete(b.poll("act-b"), `2`)
		case 0:
			fires++
			require.Len(t, st.Attempts, 1, "no claim, yet no failure")
			require.Equal(t, definition.ErrorScheduleToStart, st.Attempts[0].Error.Class)
			_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
			require.NoError(t, err)
		default:
			t.Fatalf("one poll claimed %d tasks", len(tasks))
		}
		require.Empty(t, startTimers(t, b))
	}
	t.Logf("claims won %d, timers won %d", claims, fires)
}

// TestScheduleToStart_ACrashAtTheFiringCommitRecordsTheFailureOnce: the
// timer's commit is applied and its acknowledgement lost — the process lives
// on, or dies and another engine takes over the store; on every backend the
// attempt is failed exactly once, the task is out of its queue and the retry
// follows.
func TestScheduleToStart_ACrashAtTheFiringCommitRecordsTheFailureOnce(t *testing.T) {
	for _, backend := range crashBackends() {
		for _, die := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/die=%v", backend.name, die), func(t *testing.T) {
				first, reopen := backend.open(t)
				ks := &killSwitch{Store: first, die: die}
				b := setupWith(t, ks)
				run := b.submit(unhandled(time.Minute))
				b.clock.Advance(time.Minute)
				ks.mu.Lock()
				ks.killAt = ks.commits + 1 // the timer's decision is the tick's first commit
				ks.mu.Unlock()
				_ = b.eng.Tick(b.ctx)
				require.True(t, ks.fired)
				if die {
					eng, err := New(Config{Store: reopen(first), Clock: b.clock})
					require.NoError(t, err)
					b.eng, b.store = eng, eng.store
				}
				require.NoError(t, b.eng.Tick(b.ctx))
				st := b.run(run.RunID).Step("a")
				require.Len(t, st.Attempts, 1, "the failure is recorded once")
				require.Equal(t, definition.ErrorScheduleToStart, st.Attempts[0].Error.Class)
				require.Equal(t, 1, countOf(b.eventTypes(run.RunID), runstate.EvStepAttemptRecorded))
				requireNoKeys(t, b, record.QueuePrefix(tenant, "default"))
				b.clock.Advance(time.Second)
				require.NoError(t, b.eng.Tick(b.ctx))
				require.Equal(t, 2, b.poll("act-a").EngineAttempt, "the retry follows")
				b.requireProjectionsMatchCheckpoints() // now: a reopened store closes before the bundle's own check
				b.noProjectionCheck = true
			})
		}
	}
}

// countOf counts s in list.
func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func scenarioScheduleToStart_ARetryClaimedLaterStartsTheStepOnce(t *testing.T, b *bundle) {
	run := b.submit(unhandled(time.Minute))
	b.clock.Advance(time.Minute)
	b.tick()
	b.clock.Advance(time.Second)
	b.tick()
	task := b.poll("act-a")
	require.Equal(t, 2, task.EngineAttempt)
	st := b.run(run.RunID).Step("a")
	require.Equal(t, runstate.StepRunning, st.Status, "the first claim starts the step, whichever engine attempt it is")
	require.Equal(t, 1, countOf(b.eventTypes(run.RunID), runstate.EvStepStarted))
	b.complete(task, `1`)
	require.Equal(t, runstate.StepSucceeded, b.run(run.RunID).Step("a").Status)
}

func scenarioScheduleToStart_ACompensationNobodyClaimsFailsUnderTheHooksPolicyAndTheRunEnds(t *testing.T, b *bundle) {
	b.eng.cfg.ScheduleToStartTimeout = time.Minute
	def := seq("a", "b")
	def.Actions[0].Compensation = &definition.CompensationHook{Operation: "undo-a",
		Retry: definition.RetryPolicy{MaxAttempts: 2, InitialBackoff: definition.Duration(time.Second)}}
	def.Actions[1].OnFailure = definition.OnFailureCompensate
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	b.fail(b.poll("act-b"), definition.ErrorValidation)
	require.Equal(t, runstate.RunCompensating, b.run(run.RunID).Status)
	b.clock.Advance(time.Minute)
	b.tick() // the hook's first attempt: nobody claimed it
	b.clock.Advance(time.Second)
	b.tick() // its retry waits again
	b.clock.Advance(time.Minute)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status, "the run ends instead of compensating forever")
	require.Equal(t, runstate.CompFailed, snap.Step("a").CompStatus)
	require.Equal(t, definition.ErrorScheduleToStart, snap.Step("a").CompError.Class)
	require.Empty(t, startTimers(t, b))
}
