package apitest

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// endedRuns makes one run of each terminal status and answers them by status.
func endedRuns(t *testing.T, c Clients) map[weftv1.RunStatus]*weftv1.Run {
	t.Helper()
	ctx := context.Background()
	failing := uniqueName("apitest")
	failed := submit(t, c, oneActivity(failing))
	task := pollOne(t, c, failing)
	_, err := c.Workers.FailTask(ctx, connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: task.GetTaskToken(),
		WorkerId: "apitest-worker", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_VALIDATION, Message: "no"}))
	require.NoError(t, err)
	cancelled := submit(t, c, waitForSignal(uniqueName("apitest")))
	_, err = c.Runs.CancelRun(ctx, connect.NewRequest(&weftv1.CancelRunRequest{RunId: cancelled.GetRunId()}))
	require.NoError(t, err)
	runs := map[weftv1.RunStatus]*weftv1.Run{
		weftv1.RunStatus_RUN_STATUS_COMPLETED: completedRun(t, c),
		weftv1.RunStatus_RUN_STATUS_FAILED:    getRun(t, c, failed.GetRunId()),
		weftv1.RunStatus_RUN_STATUS_CANCELLED: getRun(t, c, cancelled.GetRunId()),
	}
	for status, run := range runs {
		require.Equal(t, status, run.GetStatus())
	}
	return runs
}

// testStartEndedRun: StartRun on a COMPLETED, FAILED or CANCELLED run is
// refused as an illegal transition on every protocol, JSON-RPC included, and
// leaves the run as it was.
func testStartEndedRun(t *testing.T, baseURL string) {
	runs := endedRuns(t, NewClients(baseURL, Protocols[0]))
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			for status, run := range runs {
				_, err := c.Runs.StartRun(context.Background(), connect.NewRequest(&weftv1.StartRunRequest{RunId: run.GetRunId()}))
				require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "%s: %v", status, err)
				fault := RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION)
				require.Equal(t, status, fault.GetRunStatus())
				require.Equal(t, run.GetRunId(), fault.GetRunId())
				require.Equal(t, run.GetLastEventSeq(), getRun(t, c, run.GetRunId()).GetLastEventSeq(), "nothing was logged")
			}
		})
	}
	t.Run("jsonrpc", func(t *testing.T) {
		for status, run := range runs {
			res := CallJSONRPC(t, baseURL, 1, "weft.v1.RunService/StartRun", map[string]string{"run_id": run.GetRunId()}, nil)
			require.NotNil(t, res.Error, "%s: %s", status, res.Result)
			require.Equal(t, -32009, res.Error.Code)
			require.Equal(t, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION, res.Fault(t).GetCode())
		}
	})
}

// transitionRequests are every request that asks a run to change, each sent
// to the run runID, answering its error. An ended run takes none of them.
var transitionRequests = map[string]func(c Clients, runID string) error{
	"StartRun": func(c Clients, runID string) error {
		_, err := c.Runs.StartRun(context.Background(), connect.NewRequest(&weftv1.StartRunRequest{RunId: runID}))
		return err
	},
	"ApproveRun": func(c Clients, runID string) error {
		_, err := c.Runs.ApproveRun(context.Background(), connect.NewRequest(&weftv1.ApproveRunRequest{RunId: runID}))
		return err
	},
	"PauseRun": func(c Clients, runID string) error {
		_, err := c.Runs.PauseRun(context.Background(), connect.NewRequest(&weftv1.PauseRunRequest{RunId: runID}))
		return err
	},
	"ResumeRun": func(c Clients, runID string) error {
		_, err := c.Runs.ResumeRun(context.Background(), connect.NewRequest(&weftv1.ResumeRunRequest{RunId: runID}))
		return err
	},
	"CancelRun": func(c Clients, runID string) error {
		_, err := c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID}))
		return err
	},
	"RetryStep": func(c Clients, runID string) error {
		_, err := c.Runs.RetryStep(context.Background(), connect.NewRequest(&weftv1.RetryStepRequest{RunId: runID, ActionId: "work"}))
		return err
	},
	"SkipStep": func(c Clients, runID string) error {
		_, err := c.Runs.SkipStep(context.Background(), connect.NewRequest(&weftv1.SkipStepRequest{RunId: runID, ActionId: "work"}))
		return err
	},
	"SignalRun": func(c Clients, runID string) error {
		_, err := c.Signals.SignalRun(context.Background(), connect.NewRequest(&weftv1.SignalRunRequest{RunId: runID, SignalName: "go"}))
		return err
	},
	"CompleteManualAction": func(c Clients, runID string) error {
		_, err := c.Signals.CompleteManualAction(context.Background(), connect.NewRequest(&weftv1.CompleteManualActionRequest{
			SchemaVersion: 1, RunId: runID, ActionId: "work", CompletionToken: "t", ActorUserId: "apitest",
			Outcome: weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED, CompletedAt: timestamppb.Now()}))
		return err
	},
}

// testTransitionOnEndedRun: every request that asks a COMPLETED run to
// change is refused as an illegal transition, and logs nothing that changes it.
func testTransitionOnEndedRun(t *testing.T, baseURL string) {
	c := NewClients(baseURL, Protocols[0])
	run := completedRun(t, c)
	for name, send := range transitionRequests {
		t.Run(name, func(t *testing.T) {
			err := send(c, run.GetRunId())
			require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "%v", err)
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION)
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, getRun(t, c, run.GetRunId()).GetStatus())
		})
	}
}
