package client

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// CorrelationHeader is the response header that carries a fault's correlation id.
const CorrelationHeader = "Weft-Correlation-Id"

// Stable error codes: a weft.v1.FaultCode's name without its prefix, in
// PascalCase. Errors without a Fault detail take the Connect code's name in
// PascalCase (CodeCanceled, CodeDeadlineExceeded, CodeUnknown, …).
const (
	CodeInvalidArgument               = "InvalidArgument"
	CodeNotFound                      = "NotFound"
	CodeIllegalTransition             = "IllegalTransition"
	CodeSignalAcceptanceIndeterminate = "SignalAcceptanceIndeterminate"
	CodeOperationConflict             = "OperationConflict"
	CodeTaskClaimLost                 = "TaskClaimLost"
	CodeResourceExhausted             = "ResourceExhausted"
	CodeUnauthenticated               = "Unauthenticated"
	CodePermissionDenied              = "PermissionDenied"
	CodeCapabilityUnavailable         = "CapabilityUnavailable"
	CodeUnavailable                   = "Unavailable"
	CodeSchemaValidationFailed        = "SchemaValidationFailed"
	CodeInternal                      = "Internal"
	CodeUnimplemented                 = "Unimplemented"
	CodePayloadTooLarge               = "PayloadTooLarge"
	CodeFailedPrecondition            = "FailedPrecondition"
	// Codes that only come from the Connect code of an error without a Fault.
	CodeCanceled         = "Canceled"
	CodeDeadlineExceeded = "DeadlineExceeded"
	CodeUnknown          = "Unknown"
	CodeAborted          = "Aborted"
	CodeAlreadyExists    = "AlreadyExists"
)

// Error is a failed call: a Weft fault, or a transport or protocol error.
// It never carries a request's payload.
type Error struct {
	// Code is stable: see the Code… constants.
	Code string
	// ConnectCode is the Connect (gRPC) code the call failed with.
	ConnectCode connect.Code
	// Message is the server's message (or the transport's).
	Message string
	// Fault is the typed detail, when the server sent one.
	Fault *weftv1.Fault
	// Violations name each invalid field of an InvalidArgument fault.
	Violations []FieldViolation
	// CorrelationID finds the server's log line for this error.
	CorrelationID string
	// RetryAfter is how long to wait before retrying, for ResourceExhausted.
	RetryAfter time.Duration

	cause error
}

// FieldViolation is one invalid field.
type FieldViolation struct {
	// Field is the field's path, e.g. "definition.actions[2].depends_on[0]".
	Field string
	// Rule is the rule's stable id, e.g. "string.min_len".
	Rule string
	// Message explains the rule.
	Message string
}

// Error renders the code, message and correlation id.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	for _, v := range e.Violations {
		b.WriteString("; ")
		b.WriteString(v.Field)
		if v.Message != "" {
			b.WriteString(": " + v.Message)
		}
	}
	if e.CorrelationID != "" {
		b.WriteString(" (correlation id " + e.CorrelationID + ")")
	}
	return b.String()
}

// Unwrap answers the underlying *connect.Error.
func (e *Error) Unwrap() error { return e.cause }

// IsCode reports whether err is (or wraps) an *Error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// CodeOf answers the stable code of err: its *Error's Code, CodeCanceled or
// CodeDeadlineExceeded for context errors, "" for nil, else CodeUnknown.
func CodeOf(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeDeadlineExceeded
	}
	return CodeUnknown
}

// wrapError converts a call's error into *Error; nil stays nil.
func wrapError(err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	var cerr *connect.Error
	if !errors.As(err, &cerr) {
		code := connect.CodeUnknown
		switch {
		case errors.Is(err, context.Canceled):
			code = connect.CodeCanceled
		case errors.Is(err, context.DeadlineExceeded):
			code = connect.CodeDeadlineExceeded
		}
		cerr = connect.NewError(code, err)
	}
	out := &Error{ConnectCode: cerr.Code(), Message: cerr.Message(), cause: cerr}
	for _, d := range cerr.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue // a detail type this client does not know
		}
		switch m := v.(type) {
		case *weftv1.Fault:
			out.Fault = m
		case *validate.Violations:
			out.Violations = violationsOf(m)
		}
	}
	out.Code = codeOf(out.Fault, cerr.Code())
	out.CorrelationID = out.Fault.GetCorrelationId()
	if out.CorrelationID == "" {
		out.CorrelationID = cerr.Meta().Get(CorrelationHeader)
	}
	out.RetryAfter = retryAfter(out.Fault, cerr)
	return out
}

// codeOf answers the stable code: the fault's, unless the fault is missing or
// its code is one this client does not know, then the Connect code's.
func codeOf(f *weftv1.Fault, code connect.Code) string {
	if f != nil {
		if name, ok := weftv1.FaultCode_name[int32(f.GetCode())]; ok && f.GetCode() != weftv1.FaultCode_FAULT_CODE_UNSPECIFIED {
			return pascal(strings.TrimPrefix(name, "FAULT_CODE_"))
		}
	}
	return pascal(code.String())
}

// pascal turns SNAKE_CASE or snake_case into PascalCase.
func pascal(s string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(strings.ToLower(s), "_") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func violationsOf(m *validate.Violations) []FieldViolation {
	out := make([]FieldViolation, 0, len(m.GetViolations()))
	for _, v := range m.GetViolations() {
		out = append(out, FieldViolation{Field: fieldPath(v), Rule: v.GetRuleId(), Message: v.GetMessage()})
	}
	return out
}

// fieldPath renders a violation's field path, e.g. "definition.actions[2].id".
func fieldPath(v *validate.Violation) string {
	var b strings.Builder
	for i, el := range v.GetField().GetElements() {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(el.GetFieldName())
		switch k := el.GetSubscript().(type) {
		case *validate.FieldPathElement_Index:
			b.WriteString("[" + strconv.FormatUint(k.Index, 10) + "]")
		case *validate.FieldPathElement_StringKey:
			b.WriteString("[" + strconv.Quote(k.StringKey) + "]")
		}
	}
	return b.String()
}

func retryAfter(f *weftv1.Fault, cerr *connect.Error) time.Duration {
	if ms := f.GetRetryAfterMs(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	if s, err := strconv.Atoi(cerr.Meta().Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
