package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// faultMapping is how one FaultCode appears on each transport.
type faultMapping struct {
	connect connect.Code
	http    int
	jsonRPC int
}

// JSONRPCConflict is the Weft conflict code in JSON-RPC's server range: illegal
// transitions, operation conflicts and SignalAcceptanceIndeterminate answer it.
const JSONRPCConflict = -32009

// faults is the one table from fault codes to transports (docs/semantics.md#faults). The
// proto comment on each FaultCode documents the same triple; a test keeps the
// two in step.
var faults = map[weftv1.FaultCode]faultMapping{
	weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT:                {connect.CodeInvalidArgument, http.StatusBadRequest, -32602},
	weftv1.FaultCode_FAULT_CODE_NOT_FOUND:                       {connect.CodeNotFound, http.StatusNotFound, -32004},
	weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION:              {connect.CodeAborted, http.StatusConflict, JSONRPCConflict},
	weftv1.FaultCode_FAULT_CODE_SIGNAL_ACCEPTANCE_INDETERMINATE: {connect.CodeAborted, http.StatusConflict, JSONRPCConflict},
	weftv1.FaultCode_FAULT_CODE_OPERATION_CONFLICT:              {connect.CodeAborted, http.StatusConflict, JSONRPCConflict},
	weftv1.FaultCode_FAULT_CODE_TASK_CLAIM_LOST:                 {connect.CodeAborted, http.StatusConflict, JSONRPCConflict},
	weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED:              {connect.CodeResourceExhausted, http.StatusTooManyRequests, -32029},
	weftv1.FaultCode_FAULT_CODE_UNAUTHENTICATED:                 {connect.CodeUnauthenticated, http.StatusUnauthorized, -32001},
	weftv1.FaultCode_FAULT_CODE_PERMISSION_DENIED:               {connect.CodePermissionDenied, http.StatusForbidden, -32003},
	weftv1.FaultCode_FAULT_CODE_CAPABILITY_UNAVAILABLE:          {connect.CodeUnimplemented, http.StatusNotImplemented, -32010},
	weftv1.FaultCode_FAULT_CODE_UNAVAILABLE:                     {connect.CodeUnavailable, http.StatusServiceUnavailable, -32050},
	weftv1.FaultCode_FAULT_CODE_SCHEMA_VALIDATION_FAILED:        {connect.CodeInvalidArgument, http.StatusBadRequest, -32602},
	weftv1.FaultCode_FAULT_CODE_INTERNAL:                        {connect.CodeInternal, http.StatusInternalServerError, -32603},
	weftv1.FaultCode_FAULT_CODE_UNIMPLEMENTED:                   {connect.CodeUnimplemented, http.StatusNotImplemented, -32601},
	weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE:               {connect.CodeInvalidArgument, http.StatusBadRequest, -32602},
	weftv1.FaultCode_FAULT_CODE_FAILED_PRECONDITION:             {connect.CodeFailedPrecondition, http.StatusBadRequest, JSONRPCConflict},
}

// faultForConnectCode is the fault code an error without a Fault detail gets,
// from the Connect code that the framework or a library chose.
var faultForConnectCode = map[connect.Code]weftv1.FaultCode{
	connect.CodeInvalidArgument:    weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT,
	connect.CodeNotFound:           weftv1.FaultCode_FAULT_CODE_NOT_FOUND,
	connect.CodeAborted:            weftv1.FaultCode_FAULT_CODE_OPERATION_CONFLICT,
	connect.CodeAlreadyExists:      weftv1.FaultCode_FAULT_CODE_OPERATION_CONFLICT,
	connect.CodeResourceExhausted:  weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED,
	connect.CodeUnauthenticated:    weftv1.FaultCode_FAULT_CODE_UNAUTHENTICATED,
	connect.CodePermissionDenied:   weftv1.FaultCode_FAULT_CODE_PERMISSION_DENIED,
	connect.CodeUnimplemented:      weftv1.FaultCode_FAULT_CODE_UNIMPLEMENTED,
	connect.CodeUnavailable:        weftv1.FaultCode_FAULT_CODE_UNAVAILABLE,
	connect.CodeFailedPrecondition: weftv1.FaultCode_FAULT_CODE_FAILED_PRECONDITION,
}

// faultForEngineCode is the one table from the engine's error codes to the
// API's fault codes; an engine code it does not know is internal.
var faultForEngineCode = map[engine.Code]weftv1.FaultCode{
	engine.CodeInvalidArgument:               weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT,
	engine.CodeNotFound:                      weftv1.FaultCode_FAULT_CODE_NOT_FOUND,
	engine.CodeIllegalTransition:             weftv1.FaultCode_FAULT_CODE_ILLEGAL_TRANSITION,
	engine.CodeFailedPrecondition:            weftv1.FaultCode_FAULT_CODE_FAILED_PRECONDITION,
	engine.CodeSignalAcceptanceIndeterminate: weftv1.FaultCode_FAULT_CODE_SIGNAL_ACCEPTANCE_INDETERMINATE,
	engine.CodeOperationConflict:             weftv1.FaultCode_FAULT_CODE_OPERATION_CONFLICT,
	engine.CodeTaskClaimLost:                 weftv1.FaultCode_FAULT_CODE_TASK_CLAIM_LOST,
	engine.CodeResourceExhausted:             weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED,
	engine.CodePermissionDenied:              weftv1.FaultCode_FAULT_CODE_PERMISSION_DENIED,
	engine.CodeCapabilityUnavailable:         weftv1.FaultCode_FAULT_CODE_CAPABILITY_UNAVAILABLE,
	engine.CodeUnavailable:                   weftv1.FaultCode_FAULT_CODE_UNAVAILABLE,
	engine.CodeSchemaValidationFailed:        weftv1.FaultCode_FAULT_CODE_SCHEMA_VALIDATION_FAILED,
	engine.CodePayloadTooLarge:               weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE,
	engine.CodeInternal:                      weftv1.FaultCode_FAULT_CODE_INTERNAL,
}

// mappingOf answers the transports' codes for a fault code; unknown codes are internal.
func mappingOf(code weftv1.FaultCode) faultMapping {
	if m, ok := faults[code]; ok {
		return m
	}
	return faults[weftv1.FaultCode_FAULT_CODE_INTERNAL]
}

// HTTPStatus answers the HTTP status a fault code maps to.
func HTTPStatus(code weftv1.FaultCode) int { return mappingOf(code).http }

// JSONRPCCode answers the JSON-RPC 2.0 error code a fault code maps to.
func JSONRPCCode(code weftv1.FaultCode) int { return mappingOf(code).jsonRPC }

// ConnectCode answers the Connect (and gRPC) code a fault code maps to.
func ConnectCode(code weftv1.FaultCode) connect.Code { return mappingOf(code).connect }

// newFaultError builds a Connect error carrying a Fault detail. The message
// must not contain a payload; callers pass identifiers only.
func newFaultError(fault *weftv1.Fault, message string) *connect.Error {
	cerr := connect.NewError(ConnectCode(fault.GetCode()), errors.New(message))
	attachFault(cerr, fault)
	return cerr
}

// newInvalidArgument answers invalid_argument with an INVALID_ARGUMENT Fault
// and the violations, as request validation answers.
func newInvalidArgument(v *validate.Violations, message string) *connect.Error {
	cerr := newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT}, message)
	if detail, err := connect.NewErrorDetail(v); err == nil {
		cerr.AddDetail(detail)
	}
	return cerr
}

// newPayloadTooLarge answers the refusal of a request larger than limit
// bytes: the PAYLOAD_TOO_LARGE fault, with the code the table gives it
// (invalid_argument: sending the same request again cannot succeed, so it
// is not resource_exhausted, which tells a client to retry later).
func newPayloadTooLarge(what string, limit int64) *connect.Error {
	return newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE},
		fmt.Sprintf("%s is larger than %d bytes", what, limit))
}

// attachFault adds the Fault detail, and the Retry-After header for overload.
func attachFault(cerr *connect.Error, fault *weftv1.Fault) {
	if detail, err := connect.NewErrorDetail(fault); err == nil {
		cerr.AddDetail(detail)
	}
	if ms := fault.GetRetryAfterMs(); ms > 0 {
		cerr.Meta().Set("Retry-After", strconv.Itoa(int((ms+999)/1000)))
	}
}

// engineFault answers err as the Connect error the API promises; only
// withFault calls it, so handlers return the engine's errors as they are and
// the mapping happens once, in the fault interceptor. An engine error
// becomes its fault (with the identifiers it names and, for invalid
// input, a buf.validate.Violations detail); a cancelled or expired context
// keeps its Connect code; anything else, and the engine's own internal
// errors, are returned as they are, so the fault interceptor logs them and
// hides their text.
func engineFault(err error) error {
	if err == nil {
		return nil
	}
	var e *engine.Error
	if !errors.As(err, &e) {
		return contextFault(err)
	}
	code, ok := faultForEngineCode[e.Code]
	if !ok || code == weftv1.FaultCode_FAULT_CODE_INTERNAL {
		return err
	}
	cerr := newFaultError(faultFor(code, e), e.Error())
	if len(e.Violations) > 0 {
		if detail, derr := connect.NewErrorDetail(violationsProto(e.Violations)); derr == nil {
			cerr.AddDetail(detail)
		}
	}
	return cerr
}

// faultFor builds the Fault detail of an engine error: identifiers only.
func faultFor(code weftv1.FaultCode, e *engine.Error) *weftv1.Fault {
	return &weftv1.Fault{
		Code:         code,
		RunId:        e.RunID,
		ActionId:     e.ActionID,
		SignalName:   e.SignalName,
		SignalId:     e.SignalID,
		RetryAfterMs: uint32(min(max(e.RetryAfter.Milliseconds(), 0), math.MaxUint32)),
		RunStatus:    runStatuses.Proto(e.RunStatus),
		Transition:   e.Transition,
		Capability:   e.Capability,
	}
}

// contextFault keeps a cancelled or expired request's meaning; other errors
// pass through unchanged.
func contextFault(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, errors.New("request cancelled"))
	case errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("request deadline exceeded"))
	}
	return err
}

// FaultOf answers the Fault detail of an error, if it carries one.
func FaultOf(err error) (*weftv1.Fault, bool) {
	var cerr *connect.Error
	if !errors.As(err, &cerr) {
		return nil, false
	}
	for _, d := range cerr.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		if f, ok := v.(*weftv1.Fault); ok {
			return f, true
		}
	}
	return nil, false
}
