package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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

// with answers flags followed by more, in a slice of its own.
func with(flags []string, more ...string) []string { return slices.Concat(flags, more) }

// flagValue answers the value that follows name in flags.
func flagValue(flags []string, name string) string {
	i := slices.Index(flags, name)
	if i < 0 || i+1 >= len(flags) {
		return ""
	}
	return flags[i+1]
}

// TestCluster_TwoWeftdsShareRunsAndAFrozenOneLosesNothing runs two weftd
// processes on one PostgreSQL with Redis leases, freezes one with SIGSTOP for
// three lease TTLs while workers keep going through the other, and checks
// that every run finishes with each step's result recorded exactly once.
func TestCluster_TwoWeftdsShareRunsAndAFrozenOneLosesNothing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	const ttl = 300 * time.Millisecond
	a := startWeftdIn(t, t.TempDir(), with(store, "--lease-ttl", ttl.String())...)
	b := startWeftdIn(t, t.TempDir(), with(store, "--lease-ttl", ttl.String())...)
	require.Contains(t, a.Logs(), `"mode":"cas-required"`)
	ctx := context.Background()
	runsA := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	runsB := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), b.URL)
	workersB := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), b.URL)
	eventsB := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), b.URL)

	def := &weftv1.WorkflowDefinition{PlanId: "cluster", PlanVersion: "1"}
	for i, id := range []string{"a", "b"} {
		def.Actions = append(def.Actions, &weftv1.Action{Id: id, Order: uint32(i + 1), Activity: "work",
			Retry: &weftv1.RetryPolicy{InitialBackoffMs: proto.Uint32(50), Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT}})
	}
	var runIDs []string
	for i := range 10 {
		res, err := runsA.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true, RunRequestId: fmt.Sprint(i)}))
		require.NoError(t, err)
		runIDs = append(runIDs, res.Msg.GetRun().GetRunId())
	}
	workCtx, stopWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for workCtx.Err() == nil {
			res, err := workersB.PollTasks(workCtx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: "w",
				Activities: []*weftv1.ActivityRegistration{{Name: "work"}}, MaxTasks: 20, WaitMs: 200}))
			if err != nil {
				continue
			}
			for _, task := range res.Msg.GetTasks() {
				if task.GetEngineAttemptId() == 1 { // every first attempt fails: retries need an owner's timer
					_, _ = workersB.FailTask(workCtx, connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: task.GetTaskToken(),
						WorkerId: "w", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_TRANSIENT}))
					continue
				}
				_, _ = workersB.CompleteTask(workCtx, connect.NewRequest(&weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(),
					WorkerId: "w", Output: structpb.NewStringValue(task.GetActionId())}))
			}
		}
	}()
	defer func() { stopWork(); wg.Wait() }()

	time.Sleep(ttl) // let both engines own some runs
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGSTOP))
	time.Sleep(3 * ttl)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGCONT))

	require.Eventually(t, func() bool {
		for _, id := range runIDs {
			res, err := runsB.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: id}))
			if err != nil || res.Msg.GetRun().GetStatus() != weftv1.RunStatus_RUN_STATUS_COMPLETED {
				return false
			}
		}
		return true
	}, 60*time.Second, 100*time.Millisecond, "every run finishes")
	for _, id := range runIDs {
		res, err := eventsB.ListEvents(ctx, connect.NewRequest(&weftv1.ListEventsRequest{RunId: id, PageSize: 1000}))
		require.NoError(t, err)
		completed := map[string]int{}
		for _, ev := range res.Msg.GetEvents() {
			if ev.GetEventType() == "StepCompleted" {
				completed[ev.GetStepId()]++
			}
		}
		require.Equal(t, map[string]int{"a": 1, "b": 1}, completed, "run %s", id)
	}
	_, err := runsA.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: runIDs[0]}))
	require.NoError(t, err, "the thawed weftd serves again")
}

// TestWeftd_ServesAPISuiteOnPostgreSQLAndRedis runs the black-box API suite
// against weftd in the cluster configuration (PostgreSQL store, cas-required,
// Redis leases), as TestWeftd_ServesAPISuiteAsARealProcess does on Pebble.
func TestWeftd_ServesAPISuiteOnPostgreSQLAndRedis(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	redistest.Require(t)
	d := startWeftdIn(t, t.TempDir(), testkit.ClusterFlags(t, db)...)
	require.Contains(t, d.Logs(), `"leases":"redis"`)
	apitest.Exercise(t, d.URL)
}

// TestWeftd_BackpressureModesAtFiveTimesTheLimit submits five times the
// configured limit through Connect's HTTP/JSON in each mode: REJECT refuses the
// runs over the limit with 429 and Retry-After, QUEUE and DELAY accept them
// all, and nothing answers 5xx.
func TestWeftd_BackpressureModesAtFiveTimesTheLimit(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]map[int]int{
		"reject": {http.StatusOK: 2, http.StatusTooManyRequests: 8},
		"queue":  {http.StatusOK: 10},
		"delay":  {http.StatusOK: 10},
	} {
		t.Run(mode, func(t *testing.T) {
			d := startWeftdIn(t, t.TempDir(), "--max-runs-per-tenant", "2", "--backpressure", mode)
			body := `{"start": true, "definition": {"plan_id": "p", "plan_version": "1", "actions": [{"id": "a", "order": 1, "activity": "x"}]}}`
			statuses := map[int]int{}
			for range 10 {
				req, err := http.NewRequest(http.MethodPost, d.URL+"/weft.v1.RunService/SubmitRun", strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				res, err := apitest.HTTPClient().Do(req)
				require.NoError(t, err)
				_ = res.Body.Close()
				statuses[res.StatusCode]++
				require.Less(t, res.StatusCode, 500)
				if res.StatusCode == http.StatusTooManyRequests {
					require.Equal(t, "1", res.Header.Get("Retry-After"))
				}
			}
			require.Equal(t, want, statuses)
		})
	}
}

// TestWeftd_ExportsRunEventsToRedisStreams submits a run to weftd in the
// cluster configuration and finds its events on the tenant's Redis stream.
func TestWeftd_ExportsRunEventsToRedisStreams(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	rdb := redistest.Require(t)
	flags := testkit.ClusterFlags(t, db)
	d := startWeftdIn(t, t.TempDir(), flags...)
	require.Contains(t, d.Logs(), "events are exported to Redis Streams")
	stream := flagValue(flags, "--redis-prefix") + "events:default" // the test's own
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), d.URL)
	res, err := runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
		Definition: &weftv1.WorkflowDefinition{PlanId: "export", PlanVersion: "1",
			Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}}))
	require.NoError(t, err)
	runID := res.Msg.GetRun().GetRunId()
	require.Eventually(t, func() bool {
		entries, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
		if err != nil {
			return false
		}
		var types []string
		for _, e := range entries {
			if e.Values["run_id"] == runID {
				types = append(types, fmt.Sprint(e.Values["event_type"]))
			}
		}
		return len(types) >= 4 && types[0] == "RunSubmitted"
	}, 20*time.Second, 50*time.Millisecond, "the run's events reach its tenant's stream")
	metrics, err := apitest.HTTPClient().Get(d.URL + "/metrics")
	require.NoError(t, err)
	defer metrics.Body.Close()
	body, err := io.ReadAll(metrics.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "weft_stale_owner_commits_rejected_total")
	require.Contains(t, string(body), `weft_runs{status="RUNNING"} 1`)
	require.Contains(t, string(body), `weft_queue_depth{kind="tasks"} 1`)
	require.Contains(t, string(body), "weft_export_published_total")
}
