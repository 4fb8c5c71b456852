package apitest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// compensatedPair is a definition of two actions: "reserve" with a hook
// running undo, then "charge", both on activity.
func compensatedPair(activity, undo string) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "apitest", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "reserve", Order: 1, Activity: activity, Compensation: &weftv1.CompensationHook{Operation: undo}},
		{Id: "charge", Order: 2, Activity: activity},
	}}
}

// pollCompensation claims the one ready hook of operation.
func pollCompensation(t *testing.T, c Clients, operation string) *weftv1.Task {
	t.Helper()
	res, err := c.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
		WorkerId: "apitest-worker", Compensations: []string{operation}, WaitMs: 5000}))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetTasks(), 1, "no hook of %s was handed out", operation)
	return res.Msg.GetTasks()[0]
}

// testCancelCompensate: CancelRun with compensate compensates the succeeded
// step, and the run ends CANCELLED with its outcome, on every protocol and
// over HTTP/JSON.
func testCancelCompensate(t *testing.T, baseURL string) {
	cancelCompensated := func(t *testing.T, c Clients, cancel func(runID string) *weftv1.Run) {
		activity, undo := uniqueName("apitest"), uniqueName("undo")
		run := submit(t, c, compensatedPair(activity, undo))
		complete(t, c, pollOne(t, c, activity), structpb.NewStringValue("reserved"))
		charge := pollOne(t, c, activity)
		require.Equal(t, "charge", charge.GetActionId())
		after := cancel(run.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPENSATING, after.GetStatus())
		require.True(t, after.GetCancellation().GetCompensate())
		hook := pollCompensation(t, c, undo)
		require.Equal(t, "reserve", hook.GetActionId())
		complete(t, c, hook, structpb.NewNullValue())
		end := getRun(t, c, run.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_CANCELLED, end.GetStatus())
		require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK, end.GetCompensationOutcome())
	}
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			cancelCompensated(t, c, func(runID string) *weftv1.Run {
				res, err := c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{
					RunId: runID, Reason: "withdrawn", Compensate: true}))
				require.NoError(t, err)
				_, err = c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID, Compensate: true}))
				RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION)
				return res.Msg.GetRun()
			})
		})
	}
	t.Run("http-json", func(t *testing.T) {
		c := NewClients(baseURL, Protocols[0])
		cancelCompensated(t, c, func(runID string) *weftv1.Run {
			body, err := json.Marshal(map[string]any{"run_id": runID, "compensate": true})
			require.NoError(t, err)
			res, payload := postJSON(t, baseURL+"/weft.v1.RunService/CancelRun", body)
			require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", payload)
			var msg weftv1.CancelRunResponse
			require.NoError(t, protojson.Unmarshal(payload, &msg))
			return msg.GetRun()
		})
	})
}
