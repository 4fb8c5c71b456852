package main

import (
	"context"
	"io"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestCluster_EveryWeftdListsAPollerOfAnotherWithItsTaskAndServesItsQueueMetrics:
// a worker polls one weftd of two on PostgreSQL and Redis; the other lists it
// with its identity and the task it holds (from the poller's record in the
// store), describes the queue's backlog, and serves the queue's gauges. a
// publishes the record on a tick: the one written when the poll began may
// precede the hand-off, and the one that counts the task is due within a
// refresh (the record's life is three refreshes).
func TestCluster_EveryWeftdListsAPollerOfAnotherWithItsTaskAndServesItsQueueMetrics(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), store...)
	b := startWeftdIn(t, t.TempDir(), store...)
	ctx := context.Background()
	runsA := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	workersA := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), a.URL)
	workersB := weftv1connect.NewWorkerServiceClient(apitest.HTTPClient(), b.URL)
	def := &weftv1.WorkflowDefinition{PlanId: "pollers", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "work"}}}
	for range 2 {
		_, err := runsA.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true}))
		require.NoError(t, err)
	}
	res, err := workersA.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: "worker-on-a",
		Activities: []*weftv1.ActivityRegistration{{Name: "work"}}, WaitMs: 5000}))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetTasks(), 1)

	var q *weftv1.QueueDescription
	require.Eventually(t, func() bool {
		res, err := workersB.DescribeQueue(ctx, connect.NewRequest(&weftv1.DescribeQueueRequest{}))
		require.NoError(t, err)
		q = res.Msg.GetQueue()
		return len(q.GetPollers()) == 1 && q.GetPollers()[0].GetInFlightTasks() == 1
	}, 3*engine.DefaultPollerRefresh, 50*time.Millisecond, "weftd b lists the poller of weftd a with its task")
	require.Equal(t, "worker-on-a", q.GetPollers()[0].GetWorkerId())
	require.EqualValues(t, 1, q.GetPollers()[0].GetInFlightTasks())
	require.Equal(t, []string{"work"}, q.GetPollers()[0].GetActivities())
	require.EqualValues(t, 1, q.GetBacklog())

	metrics, err := apitest.HTTPClient().Get(b.URL + "/metrics")
	require.NoError(t, err)
	defer metrics.Body.Close()
	body, err := io.ReadAll(metrics.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `weft_queue_backlog{queue="default",tenant="default"} 1`)
	require.Contains(t, string(body), `weft_queue_pollers{queue="default",tenant="default"} 1`)
	require.Contains(t, string(body), `weft_queue_oldest_ready_age_seconds{queue="default",tenant="default"}`)
}

// unclaimedRun submits a run whose first action's activity no worker
// handles, tried twice, and answers its id.
func unclaimedRun(t *testing.T, runs weftv1connect.RunServiceClient, startTimeoutMs *uint32) string {
	t.Helper()
	def := &weftv1.WorkflowDefinition{PlanId: "unclaimed", PlanVersion: "1", Actions: []*weftv1.Action{{
		Id: "a", Order: 1, Activity: "nobody-runs-this", ScheduleToStartTimeoutMs: startTimeoutMs,
		OnFailure: weftv1.OnFailure_ON_FAILURE_ABORT,
		Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(2), InitialBackoffMs: proto.Uint32(50),
			Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT}}}}
	res, err := runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true}))
	require.NoError(t, err)
	return res.Msg.GetRun().GetRunId()
}

// requireFailsScheduleToStart waits for the run to fail because no worker
// ever claimed its task: two attempts, each schedule_to_start.
func requireFailsScheduleToStart(t *testing.T, runs weftv1connect.RunServiceClient, runID string) {
	t.Helper()
	var run *weftv1.Run
	require.Eventually(t, func() bool {
		res, err := runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
		require.NoError(t, err)
		run = res.Msg.GetRun()
		return run.GetStatus() == weftv1.RunStatus_RUN_STATUS_FAILED
	}, 20*time.Second, 50*time.Millisecond, "a run whose task nobody claims fails instead of hanging")
	step := run.GetSteps()[0]
	require.Equal(t, weftv1.StepStatus_STEP_STATUS_FAILED, step.GetStatus())
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_SCHEDULE_TO_START, step.GetError().GetErrorClass())
	require.Len(t, step.GetAttempts(), 2, "the retry policy applied")
	for _, a := range step.GetAttempts() {
		require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_SCHEDULE_TO_START, a.GetError().GetErrorClass())
	}
}

// TestWeftd_AnActionsScheduleToStartTimeoutFailsAnUnclaimedTaskThenRetries:
// embedded weftd, the action's own timeout (the deployment's is 5 minutes).
func TestWeftd_AnActionsScheduleToStartTimeoutFailsAnUnclaimedTaskThenRetries(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), d.URL)
	requireFailsScheduleToStart(t, runs, unclaimedRun(t, runs, proto.Uint32(300)))
}

// TestCluster_TheDeploymentsScheduleToStartTimeoutFailsAnUnclaimedTask: two
// weftd processes on PostgreSQL and Redis with --schedule-to-start-timeout;
// the action sets none.
func TestCluster_TheDeploymentsScheduleToStartTimeoutFailsAnUnclaimedTask(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), with(store, "--schedule-to-start-timeout", "300ms")...)
	b := startWeftdIn(t, t.TempDir(), with(store, "--schedule-to-start-timeout", "300ms")...)
	runID := unclaimedRun(t, weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL), nil)
	requireFailsScheduleToStart(t, weftv1connect.NewRunServiceClient(apitest.HTTPClient(), b.URL), runID)
}
