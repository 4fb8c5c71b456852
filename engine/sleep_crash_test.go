package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// sleepRun is a sequence a → nap (a one-minute sleep) → c.
func sleepRun() definition.Definition {
	d := seq("a", "nap", "c")
	d.Actions[1] = definition.Action{ID: "nap", Order: 2, Sleep: definition.Duration(time.Minute)}
	return d
}

// driveSleepRun runs sleepRun to the end, interrupting at commit killAt (0:
// never) — the store fails the commit's acknowledgement, and with die the
// process is dead and a new engine takes over the same data — and answers
// how many commits the run took and whether the crash point was reached.
func driveSleepRun(t *testing.T, backend crashBackend, killAt int, die bool) crashOutcome {
	t.Helper()
	ctx := context.Background()
	inner, reopen := backend.open(t)
	clk := clock.NewManual(testStart)
	ks := &killSwitch{Store: inner, killAt: killAt, die: die}
	eng, err := New(Config{Store: ks, Clock: clk})
	require.NoError(t, err)
	var runID string
	total := 0
	for range 200 {
		if ks.isDead() {
			total += ks.commits
			inner = reopen(inner)
			ks = &killSwitch{Store: inner}
			eng, err = New(Config{Store: ks, Clock: clk})
			require.NoError(t, err)
			ks.fired = true
		}
		if runID == "" {
			res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: sleepRun(), RunRequestID: "sleep-crash", Start: true, SubmittedBy: "alice"})
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
		tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a", "act-c"}, MaxTasks: 5})
		for _, task := range tasks {
			_, _ = eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{}`)})
		}
		if len(tasks) == 0 {
			clk.Advance(20 * time.Second) // the sleep comes due within a few rounds; a lost attempt times out in time
		}
	}
	require.NotEmpty(t, runID, "the run was never submitted")
	requireSleptOnce(t, eng, runID)
	return crashOutcome{commits: total + ks.commits, fired: ks.fired}
}

// requireSleptOnce checks the run completed with its sleep started once and
// fired once, and each activity's result recorded once.
func requireSleptOnce(t *testing.T, eng *Engine, runID string) {
	t.Helper()
	ctx := context.Background()
	snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	page, err := eng.ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(t, err)
	count := map[string]int{}
	for _, ev := range page.Events {
		count[ev.StepID+" "+ev.Type]++
	}
	require.Equal(t, 1, count["nap "+runstate.EvStepSleeping], "the sleep starts once")
	require.Equal(t, 1, count["nap "+runstate.EvStepCompleted], "the sleep fires once")
	require.Equal(t, 1, count["a "+runstate.EvStepCompleted])
	require.Equal(t, 1, count["c "+runstate.EvStepCompleted])
	nap := snap.Step("nap")
	require.False(t, nap.CompletedAt.Before(nap.WakeAt), "the sleep never ends before its wake time")
}

// A crash at any commit of a run that sleeps — the acknowledgement lost, or
// the process killed and another engine taking over its store — neither
// loses the sleep nor fires it twice (docs/semantics.md#sleep).
func TestCrash_ASleepFiresOnceAtEveryCommitPoint(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			clean := driveSleepRun(t, backend, 0, false)
			for _, mode := range []struct {
				name string
				die  bool
			}{{"store fails after commit", false}, {"process killed after commit", true}} {
				t.Run(mode.name, func(t *testing.T) {
					for killAt := 1; killAt <= clean.commits; killAt++ {
						out := driveSleepRun(t, backend, killAt, mode.die)
						require.True(t, out.fired, "crash point %d was never reached", killAt)
					}
				})
			}
		})
	}
}

// Two engines that find the same sleep due at once complete it once: the
// timer is deleted, on condition that it is still there, in the batch that
// completes the step (docs/semantics.md#sleep).
func TestSleep_TwoEnginesFindingTheSameDueSleepFireItOnce(t *testing.T) {
	for _, backend := range []struct {
		name string
		open func(t *testing.T) func() store.Store
	}{
		{"memory", func(t *testing.T) func() store.Store {
			st := memstore.New(memstore.Config{})
			return func() store.Store { return st }
		}},
		{"postgresql", func(t *testing.T) func() store.Store {
			schema := sqltest.NewSchema(t)
			return func() store.Store { return sqltest.Open(t, schema) }
		}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			clk := clock.NewManual(testStart)
			open := backend.open(t)
			engine := func(owner string) *Engine {
				e, err := New(Config{Store: open(), Clock: clk, Owner: owner})
				require.NoError(t, err)
				return e
			}
			one, two := engine("engine-1"), engine("engine-2")
			res, err := one.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: sleepRun(), Start: true, SubmittedBy: "alice"})
			require.NoError(t, err)
			tasks, err := one.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a"}})
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			_, err = one.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w", Output: json.RawMessage(`{}`)})
			require.NoError(t, err)
			clk.Advance(time.Minute)
			var wg sync.WaitGroup
			for _, e := range []*Engine{one, two, one, two} {
				wg.Add(1)
				go func() { defer wg.Done(); _ = e.Tick(ctx) }()
			}
			wg.Wait()
			require.NoError(t, one.Tick(ctx))
			page, err := two.ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: res.Run.RunID, PageSize: 1000})
			require.NoError(t, err)
			fired := 0
			for _, ev := range page.Events {
				if ev.StepID == "nap" && ev.Type == runstate.EvStepCompleted {
					fired++
				}
			}
			require.Equal(t, 1, fired)
		})
	}
}
