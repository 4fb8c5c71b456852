package server

import (
	"context"
	"encoding/json"
	"testing"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	validate "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// nextFor asks for one next task of activity, as worker w1.
func nextFor(activity string) *weftv1.PollTasksRequest {
	return &weftv1.PollTasksRequest{WorkerId: "w1", MaxTasks: 1,
		Activities: []*weftv1.ActivityRegistration{{Name: activity}}}
}

func TestCompleteTask_NextTasksAnswersTheTaskTheResultMadeReadyAndCountsItDispatched(t *testing.T) {
	t.Parallel()
	for _, p := range twoProtocols {
		t.Run(p.Name, func(t *testing.T) {
			url := testServer(t, engineConfig(t))
			b := &bundle{t: t, c: apitest.NewClients(url, p)}
			run := b.submit(def(
				&weftv1.Action{Id: "a", Order: 1, Activity: "act-a"},
				&weftv1.Action{Id: "b", Order: 2, Activity: "act-b"}))
			ta := b.poll("act-a")
			res, err := b.c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
				TaskToken: ta.GetTaskToken(), WorkerId: "w1", Output: structpb.NewBoolValue(true), NextTasks: nextFor("act-b")}))
			require.NoError(t, err)
			require.Len(t, res.Msg.GetTasks(), 1)
			tb := res.Msg.GetTasks()[0]
			require.Equal(t, "b", tb.GetActionId())
			require.Equal(t, weftv1.TaskType_TASK_TYPE_ACTIVITY, tb.GetTaskType())
			require.NotEmpty(t, tb.GetTaskToken())

			b.complete(tb)
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, b.getRun(run.GetRunId()).GetStatus())
			require.Contains(t, scrape(t, url), "weft_tasks_dispatched_total 2", "one polled task, one eagerly dispatched")
		})
	}
}

func TestCompleteTask_NextTasksMustBeTheWorkersOwnAndNeverWait(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	for _, tc := range []struct {
		name, field, rule string
		next              *weftv1.PollTasksRequest
	}{
		{"another worker", "next_tasks.worker_id", "next_tasks.worker",
			&weftv1.PollTasksRequest{WorkerId: "w2", Activities: []*weftv1.ActivityRegistration{{Name: "act"}}}},
		{"a wait", "next_tasks.wait_ms", "next_tasks.no_wait",
			&weftv1.PollTasksRequest{WorkerId: "w1", WaitMs: 10, Activities: []*weftv1.ActivityRegistration{{Name: "act"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range twoProtocols {
				c := apitest.NewClients(url, p)
				_, err := c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
					TaskToken: "run/a/1/activity1#00", WorkerId: "w1", NextTasks: tc.next}))
				apitest.RequireInvalidField(t, err, tc.field, tc.rule)
			}
			params, err := protojson.Marshal(&weftv1.CompleteTaskRequest{TaskToken: "run/a/1/activity1#00", WorkerId: "w1", NextTasks: tc.next})
			require.NoError(t, err)
			res := apitest.CallJSONRPC(t, url, 1, "weft.v1.WorkerService/CompleteTask", json.RawMessage(params), nil)
			require.NotNil(t, res.Error, "result: %s", res.Result)
			require.Equal(t, "invalid_argument", res.Error.Data.ConnectCode)
			require.Len(t, res.Error.Data.Violations, 1)
			v := &validate.Violation{}
			require.NoError(t, protojson.Unmarshal(res.Error.Data.Violations[0], v))
			require.Equal(t, tc.field, protovalidate.FieldPathString(v.GetField()))
			require.Equal(t, tc.rule, v.GetRuleId())
		})
	}
}
