package worker

import (
	"context"
	"encoding/json"
	"time"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// ActivityInfo describes the task an activity runs.
type ActivityInfo struct {
	// TaskType is ACTIVITY, COMPENSATION or VERIFY.
	TaskType weftv1.TaskType
	// TaskID identifies the task (stable across claims of one attempt).
	TaskID string
	// RunID, ActionID and TenantID say whose task it is.
	RunID, ActionID, TenantID string
	// Activity is the activity or compensation operation name.
	Activity string
	// OperationID is operationId of docs/semantics.md#reconciliation, stable for the logical attempt.
	OperationID string
	// IdempotencyKey is Weft's key for the action, stable across retries:
	// pass it to external systems.
	IdempotencyKey string
	// LogicalAttempt starts at 1 and grows on RetryStep; EngineAttempt starts
	// at 1 within it and grows on every automatic retry.
	LogicalAttempt, EngineAttempt uint32
	// Deadline is when the attempt times out (zero: none given).
	Deadline time.Time
	// RunInput is the run's input as JSON (null when none).
	RunInput json.RawMessage
	// UpstreamOutputs are the outputs of the actions this one depends on, by
	// action id; in a repeat step's later iterations, also the previous
	// iteration's output under the step's own id (docs/semantics.md#repeat).
	// The task's input already has its ${{ }} expressions evaluated
	// (docs/semantics.md#input-expressions).
	UpstreamOutputs map[string]json.RawMessage
	// Secrets are the references the worker resolves.
	Secrets []*weftv1.SecretRef
	// WorkerID is this worker's id.
	WorkerID string
	// HeartbeatDetails are the details of the last heartbeat an earlier
	// engine attempt of this logical attempt sent (nil: none); see
	// [HeartbeatDetails] (docs/semantics.md#heartbeat-details).
	HeartbeatDetails json.RawMessage
	// Item and Index, for an item of a fan-out (docs/semantics.md#for-each),
	// are the list's element the item runs with (JSON) and its position from
	// 0; ActionID is then the step's id and [Index]. Item is nil, and IsItem
	// false, for any other task.
	Item   json.RawMessage
	Index  int
	IsItem bool
}

type infoKey struct{}

// Info answers the task the activity runs; the zero value outside one.
func Info(ctx context.Context) ActivityInfo {
	info, _ := ctx.Value(infoKey{}).(ActivityInfo)
	return info
}

// Upstream decodes the output of an upstream action into a T.
func Upstream[T any](ctx context.Context, actionID string) (T, bool, error) {
	var v T
	raw, ok := Info(ctx).UpstreamOutputs[actionID]
	if !ok {
		return v, false, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, true, err
}
