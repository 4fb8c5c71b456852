package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// Code is the engine's error vocabulary. The server maps each code onto the
// API's FaultCode, Connect code, HTTP status and JSON-RPC code in one place.
type Code string

// The error codes.
const (
	CodeInvalidArgument               Code = "invalid_argument"
	CodeNotFound                      Code = "not_found"
	CodeIllegalTransition             Code = "illegal_transition"
	CodeSignalAcceptanceIndeterminate Code = "signal_acceptance_indeterminate"
	CodeOperationConflict             Code = "operation_conflict"
	CodeTaskClaimLost                 Code = "task_claim_lost"
	CodeResourceExhausted             Code = "resource_exhausted"
	CodePermissionDenied              Code = "permission_denied"
	CodeCapabilityUnavailable         Code = "capability_unavailable"
	CodeUnavailable                   Code = "unavailable"
	CodeSchemaValidationFailed        Code = "schema_validation_failed"
	CodePayloadTooLarge               Code = "payload_too_large"
	CodeInternal                      Code = "internal"
)

// FieldViolation names one broken rule of one field, by its path in the
// request (e.g. "definition.actions[2].depends_on[0]"). It is the definition
// package's Violation, so a definition's violations pass through unchanged.
type FieldViolation = definition.Violation

// Error is the engine's one coded error. It carries identifiers and the state
// a caller needs to recover, never a payload.
type Error struct {
	Code       Code
	Message    string
	Violations []FieldViolation
	RunID      string
	ActionID   string
	SignalName string
	SignalID   string
	// RetryAfter, for CodeResourceExhausted.
	RetryAfter time.Duration
	// RunStatus and Transition, for CodeIllegalTransition.
	RunStatus  runstate.RunStatus
	Transition string
	// Capability, for CodeCapabilityUnavailable.
	Capability string
	// Err is the cause, when there is one.
	Err error
}

// Error implements error.
func (e *Error) Error() string { return definition.FormatViolations(e.Message, e.Violations) }

// Unwrap answers the cause.
func (e *Error) Unwrap() error { return e.Err }

// CodeOf answers the code of the engine error in err's chain, or CodeInternal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// invalid builds an invalid-argument error from violations.
func invalid(violations ...FieldViolation) *Error {
	return &Error{Code: CodeInvalidArgument, Message: "invalid request", Violations: violations}
}

// violation builds one field violation.
func violation(field, rule, format string, args ...any) FieldViolation {
	return FieldViolation{Field: field, Rule: rule, Message: fmt.Sprintf(format, args...)}
}
