package engine

import "github.com/weft-dev/weft/engine/internal/fault"

// The engine's error vocabulary is package fault's: the one place each
// code's error is built. The server maps each code onto the API's
// FaultCode, Connect code, HTTP status and JSON-RPC code in one place.

// Code is the engine's error code.
type Code = fault.Code

// The error codes.
const (
	CodeInvalidArgument               = fault.CodeInvalidArgument
	CodeNotFound                      = fault.CodeNotFound
	CodeIllegalTransition             = fault.CodeIllegalTransition
	CodeFailedPrecondition            = fault.CodeFailedPrecondition
	CodeSignalAcceptanceIndeterminate = fault.CodeSignalAcceptanceIndeterminate
	CodeOperationConflict             = fault.CodeOperationConflict
	CodeTaskClaimLost                 = fault.CodeTaskClaimLost
	CodeResourceExhausted             = fault.CodeResourceExhausted
	CodePermissionDenied              = fault.CodePermissionDenied
	CodeCapabilityUnavailable         = fault.CodeCapabilityUnavailable
	CodeUnavailable                   = fault.CodeUnavailable
	CodeSchemaValidationFailed        = fault.CodeSchemaValidationFailed
	CodePayloadTooLarge               = fault.CodePayloadTooLarge
	CodeInternal                      = fault.CodeInternal
)

// FieldViolation names one broken rule of one field, by its path in the
// request; it is the definition package's Violation.
type FieldViolation = fault.FieldViolation

// Error is the engine's one coded error. It carries identifiers and the
// state a caller needs to recover, never a payload.
type Error = fault.Error

// CodeOf answers the code of the engine error in err's chain, or CodeInternal.
func CodeOf(err error) Code { return fault.CodeOf(err) }
