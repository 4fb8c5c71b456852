package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestCluster_AStepConcurrencyLimitHoldsAcrossTwoWeftdsAndAKill9 runs two
// weftd processes on one PostgreSQL and Redis, 50 runs of a step whose
// concurrency key is the run's customer (5 customers, limit 2) on a slow
// activity, with workers polling both; once 15 tasks are done one weftd is
// killed with SIGKILL, and the workers carry on with the other. From the
// event log (each attempt's StepAttemptRecorded: claimed at started_at, in
// flight until completed_at) no customer ever had more than 2 tasks in
// flight, and every run completes — the killed weftd's claims whose answers
// never reached a worker time out and their slots come back.
func TestCluster_AStepConcurrencyLimitHoldsAcrossTwoWeftdsAndAKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	flags := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), with(flags, "--lease-ttl", "1s")...)
	b := startWeftdIn(t, t.TempDir(), with(flags, "--lease-ttl", "1s")...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := []string{a.URL, b.URL}
	var dead atomic.Int32
	dead.Store(-1)

	activity := "flow.slow"
	timeout := uint32(3000)
	def := &weftv1.WorkflowDefinition{PlanId: "charges", PlanVersion: "1", Actions: []*weftv1.Action{{
		Id: "charge", Order: 1, Activity: activity, TimeoutMs: &timeout,
		Retry:       &weftv1.RetryPolicy{MaxAttempts: ptr(uint32(10)), Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT, InitialBackoffMs: ptr(uint32(100))},
		Concurrency: &weftv1.StepConcurrency{Key: "input.customer", Limit: 2},
	}}}
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	var runIDs []string
	for i := range 50 {
		input, err := structpb.NewValue(map[string]any{"customer": fmt.Sprint("customer-", i%5)})
		require.NoError(t, err)
		res, err := runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true, Input: input}))
		require.NoError(t, err)
		runIDs = append(runIDs, res.Msg.GetRun().GetRunId())
	}

	var done atomic.Int32
	wg := slowWorkers(ctx, urls, &dead, activity, 16, 250*time.Millisecond, &done)
	require.Eventually(t, func() bool { return done.Load() >= 15 }, 2*time.Minute, 20*time.Millisecond, "work gets going")
	dead.Store(0)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, a.Wait(), "weftd was killed")

	requireAllCompleted(t, ctx, b.URL, runIDs)
	cancel()
	wg.Wait()

	byCustomer := map[string][]edge{}
	events := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), b.URL)
	attempts := 0
	for i, id := range runIDs {
		res, err := events.ListEvents(context.Background(), connect.NewRequest(&weftv1.ListEventsRequest{RunId: id, PageSize: 1000}))
		require.NoError(t, err)
		customer := fmt.Sprint("customer-", i%5)
		for _, ev := range res.Msg.GetEvents() {
			at := ev.GetStepAttemptRecorded().GetAttempt()
			if at == nil || at.GetStartedAt() == nil {
				continue // an attempt nobody claimed
			}
			attempts++
			byCustomer[customer] = append(byCustomer[customer], edge{at.GetStartedAt().AsTime(), +1}, edge{at.GetCompletedAt().AsTime(), -1})
		}
	}
	require.GreaterOrEqual(t, attempts, 50)
	for customer, edges := range byCustomer {
		most, inFlight := mostAtOnce(edges)
		require.LessOrEqual(t, most, 2, "%s had %d tasks in flight at once", customer, most)
		require.Zero(t, inFlight)
	}
}

func ptr[T any](v T) *T { return &v }
