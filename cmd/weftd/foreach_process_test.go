package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// fanOutWorld is what the fan-out process tests' workers did: every
// execution of an item's activity, by the idempotency key its task
// carried, and the side effects applied, once per key, as an external
// system keyed by it would.
type fanOutWorld struct {
	mu         sync.Mutex
	executions map[string]int    // idempotency key → executions
	applied    map[string]string // idempotency key → the item it was applied for
	wrongKey   []string
}

func newFanOutWorld() *fanOutWorld {
	return &fanOutWorld{executions: map[string]int{}, applied: map[string]string{}}
}

// work polls url for the fan-out's tasks until ctx ends, applying each once
// by its idempotency key and completing it with its index.
func (w *fanOutWorld) work(ctx context.Context, url, workerID string) {
	workers := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), url)
	for ctx.Err() == nil {
		res, err := workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: workerID,
			Activities: []*weftv1.ActivityRegistration{{Name: "ship"}}, MaxTasks: 5, WaitMs: 200}))
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, task := range res.Msg.GetTasks() {
			key := task.GetIdempotencyKey()
			w.mu.Lock()
			w.executions[key]++
			if key != task.GetRunId()+":"+task.GetActionId() {
				w.wrongKey = append(w.wrongKey, key)
			}
			if _, done := w.applied[key]; !done {
				w.applied[key] = task.GetActionId()
			}
			w.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			_, _ = workers.CompleteTask(ctx, connect.NewRequest(&weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(),
				WorkerId: workerID, Output: structpb.NewNumberValue(float64(task.GetIndex()))}))
		}
	}
}

// start runs w.work on url in the background and answers its stop.
func (w *fanOutWorld) start(url, workerID string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.work(ctx, url, workerID) }()
	return func() { cancel(); <-done }
}

// fanOutDefinition is a run of one forEach step over n items, at most 5 in
// flight, whose lost claims time out within two seconds.
func fanOutDefinition(n int) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "fan-out", PlanVersion: "1", Actions: []*weftv1.Action{{
		Id: "ship", Order: 1, Activity: "ship", ForEach: fmt.Sprintf("lists.range(%d)", n), MaxConcurrency: proto.Uint32(5),
		TimeoutMs: proto.Uint32(2000), Input: structpb.NewStringValue("${{ item }}"),
		Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(10), InitialBackoffMs: proto.Uint32(50), Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT},
	}}, ResultActionId: "ship"}
}

// waitItemsSucceeded waits until the run's fan-out has at least n items succeeded.
func waitItemsSucceeded(t *testing.T, runs weftv1connect.RunServiceClient, runID string, n uint32) {
	t.Helper()
	require.Eventually(t, func() bool {
		res, err := runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
		if err != nil {
			return false
		}
		for _, s := range res.Msg.GetRun().GetSteps() {
			if s.GetActionId() == "ship" {
				return s.GetFanOut().GetSucceeded() >= n
			}
		}
		return false
	}, 60*time.Second, 10*time.Millisecond)
}

// requireEachItemOnce waits until the run completed, then requires its
// output in item order, its fan-out announced once, each item scheduled and
// completed once, and each item's work applied once under its own key.
func requireEachItemOnce(t *testing.T, url, runID string, n int, w *fanOutWorld) {
	t.Helper()
	ctx := context.Background()
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url)
	events := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), url)
	var run *weftv1.Run
	require.Eventually(t, func() bool {
		res, err := runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
		if err != nil {
			return false
		}
		run = res.Msg.GetRun()
		return run.GetStatus() == weftv1.RunStatus_RUN_STATUS_COMPLETED
	}, 90*time.Second, 50*time.Millisecond, "run %s completes", runID)
	var out []float64
	b, err := json.Marshal(run.GetResult())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &out))
	require.Len(t, out, n)
	for i, v := range out {
		require.Equal(t, float64(i), v, "the output list is in item order")
	}
	res, err := events.ListEvents(ctx, connect.NewRequest(&weftv1.ListEventsRequest{RunId: runID, PageSize: 1000}))
	require.NoError(t, err)
	require.False(t, res.Msg.GetHasMore())
	count := map[string]int{}
	for _, ev := range res.Msg.GetEvents() {
		count[ev.GetStepId()+" "+ev.GetEventType()]++
	}
	require.Equal(t, 1, count["ship StepFannedOut"], "the fan-out is announced once")
	require.Equal(t, 1, count["ship StepCompleted"])
	w.mu.Lock()
	defer w.mu.Unlock()
	require.Empty(t, w.wrongKey, "every task carries its item's own key")
	for i := range n {
		id := fmt.Sprintf("ship[%d]", i)
		require.Equal(t, 1, count[id+" StepScheduled"], "%s scheduled once", id)
		require.Equal(t, 1, count[id+" StepCompleted"], "%s's result recorded once", id)
		require.Equal(t, id, w.applied[runID+":"+id], "%s's work applied under its own key", id)
	}
}

// TestProcess_AFanOutsItemsRunOnceUnderTheirOwnKeysAcrossAKill9AndARestart:
// weftd (Pebble) is killed with SIGKILL in the middle of a 60-item fan-out
// (items completed, items in flight, items not dispatched yet) and
// restarted on its data: the run completes with its output in item order,
// each item scheduled and recorded once, each item's work applied once
// under its own idempotency key; only the items in flight at the kill run
// again (docs/semantics.md#for-each).
func TestProcess_AFanOutsItemsRunOnceUnderTheirOwnKeysAcrossAKill9AndARestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("weftd processes: skipped in -short")
	}
	const n = 60
	dir := t.TempDir()
	a := startWeftdIn(t, dir)
	runsA := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	res, err := runsA.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: fanOutDefinition(n), Start: true, RunRequestId: "fan"}))
	require.NoError(t, err)
	runID := res.Msg.GetRun().GetRunId()
	w := newFanOutWorld()
	stopA := w.start(a.URL, "worker-a")
	waitItemsSucceeded(t, runsA, runID, 20)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()
	stopA()
	b := startWeftdIn(t, dir)
	stopB := w.start(b.URL, "worker-b")
	defer stopB()
	requireEachItemOnce(t, b.URL, runID, n, w)
	w.mu.Lock()
	defer w.mu.Unlock()
	again := 0
	for _, k := range w.executions {
		again += k - 1
	}
	require.LessOrEqual(t, again, 5, "only the items in flight at the kill (at most maxConcurrency) run again")
}

// TestCluster_AFanOutLosesNothingAndRecordsNothingTwiceWhenItsWeftdIsKilled:
// two weftds on one PostgreSQL with Redis leases, a worker on each; the weftd
// the runs were submitted to is killed with SIGKILL in the middle of their
// fan-outs and the other takes them over: every run completes with its
// output in item order, each item scheduled and recorded once, each item's
// work applied once under its own key (docs/semantics.md#for-each).
func TestCluster_AFanOutLosesNothingAndRecordsNothingTwiceWhenItsWeftdIsKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	flags := with(testkit.ClusterFlags(t, db), "--lease-ttl", "300ms")
	a := startWeftdIn(t, t.TempDir(), flags...)
	b := startWeftdIn(t, t.TempDir(), flags...)
	runsA := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	const n, runs = 40, 3
	var ids []string
	for i := range runs {
		res, err := runsA.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: fanOutDefinition(n),
			Start: true, RunRequestId: fmt.Sprint("fan-", i)}))
		require.NoError(t, err)
		ids = append(ids, res.Msg.GetRun().GetRunId())
	}
	w := newFanOutWorld()
	stopA := w.start(a.URL, "worker-a")
	stopB := w.start(b.URL, "worker-b")
	defer stopB()
	waitItemsSucceeded(t, runsA, ids[0], 10)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()
	stopA()
	for _, id := range ids {
		requireEachItemOnce(t, b.URL, id, n, w)
	}
}
