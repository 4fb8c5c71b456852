package redisbus_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/export/redisbus"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// killer publishes, then every killEvery publishes cancels the worker's
// context before it can acknowledge: a crash between publish and
// acknowledgement.
type killer struct {
	inner     export.Publisher
	killEvery int64
	n         atomic.Int64
	mu        sync.Mutex
	kill      context.CancelFunc
}

func (k *killer) Publish(ctx context.Context, msg export.Message) error {
	if err := k.inner.Publish(ctx, msg); err != nil {
		return err
	}
	if k.n.Add(1)%k.killEvery == 0 {
		k.mu.Lock()
		k.kill()
		k.mu.Unlock()
	}
	return nil
}

func TestExport_KilledBetweenPublishAndAckRepublishesToRedisAndLosesNothing_10000Events(t *testing.T) {
	t.Parallel()
	rdb := redistest.Require(t)
	st := sqltest.Open(t, sqltest.NewSchema(t))
	refs := writeOutbox(t, st, "run", 100, 100)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb), MaxLen: 100_000})
	require.NoError(t, err)
	k := &killer{inner: pub, killEvery: 997}
	kills := 0
	for life := 0; outboxLen(t, st) > 0; life++ {
		require.Less(t, life, 1000, "outbox never drained")
		ctx, cancel := context.WithCancel(context.Background())
		k.mu.Lock()
		k.kill = cancel
		k.mu.Unlock()
		w, err := export.NewWorker(st, k, export.Config{}) // a new worker each life
		require.NoError(t, err)
		for ctx.Err() == nil {
			stats, err := w.RunOnce(ctx)
			if ctx.Err() != nil {
				kills++
				break
			}
			require.NoError(t, err)
			if stats.Seen == 0 {
				break
			}
		}
		cancel()
	}
	msgs := readStream(t, rdb, pub.Stream(tenant))
	requireDelivered(t, refs, msgs)
	require.Greater(t, kills, 1)
	require.Greater(t, len(msgs), len(refs), "killed workers published again")
	t.Logf("%d kills, %d events, %d stream entries", kills, len(refs), len(msgs))
}

// TestExport_RedisDownFor30sDelaysExportWithoutAffectingRuns runs an engine
// with the outbox on PostgreSQL and an export worker to a private Redis,
// stops Redis for 30 s, and shows that runs go on completing, their events
// wait in the outbox (no attempt counted, nothing dead-lettered), and every
// event reaches the stream once Redis is back.
func TestExport_RedisDownFor30sDelaysExportWithoutAffectingRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("Redis outage: skipped in -short")
	}
	t.Parallel()
	r := redistest.StartPrivate(t)
	st := sqltest.Open(t, sqltest.NewSchema(t))
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, MaxRetries: -1})
	defer rdb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	eng, err := engine.New(engine.Config{Store: st, Outbox: true, PollInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	pub, err := redisbus.New(rdb, redisbus.Config{})
	require.NoError(t, err)
	w, err := export.NewWorker(st, pub, export.Config{PollInterval: 50 * time.Millisecond,
		BackoffInitial: 100 * time.Millisecond, BackoffCap: time.Second, PublishTimeout: time.Second, MaxAttempts: 2})
	require.NoError(t, err)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { eng.Run(ctx) })
	wg.Go(func() { _ = w.Run(ctx) })

	before := runToCompletion(t, eng, 5)
	require.Eventually(t, func() bool { return outboxLen(t, st) == 0 }, 20*time.Second, 20*time.Millisecond)
	requireDelivered(t, eventRefs(t, eng, before), readStream(t, rdb, pub.Stream(tenant)))

	r.Stop() // Redis goes away
	down := time.Now()
	started := time.Now()
	during := runToCompletion(t, eng, 5)
	require.Less(t, time.Since(started), 15*time.Second, "runs complete while the bus is down")
	waiting := eventRefs(t, eng, during)
	for time.Since(down) < 30*time.Second {
		require.Equal(t, len(waiting), outboxEvents(t, st), "events wait in the outbox")
		time.Sleep(500 * time.Millisecond)
	}
	require.Zero(t, prefixLen(t, st, export.RetryPrefix()), "an outage counts no attempt")
	require.Zero(t, prefixLen(t, st, export.DeadLetterPrefix()), "an outage dead-letters nothing")

	r.Start() // back, empty
	back := time.Now()
	require.Eventually(t, func() bool { return outboxLen(t, st) == 0 }, 30*time.Second, 20*time.Millisecond)
	t.Logf("%d events exported %s after Redis came back", len(waiting), time.Since(back).Round(time.Millisecond))
	requireDelivered(t, waiting, readStream(t, rdb, pub.Stream(tenant)))
}

// runToCompletion submits n two-step runs and completes their tasks.
func runToCompletion(t *testing.T, eng *engine.Engine, n int) []string {
	t.Helper()
	ctx := context.Background()
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "act-a"}, {ID: "b", Order: 2, Activity: "act-b"}}}
	var ids []string
	for range n {
		res, err := eng.SubmitRun(ctx, engine.SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
		require.NoError(t, err)
		ids = append(ids, res.Run.RunID)
	}
	require.Eventually(t, func() bool {
		// The poll waits briefly on its own; its context never ends it mid-claim,
		// which would leave a claimed task unanswered until its attempt timeout.
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		tasks, _ := eng.PollTasks(pctx, engine.PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a", "act-b"},
			MaxTasks: 50, Wait: 100 * time.Millisecond})
		for _, task := range tasks {
			_, err := eng.CompleteTask(ctx, engine.ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`1`)})
			require.NoError(t, err)
		}
		for _, id := range ids {
			snap, err := eng.GetRun(ctx, engine.GetRunParams{TenantID: tenant, RunID: id})
			require.NoError(t, err)
			if snap.Status != runstate.RunCompleted {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond)
	return ids
}

// eventRefs answers every event the runs recorded.
func eventRefs(t *testing.T, eng *engine.Engine, runIDs []string) []ref {
	t.Helper()
	var refs []ref
	for _, id := range runIDs {
		page, err := eng.ListEvents(context.Background(), engine.ListEventsParams{TenantID: tenant, RunID: id, PageSize: 1000})
		require.NoError(t, err)
		for _, ev := range page.Events {
			refs = append(refs, ref{ev.RunID, ev.Seq, ev.ID})
		}
	}
	return refs
}

func prefixLen(t *testing.T, st store.Store, prefix []byte) int {
	t.Helper()
	page, err := st.Scan(context.Background(), &store.ScanParams{Prefix: prefix})
	require.NoError(t, err)
	return len(page.Items)
}
