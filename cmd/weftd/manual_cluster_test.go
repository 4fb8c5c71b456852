package main

import (
	"context"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestCluster_ConcurrentDuplicateManualCompletionsAcrossTwoWeftdsGetTheOriginalResult
// sends 16 identical CompleteManualAction calls at once, half to each of two
// weftd processes sharing one PostgreSQL: every call answers the original
// result (one of them fresh, the rest duplicates), never IllegalTransition,
// and the run logs one acceptance.
func TestCluster_ConcurrentDuplicateManualCompletionsAcrossTwoWeftdsGetTheOriginalResult(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	redistest.Require(t)
	store := testkit.ClusterFlags(t, db)
	var signals []weftv1connect.SignalServiceClient
	var runs weftv1connect.RunServiceClient
	var events weftv1connect.EventServiceClient
	for range 2 {
		d := startWeftdIn(t, t.TempDir(), store...)
		signals = append(signals, weftv1connect.NewSignalServiceClient(apitest.HTTPClient(), d.URL))
		runs = weftv1connect.NewRunServiceClient(apitest.HTTPClient(), d.URL)
		events = weftv1connect.NewEventServiceClient(apitest.HTTPClient(), d.URL)
	}
	ctx := context.Background()
	def := &weftv1.WorkflowDefinition{PlanId: "manual", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "approve", Order: 1, CompletionMode: weftv1.CompletionMode_COMPLETION_MODE_MANUAL}}}
	for range 3 {
		res, err := runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true}))
		require.NoError(t, err)
		run := res.Msg.GetRun()
		token := run.GetSteps()[0].GetCompletionToken()
		require.NotEmpty(t, token)

		const n = 16
		results := make([]*weftv1.CompleteManualActionResponse, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				req := connect.NewRequest(&weftv1.CompleteManualActionRequest{SchemaVersion: 1, RunId: run.GetRunId(),
					ActionId: "approve", CompletionToken: token, Outcome: weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED,
					ActorUserId: "bob", CompletedAt: timestamppb.Now()})
				<-start
				res, err := signals[i%2].CompleteManualAction(ctx, req)
				if errs[i] = err; err == nil {
					results[i] = res.Msg
				}
			})
		}
		close(start)
		wg.Wait()
		fresh := 0
		for i := range n {
			require.NoError(t, errs[i], "call %d", i)
			require.Equal(t, results[0].GetResult().GetAcceptedAt().AsTime(), results[i].GetResult().GetAcceptedAt().AsTime())
			if !results[i].GetDuplicate() {
				fresh++
			}
		}
		require.Equal(t, 1, fresh, "one call completed the step, the rest were answered as duplicates")
		log, err := events.ListEvents(ctx, connect.NewRequest(&weftv1.ListEventsRequest{RunId: run.GetRunId(), PageSize: 1000}))
		require.NoError(t, err)
		accepted := 0
		for _, ev := range log.Msg.GetEvents() {
			if ev.GetSignalAccepted() != nil {
				accepted++
			}
			require.Nil(t, ev.GetSignalRejected(), "a retry is answered, never refused")
		}
		require.Equal(t, 1, accepted)
	}
}
