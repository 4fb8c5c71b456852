package engine

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// commitCounter counts a store's commits and the writes they carry.
type commitCounter struct {
	store.Store
	n, ops atomic.Int64
}

func (c *commitCounter) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	c.n.Add(1)
	c.ops.Add(int64(len(b.Ops)))
	return c.Store.Commit(ctx, b)
}

// BenchmarkLongPollingWorkers runs five-step workflows on a Pebble store,
// 16 at a time, through 4 long-polling workers of 16 slots, as the end-to-end
// benchmark does without the network, and reports the store's commits and
// writes per step (b.N counts steps): without a schedule-to-start timeout,
// and with weftd's default one (a timer written with each ready task and
// deleted by its claim, unless a hand-off claims it in the same decision).
//
//	go test -run '^$' -bench LongPollingWorkers -benchtime 2000x ./engine/
func BenchmarkLongPollingWorkers(b *testing.B) {
	b.Run("schedule-to-start=none", func(b *testing.B) { benchLongPollingWorkers(b, 0) })
	b.Run("schedule-to-start=5m", func(b *testing.B) { benchLongPollingWorkers(b, 5*time.Minute) })
}

func benchLongPollingWorkers(b *testing.B, startTimeout time.Duration) {
	const steps, clients, workers, slots = 5, 16, 4, 16
	st, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	cc := &commitCounter{Store: st}
	eng, err := New(Config{Store: cc, ScheduleToStartTimeout: startTimeout})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	def := seq("s1", "s2", "s3", "s4", "s5")
	var activities []string
	for _, a := range def.Actions {
		activities = append(activities, a.Activity)
	}
	var bg sync.WaitGroup
	for range workers {
		free := make(chan struct{}, slots)
		for range slots {
			free <- struct{}{}
		}
		bg.Go(func() {
			for ctx.Err() == nil {
				<-free
				n := 1
				for len(free) > 0 && n < slots {
					<-free
					n++
				}
				tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: n, Wait: time.Second})
				for range n - len(tasks) {
					free <- struct{}{}
				}
				for _, task := range tasks {
					bg.Go(func() {
						_, _ = eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{}`)})
						free <- struct{}{}
					})
				}
			}
		})
	}
	runs := max(1, b.N/steps)
	var next atomic.Int64
	b.ResetTimer()
	before, beforeOps := cc.n.Load(), cc.ops.Load()
	var clientsWG sync.WaitGroup
	for range clients {
		clientsWG.Go(func() {
			for next.Add(1) <= int64(runs) {
				res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "bench"})
				if err != nil {
					b.Error(err)
					return
				}
				for {
					snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: res.Run.RunID})
					if err == nil && snap.Status.Terminal() {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	clientsWG.Wait()
	b.StopTimer()
	b.ReportMetric(float64(cc.n.Load()-before)/float64(runs*steps), "commits/step")
	b.ReportMetric(float64(cc.ops.Load()-beforeOps)/float64(runs*steps), "writes/step")
	cancel()
	bg.Wait()
}

// BenchmarkQueuedTasks submits one-step runs with no worker polling, so each
// task goes through its queue, then claims and completes them all, and
// reports the store's writes per task: the schedule-to-start timer's cost
// where no hand-off absorbs it (b.N counts tasks).
//
//	go test -run '^$' -bench QueuedTasks -benchtime 2000x ./engine/
func BenchmarkQueuedTasks(b *testing.B) {
	b.Run("schedule-to-start=none", func(b *testing.B) { benchQueuedTasks(b, 0) })
	b.Run("schedule-to-start=5m", func(b *testing.B) { benchQueuedTasks(b, 5*time.Minute) })
}

func benchQueuedTasks(b *testing.B, startTimeout time.Duration) {
	st, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	cc := &commitCounter{Store: st}
	eng, err := New(Config{Store: cc, ScheduleToStartTimeout: startTimeout})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	def := seq("a")
	b.ResetTimer()
	beforeOps := cc.ops.Load()
	for range b.N {
		if _, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	for done := 0; done < b.N; {
		tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a"}, MaxTasks: 64})
		if err != nil || len(tasks) == 0 {
			b.Fatalf("poll: %v, %d tasks", err, len(tasks))
		}
		for _, task := range tasks {
			if _, err := eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{}`)}); err != nil {
				b.Fatal(err)
			}
		}
		done += len(tasks)
	}
	b.StopTimer()
	b.ReportMetric(float64(cc.ops.Load()-beforeOps)/float64(b.N), "writes/task")
}
