package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

var engineCodes = []engine.Code{
	engine.CodeInvalidArgument, engine.CodeNotFound, engine.CodeIllegalTransition,
	engine.CodeSignalAcceptanceIndeterminate, engine.CodeOperationConflict, engine.CodeTaskClaimLost,
	engine.CodeResourceExhausted, engine.CodePermissionDenied, engine.CodeCapabilityUnavailable,
	engine.CodeUnavailable, engine.CodeSchemaValidationFailed, engine.CodePayloadTooLarge, engine.CodeInternal,
	engine.CodeFailedPrecondition,
}

func TestEngineFaultTable_MapsEveryEngineCode(t *testing.T) {
	t.Parallel()
	require.Len(t, faultForEngineCode, len(engineCodes))
	for _, code := range engineCodes {
		fc, ok := faultForEngineCode[code]
		require.True(t, ok, "%s has no fault code", code)
		require.NotEqual(t, weftv1.FaultCode_FAULT_CODE_UNSPECIFIED, fc)
		require.Equal(t, string(code), toSnake(fc), "engine and API codes should name the same fault")
	}
}

// toSnake answers FAULT_CODE_NOT_FOUND as not_found.
func toSnake(fc weftv1.FaultCode) string {
	name := fc.String()[len("FAULT_CODE_"):]
	out := []byte(name)
	for i, c := range out {
		if c >= 'A' && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}

func TestEngineFault_CarriesTheIdentifiers(t *testing.T) {
	t.Parallel()
	err := engineFault(&engine.Error{Code: engine.CodeIllegalTransition, Message: "run r cannot go COMPENSATING -> CANCELLED",
		RunID: "r", ActionID: "a", SignalName: "s", SignalID: "i", RunStatus: runstate.RunCompensating,
		Transition: "COMPENSATING -> CANCELLED"})
	require.Equal(t, connect.CodeAborted, connect.CodeOf(err))
	fault, ok := FaultOf(err)
	require.True(t, ok)
	require.Equal(t, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION, fault.GetCode())
	require.Equal(t, "r", fault.GetRunId())
	require.Equal(t, "a", fault.GetActionId())
	require.Equal(t, "s", fault.GetSignalName())
	require.Equal(t, "i", fault.GetSignalId())
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPENSATING, fault.GetRunStatus())
	require.Equal(t, "COMPENSATING -> CANCELLED", fault.GetTransition())
}

func TestEngineFault_OverloadSetsRetryAfter(t *testing.T) {
	t.Parallel()
	err := engineFault(&engine.Error{Code: engine.CodeResourceExhausted, RetryAfter: 2500 * time.Millisecond})
	var cerr *connect.Error
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, "3", cerr.Meta().Get("Retry-After"))
	fault, _ := FaultOf(err)
	require.Equal(t, uint32(2500), fault.GetRetryAfterMs())
}

func TestEngineFault_CapabilityIsNamed(t *testing.T) {
	t.Parallel()
	err := engineFault(&engine.Error{Code: engine.CodeCapabilityUnavailable, Capability: "conditionalBatch"})
	require.Equal(t, connect.CodeUnimplemented, connect.CodeOf(err))
	fault, _ := FaultOf(err)
	require.Equal(t, "conditionalBatch", fault.GetCapability())
}

func TestEngineFault_InvalidInputCarriesViolations(t *testing.T) {
	t.Parallel()
	for _, code := range []engine.Code{engine.CodeInvalidArgument, engine.CodePayloadTooLarge} {
		err := engineFault(&engine.Error{Code: code, Message: "invalid request", Violations: []engine.FieldViolation{
			{Field: "definition.actions[1].id", Rule: "actions.id_unique", Message: "id must be unique"}}})
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
		var cerr *connect.Error
		require.ErrorAs(t, err, &cerr)
		var got *validate.Violations
		for _, d := range cerr.Details() {
			if v, derr := d.Value(); derr == nil {
				if vs, ok := v.(*validate.Violations); ok {
					got = vs
				}
			}
		}
		require.NotNil(t, got, "%s: no Violations detail", code)
		require.Len(t, got.GetViolations(), 1)
		require.Equal(t, "actions.id_unique", got.GetViolations()[0].GetRuleId())
		require.Equal(t, "id must be unique", got.GetViolations()[0].GetMessage())
	}
}

func TestEngineFault_InternalErrorsStayUnwrappedForTheInterceptor(t *testing.T) {
	t.Parallel()
	plain := errors.New("disk on fire")
	require.Same(t, plain, engineFault(plain))
	internal := &engine.Error{Code: engine.CodeInternal, Message: "undecodable record"}
	var cerr *connect.Error
	require.False(t, errors.As(engineFault(internal), &cerr))
	require.NoError(t, engineFault(nil))
}

// engineErrorRuns answers GetRun with the engine's own error, unmapped, as
// every handler does: the fault interceptor alone maps it.
type engineErrorRuns struct {
	weftv1connect.UnimplementedRunServiceHandler
}

func (engineErrorRuns) GetRun(context.Context, *connect.Request[weftv1.GetRunRequest]) (*connect.Response[weftv1.GetRunResponse], error) {
	return nil, &engine.Error{Code: engine.CodeIllegalTransition, Message: "run r cannot go COMPLETED -> RUNNING",
		RunID: "r", RunStatus: runstate.RunCompleted, Transition: "COMPLETED -> RUNNING"}
}

// TestEngineErrors_AreMappedOnceByTheInterceptor: a handler that returns the
// engine's error as it is answers the fault, its identifiers and a
// correlation id on Connect, gRPC and JSON-RPC.
func TestEngineErrors_AreMappedOnceByTheInterceptor(t *testing.T) {
	t.Parallel()
	url := testServer(t, Config{Runs: engineErrorRuns{}})
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithGRPC()}, {connect.WithGRPCWeb()}} {
		client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, opts...)
		_, err := client.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: "r"}))
		require.Equal(t, connect.CodeAborted, connect.CodeOf(err))
		fault := apitest.RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION)
		require.Equal(t, "r", fault.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, fault.GetRunStatus())
		require.Equal(t, "COMPLETED -> RUNNING", fault.GetTransition())
	}
	rpc := apitest.CallJSONRPC(t, url, 1, "weft.v1.RunService/GetRun", map[string]string{"run_id": "r"}, nil)
	require.NotNil(t, rpc.Error)
	require.Equal(t, JSONRPCConflict, rpc.Error.Code)
	require.Equal(t, "COMPLETED -> RUNNING", rpc.Fault(t).GetTransition())
}
