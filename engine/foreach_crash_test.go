package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
)

// fanOutCrashItems is the crash test's fan-out: four items, two at a time.
const fanOutCrashItems = 4

// fanOutCrashRun is a sequence a → ship (a forEach over four items, two at a
// time, each input reading item and index) → c.
func fanOutCrashRun() definition.Definition {
	d := fanOut(fmt.Sprintf("lists.range(%d)", fanOutCrashItems), 2)
	d.Actions[1].Timeout = definition.Ms(30_000)
	return d
}

// driveFanOutRun runs fanOutCrashRun to the end, interrupting at commit
// killAt (0: never) — the store fails the commit's acknowledgement, and with
// die the process is dead and a new engine takes over the same data — and
// answers how many commits the run took and whether the crash point was
// reached. Every item's work is applied once, by its idempotency key, as an
// external system keyed by it would.
func driveFanOutRun(t *testing.T, backend crashBackend, killAt int, die bool) crashOutcome {
	t.Helper()
	ctx := context.Background()
	inner, reopen := backend.open(t)
	clk := clock.NewManual(testStart)
	ks := &killSwitch{Store: inner, killAt: killAt, die: die}
	eng, err := New(Config{Store: ks, Clock: clk})
	require.NoError(t, err)
	var runID string
	applied := map[string]string{} // idempotency key → the item it was applied for
	total := 0
	for range 300 {
		if ks.isDead() {
			total += ks.commits
			inner = reopen(inner)
			ks = &killSwitch{Store: inner}
			eng, err = New(Config{Store: ks, Clock: clk})
			require.NoError(t, err)
			ks.fired = true
		}
		if runID == "" {
			res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: fanOutCrashRun(), RunRequestID: "fan-crash", Start: true, SubmittedBy: "alice"})
			if err == nil {
				runID = res.Run.RunID
			}
			continue
		}
		_ = eng.Tick(ctx)
		snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
		if err == nil && snap.Status.Terminal() {
			break
		}
		tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a", "act-ship", "act-b"}, MaxTasks: 5})
		for _, task := range tasks {
			if task.ItemOf != "" {
				require.Equal(t, runID+":"+task.ActionID, task.IdempotencyKey, "an item's own key")
				if _, done := applied[task.IdempotencyKey]; !done {
					applied[task.IdempotencyKey] = task.ActionID
				}
			}
			_, _ = eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(fmt.Sprint(task.Index))})
		}
		if len(tasks) == 0 {
			clk.Advance(20 * time.Second) // a lost attempt times out within two rounds
		}
	}
	require.NotEmpty(t, runID, "the run was never submitted")
	snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.JSONEq(t, `[0,1,2,3]`, string(snap.Step("ship").Output), "the output in item order")
	page, err := eng.ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(t, err)
	count := map[string]int{}
	for _, ev := range page.Events {
		count[ev.StepID+" "+ev.Type]++
	}
	require.Equal(t, 1, count["ship "+runstate.EvStepFannedOut], "the fan-out is announced once")
	for i := range fanOutCrashItems {
		id := definition.ItemID("ship", i)
		require.Equal(t, 1, count[id+" "+runstate.EvStepScheduled], "%s is dispatched once", id)
		require.Equal(t, 1, count[id+" "+runstate.EvStepCompleted], "%s's result is recorded once", id)
		require.Equal(t, id, applied[runID+":"+id], "%s's work is applied under its own key", id)
	}
	return crashOutcome{commits: total + ks.commits, fired: ks.fired}
}

// A crash at any commit of a run that fans out — around its list's
// evaluation, each item's dispatch and each item's report; the
// acknowledgement lost, or the process killed and another engine taking
// over its store — dispatches each item once, records each item's result
// once and completes the fan-out with its output in item order
// (docs/semantics.md#for-each).
func TestCrash_AFanOutDispatchesAndRecordsEachItemOnceAtEveryCommitPoint(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			clean := driveFanOutRun(t, backend, 0, false)
			for _, mode := range []struct {
				name string
				die  bool
			}{{"store fails after commit", false}, {"process killed after commit", true}} {
				t.Run(mode.name, func(t *testing.T) {
					for killAt := 1; killAt <= clean.commits; killAt++ {
						out := driveFanOutRun(t, backend, killAt, mode.die)
						require.True(t, out.fired, "crash point %d was never reached", killAt)
					}
				})
			}
		})
	}
}
