package server

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// taskProto converts a claimed task.
func taskProto(t *engine.Task) *weftv1.Task {
	out := &weftv1.Task{
		TaskToken:          t.Token,
		TaskType:           taskTypes.Proto(t.Kind),
		TaskId:             t.TaskID,
		RunId:              t.RunID,
		ActionId:           t.ActionID,
		Activity:           t.Activity,
		OperationId:        t.OperationID,
		Input:              eventpb.JSONValue(t.Input),
		RunInput:           eventpb.JSONValue(t.RunInput),
		IdempotencyKey:     t.IdempotencyKey,
		LogicalAttemptId:   uint32(max(t.LogicalAttempt, 0)),
		EngineAttemptId:    uint32(max(t.EngineAttempt, 0)),
		Deadline:           eventpb.Timestamp(t.Deadline),
		HeartbeatTimeoutMs: uint32(max(t.HeartbeatTimeout.Milliseconds(), 0)),
		Secrets:            secretsProto(t.Secrets),
		TenantId:           t.TenantID,
		ReconciliationKey:  t.ReconciliationKey,
	}
	if len(t.UpstreamOutputs) > 0 {
		out.UpstreamOutputs = make(map[string]*structpb.Value, len(t.UpstreamOutputs))
		for id, v := range t.UpstreamOutputs {
			out.UpstreamOutputs[id] = jsonValueOrNull(v)
		}
	}
	return out
}
