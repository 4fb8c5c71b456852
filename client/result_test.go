package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

type receipt struct {
	Total    int    `json:"total"`
	Currency string `json:"currency"`
}

// TestResult_IsTheNamedActionsOutputOnceTheRunIsCompleted: GetRun and
// AwaitRun carry the output of the action result_action_id names once the
// run is COMPLETED, and Result decodes it into a typed value; before that,
// and for a definition that names no result, there is none.
func TestResult_IsTheNamedActionsOutputOnceTheRunIsCompleted(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	ctx := context.Background()
	def := waitingForSignal()
	def.ResultActionId = "wait"
	run := submit(t, c, def)
	_, err := client.Result[receipt](run)
	require.ErrorIs(t, err, client.ErrNoResult, "a BLOCKED run has no result yet")

	payload, err := structpb.NewValue(map[string]any{"total": 42, "currency": "EUR"})
	require.NoError(t, err)
	_, err = c.SignalRun(ctx, &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: "go", Payload: payload})
	require.NoError(t, err)
	final, err := c.AwaitRun(ctx, run.GetRunId())
	require.NoError(t, err)
	got, err := client.Result[receipt](final)
	require.NoError(t, err)
	require.Equal(t, receipt{Total: 42, Currency: "EUR"}, got)
	again, err := c.GetRun(ctx, run.GetRunId())
	require.NoError(t, err)
	require.Equal(t, "EUR", again.GetResult().GetStructValue().GetFields()["currency"].GetStringValue())
	_, err = client.Result[[]string](final)
	require.ErrorContains(t, err, "does not decode")

	plain := submit(t, c, waitingForSignal())
	_, err = c.SignalRun(ctx, &weftv1.SignalRunRequest{RunId: plain.GetRunId(), SignalName: "go", Payload: payload})
	require.NoError(t, err)
	plainFinal, err := c.AwaitRun(ctx, plain.GetRunId())
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, plainFinal.GetStatus())
	_, err = client.Result[receipt](plainFinal)
	require.ErrorIs(t, err, client.ErrNoResult, "a definition without result_action_id has no result")
}

// TestResult_ANameThatIsNoActionIsRefusedNamingResultActionID.
func TestResult_ANameThatIsNoActionIsRefusedNamingResultActionID(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	def := waitingForSignal()
	def.ResultActionId = "nope"
	_, err := c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Definition: def, Start: true})
	require.ErrorContains(t, err, "result_action_id")
}
