package main

import (
	"context"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestCluster_TwoWeftdsFireEachNominalTimeOnceAndAKilledOneLosesNone runs
// two weftd processes on one PostgreSQL, each ticking the same one-second
// schedule; one is killed with SIGKILL mid-way. Every nominal time from the
// first fire to the last has exactly one run — none doubled by the two
// processes, none lost by the killed one — and the schedule's fire counter
// agrees with the runs.
func TestCluster_TwoWeftdsFireEachNominalTimeOnceAndAKilledOneLosesNone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), store...)
	b := startWeftdIn(t, t.TempDir(), store...)
	ctx := context.Background()
	schedA := weftv1connect.NewScheduleServiceClient(apitest.HTTPClient(), a.URL)
	schedB := weftv1connect.NewScheduleServiceClient(apitest.HTTPClient(), b.URL)
	runsB := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), b.URL)
	def := &weftv1.WorkflowDefinition{PlanId: "every-second", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}},
	}}
	_, err := schedA.CreateSchedule(ctx, connect.NewRequest(&weftv1.CreateScheduleRequest{ScheduleId: "s",
		Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_IntervalMs{IntervalMs: 1000},
			OverlapPolicy: weftv1.OverlapPolicy_OVERLAP_POLICY_ALLOW_ALL},
		Definition: def}))
	require.NoError(t, err)
	fires := func() uint64 {
		res, err := schedB.GetSchedule(ctx, connect.NewRequest(&weftv1.GetScheduleRequest{ScheduleId: "s"}))
		require.NoError(t, err)
		return res.Msg.GetSchedule().GetFires()
	}
	require.Eventually(t, func() bool { return fires() >= 3 }, 30*time.Second, 100*time.Millisecond)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()
	atKill := fires()
	require.Eventually(t, func() bool { return fires() >= atKill+3 }, 30*time.Second, 100*time.Millisecond,
		"the surviving weftd keeps firing")
	_, err = schedB.PauseSchedule(ctx, connect.NewRequest(&weftv1.PauseScheduleRequest{ScheduleId: "s"}))
	require.NoError(t, err)

	res, err := runsB.ListRuns(ctx, connect.NewRequest(&weftv1.ListRunsRequest{PageSize: 1000}))
	require.NoError(t, err)
	var nominal []time.Time
	for _, r := range res.Msg.GetRuns() {
		require.Equal(t, "schedule", r.GetTriggerSource())
		ts, err := time.Parse("20060102T150405.000Z", r.GetRunRequestId()[len("schedule:s:"):])
		require.NoError(t, err, r.GetRunRequestId())
		nominal = append(nominal, ts)
	}
	sort.Slice(nominal, func(i, j int) bool { return nominal[i].Before(nominal[j]) })
	for i := 1; i < len(nominal); i++ {
		require.Equal(t, time.Second, nominal[i].Sub(nominal[i-1]), "nominal times %s and %s: none doubled, none lost",
			nominal[i-1], nominal[i])
	}
	require.EqualValues(t, len(nominal), fires())
}

// TestCluster_ATriggerRetriedOnEitherWeftdStartsOneRun: one TriggerSchedule
// with a request_id, sent to two weftd processes on one PostgreSQL (twice
// to one, once to the other, and then concurrently to both), starts one run
// and counts one fire; after an update of the schedule's definition the
// retry still answers that run.
func TestCluster_ATriggerRetriedOnEitherWeftdStartsOneRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), store...)
	b := startWeftdIn(t, t.TempDir(), store...)
	ctx := context.Background()
	clients := []weftv1connect.ScheduleServiceClient{
		weftv1connect.NewScheduleServiceClient(apitest.HTTPClient(), a.URL),
		weftv1connect.NewScheduleServiceClient(apitest.HTTPClient(), b.URL),
	}
	def := &weftv1.WorkflowDefinition{PlanId: "deploy", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}},
	}}
	_, err := clients[0].CreateSchedule(ctx, connect.NewRequest(&weftv1.CreateScheduleRequest{ScheduleId: "deploy",
		Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_Cron{Cron: "@yearly"}}, Definition: def}))
	require.NoError(t, err)
	trigger := func(c weftv1connect.ScheduleServiceClient) string {
		res, err := c.TriggerSchedule(ctx, connect.NewRequest(&weftv1.TriggerScheduleRequest{ScheduleId: "deploy", RequestId: "release-1"}))
		require.NoError(t, err)
		require.Equal(t, "schedule:deploy:manual:release-1", res.Msg.GetRun().GetRunRequestId())
		return res.Msg.GetRun().GetRunId()
	}
	first := trigger(clients[0])
	require.Equal(t, first, trigger(clients[0]))
	require.Equal(t, first, trigger(clients[1]))
	ids := make(chan string, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { ids <- trigger(clients[i%2]) })
	}
	wg.Wait()
	close(ids)
	for id := range ids {
		require.Equal(t, first, id)
	}
	v2 := &weftv1.WorkflowDefinition{PlanId: "deploy", PlanVersion: "2", Actions: def.GetActions()}
	_, err = clients[1].UpdateSchedule(ctx, connect.NewRequest(&weftv1.UpdateScheduleRequest{ScheduleId: "deploy", Definition: v2}))
	require.NoError(t, err)
	require.Equal(t, first, trigger(clients[0]), "the retry after the update answers the run it started")

	runs, err := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), b.URL).ListRuns(ctx,
		connect.NewRequest(&weftv1.ListRunsRequest{PageSize: 100}))
	require.NoError(t, err)
	require.Len(t, runs.Msg.GetRuns(), 1)
	got, err := clients[1].GetSchedule(ctx, connect.NewRequest(&weftv1.GetScheduleRequest{ScheduleId: "deploy"}))
	require.NoError(t, err)
	require.EqualValues(t, 1, got.Msg.GetSchedule().GetFires())
	require.Equal(t, "2", got.Msg.GetSchedule().GetDefinition().GetPlanVersion())
}
