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

// TestCluster_ARunConcurrencyKeyHoldsAcrossTwoWeftdsAndAKill9 runs two
// weftd processes on one PostgreSQL and Redis and submits, through both,
// 50 runs of a plan whose concurrency key is the run's customer (5
// customers, limit 2) on a slow activity, with workers polling both; once
// 10 tasks are done one weftd is killed with SIGKILL, and the workers and
// the run queue carry on with the other. From the event log (each run
// started at its RunStarted, holding a slot until its RunCompleted) no
// customer ever had more than 2 runs started at once, and every run
// completes — the killed weftd's runs keep their slots until they end on
// the survivor, and its queued runs start there.
func TestCluster_ARunConcurrencyKeyHoldsAcrossTwoWeftdsAndAKill9(t *testing.T) {
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

	activity := "runconc.slow"
	timeout := uint32(3000)
	def := &weftv1.WorkflowDefinition{PlanId: "charges", PlanVersion: "1",
		Concurrency: &weftv1.RunConcurrency{Key: "input.customer", Limit: 2},
		Actions: []*weftv1.Action{{
			Id: "charge", Order: 1, Activity: activity, TimeoutMs: &timeout,
			Retry: &weftv1.RetryPolicy{MaxAttempts: ptr(uint32(10)), Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT, InitialBackoffMs: ptr(uint32(100))},
		}}}
	var runIDs []string
	for i := range 50 {
		runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), urls[i%2])
		input, err := structpb.NewValue(map[string]any{"customer": fmt.Sprint("customer-", i%5)})
		require.NoError(t, err)
		res, err := runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true, Input: input}))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("customer-", i%5), res.Msg.GetRun().GetConcurrency().GetKey())
		runIDs = append(runIDs, res.Msg.GetRun().GetRunId())
	}

	var done atomic.Int32
	wg := slowWorkers(ctx, urls, &dead, activity, 16, 200*time.Millisecond, &done)
	require.Eventually(t, func() bool { return done.Load() >= 10 }, 2*time.Minute, 20*time.Millisecond, "work gets going")
	dead.Store(0)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, a.Wait(), "weftd was killed")

	requireAllCompleted(t, ctx, b.URL, runIDs)
	cancel()
	wg.Wait()

	byCustomer := map[string][]edge{}
	events := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), b.URL)
	for i, id := range runIDs {
		res, err := events.ListEvents(context.Background(), connect.NewRequest(&weftv1.ListEventsRequest{RunId: id, PageSize: 1000}))
		require.NoError(t, err)
		customer := fmt.Sprint("customer-", i%5)
		starts, ends := 0, 0
		for _, ev := range res.Msg.GetEvents() {
			switch {
			case ev.GetRunStarted() != nil:
				starts++
				byCustomer[customer] = append(byCustomer[customer], edge{ev.GetEmittedAt().AsTime(), +1})
			case ev.GetRunCompleted() != nil:
				ends++
				byCustomer[customer] = append(byCustomer[customer], edge{ev.GetEmittedAt().AsTime(), -1})
			}
		}
		require.Equal(t, 1, starts, "run %s started once", id)
		require.Equal(t, 1, ends, "run %s ended once", id)
	}
	for customer, edges := range byCustomer {
		most, started := mostAtOnce(edges)
		require.LessOrEqual(t, most, 2, "%s had %d runs started at once", customer, most)
		require.Equal(t, 2, most, "%s used its whole limit", customer)
		require.Zero(t, started)
	}
}
