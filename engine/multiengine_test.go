package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/lease/redislease"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestMultiEngine_ThreeEnginesRacingWhileLeasesVanishRunEveryStepOnce runs
// three engines (separate connection pools, shared PostgreSQL, Redis leases)
// over 100 runs whose steps each fail once, so that retries are driven by the
// engines' timers, while every lease key is deleted every 500 ms. Every run
// finishes, no step result is committed twice, and some stale owners' commits
// were refused by the fencing epoch.
func TestMultiEngine_ThreeEnginesRacingWhileLeasesVanishRunEveryStepOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-engine race: skipped in -short")
	}
	rdb := redistest.Require(t)
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	prefix := "weft-test:" + uuid.NewString() + ":"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var engines []*Engine
	var wg sync.WaitGroup
	for i := range 3 {
		eng, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: fmt.Sprintf("engine-%d", i),
			Leases: redislease.New(rdb, prefix), LeaseTTL: 1500 * time.Millisecond, PollInterval: 20 * time.Millisecond})
		require.NoError(t, err)
		engines = append(engines, eng)
		wg.Add(1)
		go func() { defer wg.Done(); eng.Run(ctx) }()
	}
	defer wg.Wait()
	defer cancel()
	go deleteLeasesEvery(ctx, rdb, prefix, 500*time.Millisecond)

	def := seq("a", "b", "c")
	for i := range def.Actions {
		def.Actions[i].Retry = definition.RetryPolicy{MaxAttempts: 10, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(30)}
		def.Actions[i].HeartbeatTimeout = definition.Ms(300)
	}
	var runIDs []string
	for i := range 100 {
		res, err := engines[i%3].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, RunRequestID: fmt.Sprint(i)})
		require.NoError(t, err)
		runIDs = append(runIDs, res.Run.RunID)
	}
	var failedOnce sync.Map
	var workers sync.WaitGroup
	var done atomic.Bool
	work := func(w int, eng *Engine, task *Task) {
		defer workers.Done()
		// Hold the task a while, heartbeating: the heartbeat timers keep the
		// engines driving the run while its lease vanishes under them.
		for range 6 {
			_, _ = eng.HeartbeatTask(ctx, HeartbeatParams{TenantID: tenant, Token: task.Token})
			time.Sleep(40 * time.Millisecond)
		}
		key := task.RunID + "/" + task.ActionID
		if _, loaded := failedOnce.LoadOrStore(key, true); !loaded {
			_, _ = eng.FailTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", ErrorClass: definition.ErrorTransient})
			return
		}
		_, _ = engines[(w+1)%3].CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w",
			Output: json.RawMessage(fmt.Sprintf(`{"step":%q}`, task.ActionID))})
	}
	for w := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for !done.Load() {
				eng := engines[w%3]
				tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: fmt.Sprint("w", w),
					Activities: []string{"act-a", "act-b", "act-c"}, MaxTasks: 16, Wait: 50 * time.Millisecond})
				if err != nil {
					continue
				}
				for _, task := range tasks {
					workers.Add(1)
					go work(w, eng, task)
				}
			}
		}()
	}
	require.Eventually(t, func() bool {
		for _, id := range runIDs {
			snap, err := engines[0].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
			if err != nil || !snap.Status.Terminal() {
				return false
			}
		}
		return true
	}, 3*time.Minute, 100*time.Millisecond, "every run finishes")
	done.Store(true)
	workers.Wait()
	var stale int64
	for _, eng := range engines {
		stale += eng.Counters().StaleCommitsRejected
	}
	for _, id := range runIDs {
		page, err := engines[1].ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: id, PageSize: 1000})
		require.NoError(t, err)
		completed := map[string]int{}
		for _, ev := range page.Events {
			if ev.Type == runstate.EvStepCompleted {
				completed[ev.StepID]++
			}
		}
		require.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1}, completed, "run %s", id)
		snap, err := engines[2].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
		require.NoError(t, err)
		require.Equal(t, runstate.RunCompleted, snap.Status)
	}
	t.Logf("stale owners' commits rejected by the fencing epoch: %d", stale)
	require.Positive(t, stale, "the lease deletions must have produced stale owners, and their commits must have been refused")
}

func deleteLeasesEvery(ctx context.Context, rdb *redis.Client, prefix string, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			keys, err := rdb.Keys(ctx, prefix+"*").Result()
			if err == nil && len(keys) > 0 {
				rdb.Del(ctx, keys...)
			}
		}
	}
}

// frozenLeases stands for a process stopped with SIGSTOP: while frozen, its
// lease renewals do not happen.
type frozenLeases struct {
	*redislease.Manager
	thaw chan struct{}
	cold atomic.Bool
}

func (f *frozenLeases) Renew(ctx context.Context, l lease.Lease) error {
	if f.cold.Load() {
		<-f.thaw
	}
	return f.Manager.Renew(ctx, l)
}

// TestMultiEngine_FrozenOwnersLateCommitIsRejected freezes an engine in the
// middle of a decision for three lease TTLs — its renewals stop too, as under
// SIGSTOP — lets another engine take the run over, then thaws it: its late
// commit must not land.
func TestMultiEngine_FrozenOwnersLateCommitIsRejected(t *testing.T) {
	rdb := redistest.Require(t)
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	prefix := "weft-test:" + uuid.NewString() + ":"
	ctx := context.Background()
	const ttl = 100 * time.Millisecond
	frozen := &frozenLeases{Manager: redislease.New(rdb, prefix), thaw: make(chan struct{})}
	a, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: "engine-a", Leases: frozen, LeaseTTL: ttl})
	require.NoError(t, err)
	b, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: "engine-b", Leases: redislease.New(rdb, prefix), LeaseTTL: ttl})
	require.NoError(t, err)
	res, err := a.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: seq("x")})
	require.NoError(t, err)
	runID := res.Run.RunID
	touch := func(marker string) func(*change) error {
		return func(ch *change) error { ch.put(store.Key("test", runID, marker), marker); return nil }
	}
	require.NoError(t, drive(ctx, a, runID, touch("a-owns")))

	read := make(chan struct{})
	var once sync.Once
	lateDone := make(chan error, 1)
	frozen.cold.Store(true)
	go func() {
		lateDone <- drive(ctx, a, runID, func(ch *change) error {
			once.Do(func() { close(read); <-frozen.thaw }) // frozen mid-decision
			return touch("a-late")(ch)
		})
	}()
	<-read
	time.Sleep(3 * ttl) // three lease TTLs pass while engine a is frozen
	// b takes the run over once a's lease has run out (a renewal a sent just
	// before it froze may land late on a loaded machine: b waits it out).
	var bErr error
	require.Eventually(t, func() bool {
		owned, err := driveOwned(ctx, b, runID, touch("b-took-over"))
		bErr = err
		return owned || err != nil
	}, 10*time.Second, ttl)
	require.NoError(t, bErr)
	close(frozen.thaw)
	require.NoError(t, <-lateDone)

	_, err = b.store.Get(ctx, store.Key("test", runID, "a-late"))
	require.ErrorIs(t, err, store.ErrNotFound, "the frozen owner's late commit landed")
	_, err = b.store.Get(ctx, store.Key("test", runID, "b-took-over"))
	require.NoError(t, err)
	require.EqualValues(t, 1, a.Counters().StaleCommitsRejected)
	state, _, err := b.records.LoadCheckpoint(ctx, runID)
	require.NoError(t, err)
	require.EqualValues(t, 2, state.Epoch, "each owner bumped the fencing epoch once")
}

// TestMultiEngine_RedisDownFor30sLosesNothing stops Redis for 30 seconds
// while two engines drive runs: requests keep committing (correctness is the
// database's), background work waits, and once Redis is back every run
// finishes with every step recorded once.
func TestMultiEngine_RedisDownFor30sLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("Redis outage: skipped in -short")
	}
	r := redistest.StartPrivate(t)
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var engines []*Engine
	var wg sync.WaitGroup
	for i := range 2 {
		eng, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: fmt.Sprintf("engine-%d", i),
			Leases: redislease.New(rdb, "weft:lease:"), LeaseTTL: time.Second, PollInterval: 50 * time.Millisecond})
		require.NoError(t, err)
		engines = append(engines, eng)
		wg.Add(1)
		go func() { defer wg.Done(); eng.Run(ctx) }()
	}
	defer wg.Wait()
	defer cancel()
	def := seq("a", "b")
	for i := range def.Actions {
		def.Actions[i].Retry = definition.RetryPolicy{MaxAttempts: 3, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(100)}
	}
	submit := func(n int) []string {
		var ids []string
		for i := range n {
			res, err := engines[i%2].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true})
			require.NoError(t, err)
			ids = append(ids, res.Run.RunID)
		}
		return ids
	}
	// Every first attempt fails, so each step needs a backoff timer: work that
	// only an owner with a lease does.
	failOnce := func(eng *Engine) {
		tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a", "act-b"}, MaxTasks: 50})
		for _, task := range tasks {
			if task.EngineAttempt == 1 {
				_, _ = eng.FailTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", ErrorClass: definition.ErrorTransient})
				continue
			}
			_, _ = eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`1`)})
		}
	}
	runIDs := submit(10)
	failOnce(engines[0])
	r.Stop() // Redis goes away
	down := time.Now()
	runIDs = append(runIDs, submit(10)...) // requests still commit
	for time.Since(down) < 30*time.Second {
		failOnce(engines[1])
		time.Sleep(200 * time.Millisecond)
	}
	for _, id := range runIDs[10:] {
		snap, err := engines[0].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
		require.NoError(t, err, "requests kept committing while Redis was down")
		require.NotEqual(t, runstate.RunCompleted, snap.Status, "no owner drives a retry without its lease")
	}
	r.Start() // and comes back, empty
	require.Eventually(t, func() bool {
		failOnce(engines[0])
		for _, id := range runIDs {
			snap, err := engines[1].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
			if err != nil || snap.Status != runstate.RunCompleted {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "work resumes once Redis is back")
	for _, id := range runIDs {
		page, err := engines[0].ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: id, PageSize: 1000})
		require.NoError(t, err)
		completed := map[string]int{}
		for _, ev := range page.Events {
			if ev.Type == runstate.EvStepCompleted {
				completed[ev.StepID]++
			}
		}
		require.Equal(t, map[string]int{"a": 1, "b": 1}, completed, "run %s", id)
	}
}
