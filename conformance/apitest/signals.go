package apitest

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testSignalDuplicate: a second SignalRun with the same signal_id answers the
// first request's AcceptedSignalResult with duplicate set, and the signal is
// consumed once (docs/semantics.md#signal-idempotency).
func testSignalDuplicate(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			run := submit(t, c, waitForSignal("approve"))
			send := func() *weftv1.SignalRunResponse {
				res, err := c.Signals.SignalRun(context.Background(), connect.NewRequest(&weftv1.SignalRunRequest{
					RunId: run.GetRunId(), SignalName: "approve", SignalId: proto.String("click-1"),
					Payload: structpb.NewStringValue("yes")}))
				require.NoError(t, err)
				return res.Msg
			}
			first, second := send(), send()
			require.False(t, first.GetDuplicate())
			require.True(t, second.GetDuplicate())
			require.True(t, proto.Equal(first.GetResult(), second.GetResult()), "first %v, second %v", first.GetResult(), second.GetResult())
			require.Equal(t, "click-1", first.GetResult().GetSignalId())

			got := getRun(t, c, run.GetRunId())
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetStatus())
			require.Equal(t, "yes", got.GetSteps()[0].GetOutput().GetStringValue())
		})
	}
}

// testLateTaskReport: a report on a task whose claim is gone (its run was
// cancelled) changes nothing and answers TASK_CLAIM_LOST.
func testLateTaskReport(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			activity := uniqueName("apitest")
			run := submit(t, c, oneActivity(activity))
			task := pollOne(t, c, activity)
			_, err := c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: run.GetRunId()}))
			require.NoError(t, err)
			_, err = c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
				TaskToken: task.GetTaskToken(), WorkerId: "apitest-worker"}))
			require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "error: %v", err)
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_TASK_CLAIM_LOST)
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_CANCELLED, getRun(t, c, run.GetRunId()).GetStatus())
		})
	}
}
