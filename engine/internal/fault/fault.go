package fault

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/internal/decide"
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
	CodeFailedPrecondition            Code = "failed_precondition"
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

// Invalid builds an invalid-argument error from violations.
func Invalid(violations ...FieldViolation) *Error {
	return InvalidArgument("invalid request", violations...)
}

// Violation builds one field violation.
func Violation(field, rule, format string, args ...any) FieldViolation {
	return FieldViolation{Field: field, Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// The constructors below are the one place each code's error is built.

// InvalidArgument refuses a request whose fields break rules.
func InvalidArgument(message string, violations ...FieldViolation) *Error {
	return &Error{Code: CodeInvalidArgument, Message: message, Violations: violations}
}

// NotFound answers a run (or an action of it) that does not exist, or
// that belongs to another tenant.
func NotFound(runID, actionID, message string) *Error {
	return &Error{Code: CodeNotFound, RunID: runID, ActionID: actionID, Message: message}
}

// FailedPrecondition refuses a request the run's state does not allow
// and that no transition describes (deleting a run that is not finished).
func FailedPrecondition(runID, message string) *Error {
	return &Error{Code: CodeFailedPrecondition, RunID: runID, Message: message}
}

// IllegalTransition refuses a move the run's or step's status does not
// allow (docs/semantics.md#run-transitions,
// docs/semantics.md#step-transitions); it is the one constructor of
// CodeIllegalTransition.
func IllegalTransition(m decide.Move) *Error {
	t := m.From + " -> " + m.To
	msg := m.Why
	switch {
	case msg != "":
	case m.ActionID != "":
		msg = fmt.Sprintf("step %s of run %s cannot go %s", m.ActionID, m.RunID, t)
	default:
		msg = fmt.Sprintf("run %s cannot go %s", m.RunID, t)
	}
	return &Error{Code: CodeIllegalTransition, Message: msg, RunID: m.RunID, ActionID: m.ActionID,
		RunStatus: m.Status, Transition: t, SignalName: m.Signal}
}

// Refused answers a refusal of the decision rules (decide.Refusal) as the
// engine's coded error; any other error as it is.
func Refused(err error) error {
	var r *decide.Refusal
	if !errors.As(err, &r) {
		return err
	}
	switch r.Reason {
	case decide.IllegalMove:
		return IllegalTransition(r.Move)
	case decide.NoAction:
		return NoAction(r.Move.RunID, r.Move.ActionID)
	default:
		return OperationConflict(r.Move.RunID, r.Move.ActionID, r.Move.Why)
	}
}

// NoAction answers a request naming an action the run does not have.
func NoAction(runID, actionID string) *Error {
	return NotFound(runID, actionID, "run "+runID+" has no action "+actionID)
}

// OperationConflict refuses a request that contradicts what the run
// already recorded.
func OperationConflict(runID, actionID, message string) *Error {
	return &Error{Code: CodeOperationConflict, RunID: runID, ActionID: actionID, Message: message}
}

// PermissionDenied refuses an actor the policy does not allow.
func PermissionDenied(runID, actionID, message string) *Error {
	return &Error{Code: CodePermissionDenied, RunID: runID, ActionID: actionID, Message: message}
}

// CapabilityUnavailable refuses a request the store cannot serve.
func CapabilityUnavailable(runID, capability, message string) *Error {
	return &Error{Code: CodeCapabilityUnavailable, RunID: runID, Capability: capability, Message: message}
}

// SignalIndeterminate answers a signal whose payload is stored but whose
// acceptance is not.
func SignalIndeterminate(runID, name, id string) *Error {
	return &Error{Code: CodeSignalAcceptanceIndeterminate, RunID: runID, SignalName: name, SignalID: id,
		Message: "signal payload is stored but its accepted response is not; it was not enqueued again (inspect before retrying)"}
}

// ClaimLost refuses a report or heartbeat whose token no longer holds its
// task's claim.
func ClaimLost(taskID, runID string) *Error {
	return &Error{Code: CodeTaskClaimLost, RunID: runID,
		Message: "task " + taskID + " is no longer claimed by this token (timed out, cancelled or already reported)"}
}

// PayloadTooLarge refuses an inline payload over its limit.
func PayloadTooLarge(message string, violations ...FieldViolation) *Error {
	return &Error{Code: CodePayloadTooLarge, Message: message, Violations: violations}
}

// Unavailable answers a call that may succeed if retried.
func Unavailable(runID, message string) *Error {
	return &Error{Code: CodeUnavailable, RunID: runID, Message: message}
}

// Contended answers a call on a task whose record kept changing under it
// for every retry of its decision.
func Contended(runID, taskID string) *Error {
	return Unavailable(runID, "task "+taskID+" is contended; retry")
}

// Internal is a fault of the engine itself: a decision found a state it
// should never reach.
func Internal(runID, message string) *Error {
	return &Error{Code: CodeInternal, RunID: runID, Message: message}
}

// LimitReached refuses a run over a concurrency limit (REJECT
// backpressure); the caller may retry after retryAfter.
func LimitReached(limit int, of string, retryAfter time.Duration) *Error {
	return &Error{Code: CodeResourceExhausted, RetryAfter: retryAfter,
		Message: fmt.Sprintf("concurrency limit of %d running runs reached for %s; retry later", limit, of)}
}

// BrokenRule is an illegal transition the decision's own logic attempted,
// as opposed to one a request asked for: a fault of the engine, which fails
// the whole decision and is never answered as a signal's rejection. Its
// code is the transition error's (CodeOf sees through it).
type BrokenRule struct{ err *Error }

// Broken marks err as the engine's own fault.
func Broken(err *Error) error { return &BrokenRule{err: err} }

// Error implements error.
func (b *BrokenRule) Error() string { return b.err.Error() }

// Unwrap answers the transition error.
func (b *BrokenRule) Unwrap() error { return b.err }

// SchemaValidationFailed answers the coded error of an event its schema
// Refused: the event type, its place in the log and the broken rules, never
// a payload.
func SchemaValidationFailed(ev *runstate.Event, err error) *Error {
	out := &Error{Code: CodeSchemaValidationFailed, RunID: ev.RunID, ActionID: stepActionID(ev.StepID), Err: err,
		Message: "event " + ev.Type + " (run_seq " + strconv.FormatUint(ev.Seq, 10) + ") fails its schema; nothing was persisted"}
	var e *eventpb.SchemaError
	if errors.As(err, &e) && len(e.Violations) > 0 {
		out.Violations = append([]FieldViolation(nil), e.Violations...)
	} else {
		out.Violations = []FieldViolation{{Rule: "event.schema", Message: err.Error()}}
	}
	return out
}

// stepActionID answers the action an event's step id names, or "" for a run-level event.
func stepActionID(stepID string) string {
	if stepID == runstate.RunStepID {
		return ""
	}
	return stepID
}
