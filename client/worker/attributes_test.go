package worker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestSetSearchAttributes_AreSetOnTheRunWithTheResult: attributes an
// activity sets reach the run with its result, queryable by the next step;
// outside an activity the call does nothing.
func TestSetSearchAttributes_AreSetOnTheRunWithTheResult(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	worker.SetSearchAttributes(context.Background(), map[string]*weftv1.SearchAttributeValue{"x": client.AttrInt(1)})
	worker.Register(b.w, "charge", func(ctx context.Context, _ struct{}) (string, error) {
		worker.SetSearchAttributes(ctx, map[string]*weftv1.SearchAttributeValue{"charged": client.AttrBool(false)})
		worker.SetSearchAttributes(ctx, map[string]*weftv1.SearchAttributeValue{"charged": client.AttrBool(true), "amount": client.AttrDouble(12.5)})
		return "ok", nil
	})
	b.start()
	runID := b.submit(plan(&weftv1.Action{Id: "charge", Order: 1, Activity: "charge"}))
	run := b.await(runID)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	require.True(t, run.GetSearchAttributes()["charged"].GetBoolValue())
	require.Equal(t, 12.5, run.GetSearchAttributes()["amount"].GetDoubleValue())
	runs, err := b.c.QueryRuns(context.Background(), `charged = TRUE AND amount > 10`, 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, runID, runs[0].GetRunId())
}
