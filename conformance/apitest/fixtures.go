package apitest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// Clients are the generated clients of every weft.v1 service for one protocol.
type Clients struct {
	Runs    weftv1connect.RunServiceClient
	Signals weftv1connect.SignalServiceClient
	Events  weftv1connect.EventServiceClient
	Workers weftv1connect.WorkerServiceClient
	// Definitions is the definition registry.
	Definitions weftv1connect.DefinitionServiceClient
	// Views are the runs list's saved views.
	Views weftv1connect.ViewServiceClient
}

// NewClients answers clients of the server at baseURL speaking p.
func NewClients(baseURL string, p Protocol) Clients {
	hc := HTTPClient()
	return Clients{
		Runs:        weftv1connect.NewRunServiceClient(hc, baseURL, p.Options...),
		Signals:     weftv1connect.NewSignalServiceClient(hc, baseURL, p.Options...),
		Events:      weftv1connect.NewEventServiceClient(hc, baseURL, p.Options...),
		Workers:     weftv1connect.NewWorkerServiceClient(hc, baseURL, p.Options...),
		Definitions: weftv1connect.NewDefinitionServiceClient(hc, baseURL, p.Options...),
		Views:       weftv1connect.NewViewServiceClient(hc, baseURL, p.Options...),
	}
}

// uniqueName answers prefix plus a random suffix, so that rules sharing one
// server never take each other's tasks.
func uniqueName(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + "." + hex.EncodeToString(b[:])
}

// oneActivity is a one-action definition running activity.
func oneActivity(activity string) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{
		PlanId:      "apitest",
		PlanVersion: "1",
		Actions:     []*weftv1.Action{{Id: "work", Order: 1, Activity: activity}},
	}
}

// waitForSignal is a one-action definition that waits for signal.
func waitForSignal(signal string) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{
		PlanId:      "apitest",
		PlanVersion: "1",
		Actions:     []*weftv1.Action{{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: signal}}},
	}
}

// submit submits and starts def, and answers the run.
func submit(t *testing.T, c Clients, def *weftv1.WorkflowDefinition) *weftv1.Run {
	t.Helper()
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true}))
	require.NoError(t, err)
	require.NotEmpty(t, res.Msg.GetRun().GetRunId())
	return res.Msg.GetRun()
}

// pollOne claims the one task of activity, waiting for it.
func pollOne(t *testing.T, c Clients, activity string) *weftv1.Task {
	t.Helper()
	res, err := c.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
		WorkerId:   "apitest-worker",
		Activities: []*weftv1.ActivityRegistration{{Name: activity}},
		WaitMs:     5000,
	}))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetTasks(), 1, "no task of %s was handed out", activity)
	return res.Msg.GetTasks()[0]
}

// complete reports a task's output.
func complete(t *testing.T, c Clients, task *weftv1.Task, output *structpb.Value) {
	t.Helper()
	_, err := c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
		TaskToken: task.GetTaskToken(), WorkerId: "apitest-worker", Output: output}))
	require.NoError(t, err)
}

// completedRun runs a one-activity run to COMPLETED and answers it.
func completedRun(t *testing.T, c Clients) *weftv1.Run {
	t.Helper()
	activity := uniqueName("apitest")
	run := submit(t, c, oneActivity(activity))
	complete(t, c, pollOne(t, c, activity), structpb.NewStringValue("done"))
	return getRun(t, c, run.GetRunId())
}

// getRun reads a run.
func getRun(t *testing.T, c Clients, runID string) *weftv1.Run {
	t.Helper()
	res, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
	require.NoError(t, err)
	return res.Msg.GetRun()
}

// RequireFault asserts that err carries a Fault detail with code and a
// correlation id, and answers the fault.
func RequireFault(t *testing.T, err error, code weftv1.FaultCode) *weftv1.Fault {
	t.Helper()
	require.Error(t, err)
	var fault *weftv1.Fault
	var cerr *connect.Error
	if errors.As(err, &cerr) {
		for _, d := range cerr.Details() {
			if v, derr := d.Value(); derr == nil {
				if f, ok := v.(*weftv1.Fault); ok {
					fault = f
				}
			}
		}
	}
	require.NotNil(t, fault, "no weft.v1.Fault detail on %v", err)
	require.Equal(t, code, fault.GetCode(), "error: %v", err)
	require.Len(t, fault.GetCorrelationId(), 36)
	return fault
}
