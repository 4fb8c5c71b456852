package engine

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/store"
)

func started(s runstate.RunStatus) bool {
	switch s {
	case runstate.RunRunning, runstate.RunBlocked, runstate.RunPaused, runstate.RunCompensating:
		return true
	}
	return false
}

func (b *bundle) countStarted() int {
	b.t.Helper()
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(b.t, err)
	n := 0
	for _, r := range list.Runs {
		if started(r.Status) {
			n++
		}
	}
	return n
}

func TestBackpressure_ModesUnderFiveTimesTheLimit(t *testing.T) {
	for _, backend := range scenarioBackends {
		for _, mode := range []definition.BackpressureMode{definition.BackpressureReject, definition.BackpressureQueue, definition.BackpressureDelay} {
			t.Run(backend.name+"/"+string(mode), func(t *testing.T) {
				backpressureUnderLoad(t, setupWith(t, backend.open(t)), mode)
			})
		}
	}
}

func backpressureUnderLoad(t *testing.T, b *bundle, mode definition.BackpressureMode) {
	b.eng.cfg.Limits.PerTenant = 2
	def := seq("a")
	def.Backpressure = mode
	var accepted []string
	for range 10 {
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
		if mode == definition.BackpressureReject && err != nil {
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, CodeResourceExhausted, e.Code)
			require.Equal(t, DefaultRetryAfter, e.RetryAfter)
			continue
		}
		require.NoError(t, err)
		accepted = append(accepted, res.Run.RunID)
	}
	switch mode {
	case definition.BackpressureReject:
		require.Len(t, accepted, 2, "over the limit, submissions are refused and nothing is written")
	case definition.BackpressureQueue:
		require.Len(t, accepted, 10)
		require.Equal(t, 2, b.countStarted())
	case definition.BackpressureDelay:
		require.Len(t, accepted, 10)
		now := b.pollAll("act-a", 100)
		require.Len(t, now, 2, "over-limit runs' activities start later")
		for _, task := range now {
			b.complete(task, `1`)
		}
		b.clock.Advance(DefaultDelay)
		b.tick()
	}
	for range 50 {
		tasks := b.pollAll("act-a", 100)
		if mode == definition.BackpressureQueue {
			require.LessOrEqual(t, b.countStarted(), 2, "never more runs started than the limit")
		}
		for _, task := range tasks {
			b.complete(task, `1`)
		}
		b.tick()
	}
	for _, id := range accepted {
		require.Equal(t, runstate.RunCompleted, b.run(id).Status, "run %s", id)
	}
}

func TestBackpressure_DefinitionLimitCapsItsOwnRuns(t *testing.T) {
	b := setup(t)
	capped := seq("a")
	capped.MaxConcurrentRuns = 1
	free := seq("a")
	free.PlanID = "other"
	first := b.submit(capped)
	second := b.submit(capped)
	third := b.submit(free)
	require.Equal(t, runstate.RunRunning, first.Status)
	require.Equal(t, runstate.RunQueued, second.Status)
	require.Equal(t, runstate.RunRunning, third.Status, "another plan is not capped by it")
}

func TestRunQueue_TwoReconcilersRacingNeverStartARunTwice(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) { reconcilersRacing(t, backend.open(t)) })
	}
}

func reconcilersRacing(t *testing.T, st store.Store) {
	b := setupWith(t, st)
	b.eng.cfg.Limits.PerTenant = 3
	other, err := New(Config{Store: st, Clock: b.clock, Limits: Limits{PerTenant: 3}, Leases: lease.NewLocal(b.clock.Now)})
	require.NoError(t, err)
	var ids []string
	for range 12 {
		ids = append(ids, b.submit(seq("a")).RunID)
	}
	require.Equal(t, 3, b.countStarted())
	for _, task := range b.pollAll("act-a", 100) {
		b.complete(task, `1`)
	}
	var wg sync.WaitGroup
	results := make([][]QueueResult, 2)
	for i, eng := range []*Engine{b.eng, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := dequeueAndStart(b.ctx, eng)
			require.NoError(t, err)
			results[i] = r
		}()
	}
	wg.Wait()
	startedNow := 0
	for _, rs := range results {
		for _, r := range rs {
			require.Contains(t, []string{"STARTED", "SKIPPED", "FAILED"}, r.Status)
			if r.Status == "STARTED" {
				startedNow++
			}
		}
	}
	require.Equal(t, 3, startedNow, "exactly the three free slots were filled")
	require.Equal(t, 3, b.countStarted())
	for _, id := range ids {
		require.LessOrEqual(t, countEvents(b, id, runstate.EvRunStarted), 1, "run %s started twice", id)
	}
	b.clock.Advance(time.Second)
}
