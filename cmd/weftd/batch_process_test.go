package main

import (
	"context"
	"fmt"
	"strings"
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

// TestBatch_Kill9OfItsWeftdMidwayFinishesEveryRunExactlyOnce runs two weftd
// processes on one PostgreSQL, starts a batch that cancels 500 runs at 100
// runs a second through one of them, kills the weftd driving it with
// SIGKILL once 100 runs are done, and checks that the other weftd takes the
// batch over and finishes it: every run cancelled by exactly one accepted
// cancel carrying the batch's signal id, every outcome recorded once; and
// that StartBatch sent again answers the same batch.
func TestBatch_Kill9OfItsWeftdMidwayFinishesEveryRunExactlyOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	const ttl = time.Second
	a := startWeftdIn(t, t.TempDir(), with(store, "--lease-ttl", ttl.String())...)
	b := startWeftdIn(t, t.TempDir(), with(store, "--lease-ttl", ttl.String())...)
	ctx := context.Background()
	runsA := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), a.URL)
	runsB := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), b.URL)

	runIDs := submitWaiting(t, runsA, 500)
	start := &weftv1.StartBatchRequest{BatchId: "cancel-500", RunIds: runIDs, Operation: weftv1.BatchOperation_BATCH_OPERATION_CANCEL,
		Rate: 100, Reason: "incident 7"}
	first, err := runsA.StartBatch(ctx, connect.NewRequest(start))
	require.NoError(t, err)
	require.False(t, first.Msg.GetExisting())
	again, err := runsB.StartBatch(ctx, connect.NewRequest(start))
	require.NoError(t, err, "the same batch_id again is never a conflict")
	require.True(t, again.Msg.GetExisting())
	require.Equal(t, first.Msg.GetBatch().GetCreatedAt().AsTime(), again.Msg.GetBatch().GetCreatedAt().AsTime(), "the original batch")
	require.Equal(t, uint32(500), again.Msg.GetBatch().GetTotal())

	var owner string
	require.Eventually(t, func() bool {
		res, err := runsB.DescribeBatch(ctx, connect.NewRequest(&weftv1.DescribeBatchRequest{BatchId: "cancel-500"}))
		if err != nil {
			return false
		}
		owner = res.Msg.GetBatch().GetOwner()
		return res.Msg.GetBatch().GetDone() >= 100 && owner != ""
	}, 3*time.Minute, 20*time.Millisecond, "the batch gets a hundred runs in")
	victim, survivor, survivorRuns := a, b, runsB
	if strings.HasSuffix(owner, fmt.Sprintf("-%d", b.Cmd.Process.Pid)) {
		victim, survivor, survivorRuns = b, a, runsA
	}
	require.NoError(t, victim.Cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, victim.Wait(), "weftd was killed")

	var batch *weftv1.Batch
	require.Eventually(t, func() bool {
		res, err := survivorRuns.DescribeBatch(ctx, connect.NewRequest(&weftv1.DescribeBatchRequest{BatchId: "cancel-500"}))
		if err != nil {
			return false
		}
		batch = res.Msg.GetBatch()
		return batch.GetState() == weftv1.BatchState_BATCH_STATE_COMPLETED
	}, 5*time.Minute, 50*time.Millisecond, "the surviving weftd finishes the batch")
	require.Equal(t, uint32(500), batch.GetSucceeded())
	require.Equal(t, uint32(0), batch.GetFailed())
	require.Contains(t, survivor.Logs(), `"msg":"batch taken"`, "the batch was resumed by the other weftd")

	outcomes := describeAll(t, survivorRuns, "cancel-500")
	require.Len(t, outcomes, 500)
	for i, r := range outcomes {
		require.Equal(t, runIDs[i], r.GetRunId())
		require.Equal(t, weftv1.BatchRunOutcome_BATCH_RUN_OUTCOME_SUCCEEDED, r.GetOutcome(), "run %s", r.GetRunId())
	}
	events := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), survivor.URL)
	for _, id := range runIDs {
		res, err := events.ListEvents(ctx, connect.NewRequest(&weftv1.ListEventsRequest{RunId: id, PageSize: 1000}))
		require.NoError(t, err)
		accepted, cancelled := 0, 0
		for _, ev := range res.Msg.GetEvents() {
			switch ev.GetEventType() {
			case "SignalAccepted":
				require.Equal(t, "batch:cancel-500", ev.GetSignalAccepted().GetResult().GetSignalId())
				accepted++
			case "RunCancelled":
				cancelled++
			}
		}
		require.Equal(t, 1, accepted, "run %s: one cancel accepted", id)
		require.Equal(t, 1, cancelled, "run %s: cancelled once", id)
	}
}

// submitWaiting submits n runs that wait for a signal, eight at a time.
func submitWaiting(t *testing.T, runs weftv1connect.RunServiceClient, n int) []string {
	t.Helper()
	def := &weftv1.WorkflowDefinition{PlanId: "waits", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				res, err := runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true,
					RunRequestId: fmt.Sprint("batch-", i)}))
				if err != nil {
					errs <- err
					return
				}
				ids[i] = res.Msg.GetRun().GetRunId()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return ids
}

// describeAll answers every run of a batch, page by page.
func describeAll(t *testing.T, runs weftv1connect.RunServiceClient, id string) []*weftv1.BatchRun {
	t.Helper()
	var out []*weftv1.BatchRun
	token := ""
	for {
		res, err := runs.DescribeBatch(context.Background(), connect.NewRequest(&weftv1.DescribeBatchRequest{BatchId: id, PageSize: 200, PageToken: token}))
		require.NoError(t, err)
		out = append(out, res.Msg.GetRuns()...)
		if token = res.Msg.GetNextPageToken(); token == "" {
			return out
		}
	}
}
