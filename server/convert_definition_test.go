package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// everyField is a definition that sets every field to a non-zero value.
func everyField(t *testing.T) *weftv1.WorkflowDefinition {
	t.Helper()
	input, err := structpb.NewValue(map[string]any{"n": 1.5, "tags": []any{"a", "b"}})
	require.NoError(t, err)
	return &weftv1.WorkflowDefinition{
		PlanId: "plan", PlanVersion: "2", TimeoutMs: proto.Uint32(60000),
		Backpressure: weftv1.BackpressureMode_BACKPRESSURE_MODE_QUEUE, MaxConcurrentRuns: proto.Uint32(4),
		RequiresApproval: true, DisplayName: "Every field", Dag: true,
		Actions: []*weftv1.Action{
			{
				Id: "charge", Order: 1, Activity: "payments.charge", Queue: "payments", Input: input,
				Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(5), Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_LINEAR,
					InitialBackoffMs: proto.Uint32(250), BackoffMultiplier: proto.Float64(3), MaxBackoffMs: proto.Uint32(9000),
					RetryableErrors: []weftv1.ErrorClass{weftv1.ErrorClass_ERROR_CLASS_TIMEOUT, weftv1.ErrorClass_ERROR_CLASS_EXTERNAL}},
				TimeoutMs: proto.Uint32(1000), HeartbeatTimeoutMs: proto.Uint32(500),
				OnFailure:      weftv1.OnFailure_ON_FAILURE_SKIP,
				CompletionMode: weftv1.CompletionMode_COMPLETION_MODE_MANUAL, ManualTimeoutMs: proto.Uint32(7000),
				Compensation: &weftv1.CompensationHook{Operation: "payments.refund", Input: structpb.NewStringValue("x"),
					TimeoutMs: proto.Uint32(300), Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(2)}, Queue: "refunds"},
				Secrets: []*weftv1.SecretRef{{Name: "api_key", Ref: "vault://kv/payments#api_key"}},
			},
			{
				Id: "wait", Order: 2, DependsOn: []string{"charge"},
				WaitForSignal: &weftv1.WaitForSignal{SignalName: "go", TimeoutMs: proto.Uint32(2000)},
			},
		},
	}
}

func TestDefinition_RoundTripsThroughTheEngine(t *testing.T) {
	t.Parallel()
	in := everyField(t)
	def, err := definitionOf(in, "definition")
	require.NoError(t, err)
	require.Empty(t, cmpDiff(in, definitionProto(def)))
}

func TestDefinition_ConvertsUnitsAndEnums(t *testing.T) {
	t.Parallel()
	def, err := definitionOf(everyField(t), "definition")
	require.NoError(t, err)
	a := def.Actions[0]
	require.Equal(t, time.Second, a.Timeout.D())
	require.Equal(t, time.Minute, def.Timeout.D())
	require.Equal(t, definition.OnFailureSkip, a.OnFailure)
	require.Equal(t, definition.CompletionManual, a.Completion)
	require.Equal(t, definition.BackoffLinear, a.Retry.Strategy)
	require.Equal(t, []definition.ErrorClass{definition.ErrorTimeout, definition.ErrorExternal}, a.Retry.RetryableErrors)
	require.Equal(t, definition.BackpressureQueue, def.Backpressure)
	require.JSONEq(t, `{"n":1.5,"tags":["a","b"]}`, string(a.Input))
}

func TestDefinition_UnsetFieldsAreTheEngineZero(t *testing.T) {
	t.Parallel()
	def, err := definitionOf(&weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1",
		Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}, "definition")
	require.NoError(t, err)
	require.Equal(t, definition.Action{ID: "a", Order: 1, Activity: "x"}, def.Actions[0])
	require.Zero(t, def.Timeout)
	require.Empty(t, def.Backpressure)
}

func TestDefinition_ValueWithoutKindIsNull(t *testing.T) {
	t.Parallel()
	def, err := definitionOf(&weftv1.WorkflowDefinition{Actions: []*weftv1.Action{{Input: &structpb.Value{}}}}, "definition")
	require.NoError(t, err)
	require.Equal(t, json.RawMessage("null"), def.Actions[0].Input)
}

// cmpDiff answers "" when want and got are equal, else both in text form.
func cmpDiff(want, got proto.Message) string {
	if proto.Equal(want, got) {
		return ""
	}
	return "want: " + prototext.Format(want) + "\ngot:  " + prototext.Format(got)
}

// A retry policy converts to nil only when no field of it is set: any one
// field set round-trips on its own.
func TestRetryProto_IsNilOnlyForAnAllUnsetPolicy(t *testing.T) {
	t.Parallel()
	require.Nil(t, retryProto(definition.RetryPolicy{}))
	for _, p := range []*weftv1.RetryPolicy{
		{MaxAttempts: proto.Uint32(3)}, {Strategy: weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT},
		{InitialBackoffMs: proto.Uint32(10)}, {BackoffMultiplier: proto.Float64(1.5)}, {MaxBackoffMs: proto.Uint32(99)},
		{RetryableErrors: []weftv1.ErrorClass{weftv1.ErrorClass_ERROR_CLASS_TIMEOUT}},
	} {
		require.Empty(t, cmpDiff(p, retryProto(retryOf(p))), "%v", p)
	}
}
