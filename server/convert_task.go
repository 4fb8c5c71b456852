package server

import (
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// taskBox is a claimed task's message and its deadline's, allocated
// together: a worker's every call answers tasks.
type taskBox struct {
	task     weftv1.Task
	deadline timestamppb.Timestamp
}

// oneTask is a single claimed task's box and the slice that holds it,
// allocated together: a worker usually claims one task at a time.
type oneTask struct {
	box taskBox
	out [1]*weftv1.Task
}

// tasksProto answers claimed tasks as the API's, their messages allocated
// in one block.
func tasksProto(tasks []*engine.Task) []*weftv1.Task {
	if len(tasks) == 1 {
		one := new(oneTask)
		one.out[0] = taskProto(tasks[0], &one.box)
		return one.out[:]
	}
	boxes := make([]taskBox, len(tasks))
	out := make([]*weftv1.Task, len(tasks))
	for i, t := range tasks {
		out[i] = taskProto(t, &boxes[i])
	}
	return out
}

// taskProto converts a claimed task into box.
func taskProto(t *engine.Task, box *taskBox) *weftv1.Task {
	out := &box.task
	*out = weftv1.Task{
		TaskToken:          t.Token,
		TaskType:           taskTypes.Proto(t.Kind),
		TaskId:             t.TaskID,
		RunId:              t.RunID,
		ActionId:           t.ActionID,
		Activity:           t.Activity,
		OperationId:        t.OperationID,
		Input:              jsonValue(t.Input),
		RunInput:           jsonValue(t.RunInput),
		IdempotencyKey:     t.IdempotencyKey,
		LogicalAttemptId:   uint32(max(t.LogicalAttempt, 0)),
		EngineAttemptId:    uint32(max(t.EngineAttempt, 0)),
		Deadline:           eventpb.TimestampIn(&box.deadline, t.Deadline),
		HeartbeatTimeoutMs: uint32(max(t.HeartbeatTimeout.Milliseconds(), 0)),
		Secrets:            secretsProto(t.Secrets),
		Traceparent:        t.TraceParent,
		TenantId:           t.TenantID,
		ReconciliationKey:  t.ReconciliationKey,
		HeartbeatDetails:   jsonValue(t.HeartbeatDetails),
	}
	if t.ItemOf != "" { // a fan-out's item (docs/semantics.md#for-each)
		out.Item, out.Index = jsonValueOrNull(t.Item), uint32(max(t.Index, 0))
	}
	if len(t.UpstreamOutputs) > 0 {
		out.UpstreamOutputs = make(map[string]*structpb.Value, len(t.UpstreamOutputs))
		for id, v := range t.UpstreamOutputs {
			out.UpstreamOutputs[id] = jsonValueOrNull(v)
		}
	}
	return out
}
