package apitest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testSubmitAndComplete: a run submitted with start hands its task to a
// worker, and the worker's result completes it, through every protocol.
func testSubmitAndComplete(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			activity := uniqueName("apitest")
			run := submit(t, c, oneActivity(activity))
			require.Contains(t, []weftv1.RunStatus{weftv1.RunStatus_RUN_STATUS_QUEUED, weftv1.RunStatus_RUN_STATUS_RUNNING}, run.GetStatus())
			task := pollOne(t, c, activity)
			require.Equal(t, run.GetRunId(), task.GetRunId())
			require.Equal(t, "work", task.GetActionId())
			require.Equal(t, weftv1.TaskType_TASK_TYPE_ACTIVITY, task.GetTaskType())
			complete(t, c, task, structpb.NewStringValue("done"))

			got := getRun(t, c, run.GetRunId())
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetStatus())
			require.NotNil(t, got.GetStartedAt())
			require.NotNil(t, got.GetCompletedAt())
			require.Len(t, got.GetSteps(), 1)
			step := got.GetSteps()[0]
			require.Equal(t, weftv1.StepStatus_STEP_STATUS_SUCCEEDED, step.GetStatus())
			require.Equal(t, "done", step.GetOutput().GetStringValue())
			require.Len(t, step.GetAttempts(), 1)
			require.Equal(t, "apitest", got.GetDefinition().GetPlanId())
		})
	}
}

// testEagerDispatch: a completion that asks for next tasks is answered the
// task its result made ready, claimed for the worker, through every protocol.
func testEagerDispatch(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			first, second := uniqueName("apitest"), uniqueName("apitest")
			run := submit(t, c, &weftv1.WorkflowDefinition{PlanId: "apitest", PlanVersion: "1", Actions: []*weftv1.Action{
				{Id: "first", Order: 1, Activity: first}, {Id: "second", Order: 2, Activity: second}}})
			task := pollOne(t, c, first)
			res, err := c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
				TaskToken: task.GetTaskToken(), WorkerId: "apitest-worker", Output: structpb.NewStringValue("one"),
				NextTasks: &weftv1.PollTasksRequest{WorkerId: "apitest-worker", MaxTasks: 1,
					Activities: []*weftv1.ActivityRegistration{{Name: second}}}}))
			require.NoError(t, err)
			require.Len(t, res.Msg.GetTasks(), 1, "the next step came with the completion")
			next := res.Msg.GetTasks()[0]
			require.Equal(t, "second", next.GetActionId())
			require.Equal(t, "one", next.GetUpstreamOutputs()["first"].GetStringValue())
			complete(t, c, next, structpb.NewStringValue("two"))
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, getRun(t, c, run.GetRunId()).GetStatus())
		})
	}
}

// testAwaitRun: AwaitRun answers a run as it is when its wait passes, and
// the terminal run once a worker completes it, through every protocol.
func testAwaitRun(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			activity := uniqueName("apitest")
			run := submit(t, c, oneActivity(activity))
			res, err := c.Runs.AwaitRun(context.Background(), connect.NewRequest(&weftv1.AwaitRunRequest{RunId: run.GetRunId()}))
			require.NoError(t, err)
			require.NotEqual(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, res.Msg.GetRun().GetStatus(), "wait_ms 0 answers at once")
			complete(t, c, pollOne(t, c, activity), structpb.NewStringValue("done"))
			res, err = c.Runs.AwaitRun(context.Background(), connect.NewRequest(&weftv1.AwaitRunRequest{RunId: run.GetRunId(), WaitMs: 10000}))
			require.NoError(t, err)
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, res.Msg.GetRun().GetStatus())
			require.Equal(t, "done", res.Msg.GetRun().GetSteps()[0].GetOutput().GetStringValue())
		})
	}
}

// testProtoFieldNames: HTTP/JSON answers use the proto field names
// (started_at, completed_at), as docs/semantics.md#task-persistence requires.
func testProtoFieldNames(t *testing.T, baseURL string) {
	run := completedRun(t, NewClients(baseURL, Protocols[0]))
	body, err := json.Marshal(map[string]string{"run_id": run.GetRunId()})
	require.NoError(t, err)
	res, payload := postJSON(t, baseURL+"/weft.v1.RunService/GetRun", body)
	require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", payload)
	var got struct {
		Run map[string]json.RawMessage `json:"run"`
	}
	require.NoError(t, json.Unmarshal(payload, &got))
	for _, key := range []string{"run_id", "started_at", "completed_at", "created_at", "last_event_seq"} {
		require.Contains(t, got.Run, key, "body: %s", payload)
	}
	require.NotContains(t, string(payload), "startedAt")
	require.NotContains(t, string(payload), "completedAt")
}

// testNotFound: an unknown run answers not_found with the run id in the Fault.
func testNotFound(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			_, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: "run-does-not-exist"}))
			require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "error: %v", err)
			fault := RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_NOT_FOUND)
			require.Equal(t, "run-does-not-exist", fault.GetRunId())
		})
	}
}

// testIllegalTransition: cancelling a COMPLETED run is refused with aborted
// (409 on HTTP) and a Fault naming the status and the transition.
func testIllegalTransition(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			run := completedRun(t, c)
			_, err := c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: run.GetRunId()}))
			require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "error: %v", err)
			fault := RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION)
			require.Equal(t, run.GetRunId(), fault.GetRunId())
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, fault.GetRunStatus())
			require.Equal(t, "COMPLETED -> CANCELLED", fault.GetTransition())
		})
	}
	t.Run("http-json", func(t *testing.T) {
		run := completedRun(t, NewClients(baseURL, Protocols[0]))
		body, err := json.Marshal(map[string]string{"run_id": run.GetRunId()})
		require.NoError(t, err)
		res, payload := postJSON(t, baseURL+"/weft.v1.RunService/CancelRun", body)
		require.Equal(t, http.StatusConflict, res.StatusCode, "body: %s", payload)
		require.Contains(t, string(payload), `"code":"aborted"`)
	})
}

// testEngineValidation: a definition that passes the request rules but not
// the engine's (a duplicate action id) answers invalid_argument naming the
// offending field's full path and rule.
func testEngineValidation(t *testing.T, baseURL string) {
	def := oneActivity(uniqueName("apitest"))
	def.Actions = append(def.Actions, &weftv1.Action{Id: "work", Order: 2, Activity: "other"})
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			_, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def}))
			RequireInvalidField(t, err, "definition.actions[1].id", "actions.id_unique")
		})
	}
}
