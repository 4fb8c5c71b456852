package store

import (
	"errors"
	"fmt"
)

// Sentinels. Match them with errors.Is; the typed errors below match theirs
// too (a *ConditionFailedError is ErrConditionFailed, and so on).
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConditionFailed: a batch condition did not hold; nothing was written.
	ErrConditionFailed = errors.New("store: condition failed")
	// ErrOutcomeUnknown: the commit may or may not have been applied (for
	// example CockroachDB's SQLSTATE 40003, or a connection lost during
	// COMMIT). Resolve it by re-reading, never by blind retry.
	ErrOutcomeUnknown = errors.New("store: commit outcome unknown")
	// ErrRetryable: a transient conflict (such as a serialization failure
	// that outlived the backend's own retries); nothing was committed and the
	// whole operation may be retried.
	ErrRetryable = errors.New("store: retryable conflict, nothing committed")
	// ErrUnsupported: the backend lacks a capability the call needs.
	ErrUnsupported = errors.New("store: capability not supported")
	// ErrValueTooLarge: a value exceeds Capabilities.MaxValueBytes.
	ErrValueTooLarge = errors.New("store: value too large")
	// ErrInvalidArgument: a malformed key, batch or scan.
	ErrInvalidArgument = errors.New("store: invalid argument")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store: closed")
)

// ConditionFailedError reports the first condition of a batch that did not
// hold, with the state found, so the caller can decide without re-reading.
type ConditionFailedError struct {
	// Condition is the condition that failed.
	Condition Condition
	// Key is the key the condition names.
	Key []byte
	// Found reports whether the key existed.
	Found bool
	// Version is the key's version when Found, else 0.
	Version uint64
}

// Error describes the failure without any value bytes.
func (e *ConditionFailedError) Error() string {
	want := e.Condition.Kind.String()
	if e.Condition.Kind == CondVersion {
		want = fmt.Sprintf("version %d", e.Condition.Version)
	}
	got := "absent"
	if e.Found {
		got = fmt.Sprintf("version %d", e.Version)
	}
	return fmt.Sprintf("store: condition failed on key %q: want %s, found %s", e.Key, want, got)
}

// Is makes errors.Is(err, ErrConditionFailed) true.
func (e *ConditionFailedError) Is(target error) bool { return target == ErrConditionFailed }

// OutcomeUnknownError wraps the cause of an ambiguous commit. The batch may or
// may not have been applied; re-read the keys it touched to find out. Every
// batch committed later on any of its keys is ordered after it, so a read or
// a conditioned batch through the same store resolves the ambiguity for good.
type OutcomeUnknownError struct {
	Cause error
}

// Error describes the ambiguity.
func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("store: commit outcome unknown (re-read to resolve, do not blindly retry): %v", e.Cause)
}

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Cause }

// Is makes errors.Is(err, ErrOutcomeUnknown) true.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// CapabilityError reports a call that needs a capability the backend does not
// declare. It names both, as docs/semantics.md#capabilities-fail-fast requires.
type CapabilityError struct {
	// Capability is the missing capability, e.g. "conditionalBatch".
	Capability string
	// Backend is Capabilities.Backend of the store that lacks it.
	Backend string
}

// Error names the capability and the backend.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("store: backend %q does not support %s", e.Backend, e.Capability)
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *CapabilityError) Is(target error) bool { return target == ErrUnsupported }

// CapabilityConditionalBatch is the name of the conditional-batch capability
// as docs/semantics.md#capabilities-fail-fast names it.
const CapabilityConditionalBatch = "conditionalBatch"

// ValueTooLargeError reports a value over the backend's limit. It names the
// key and sizes, never the value.
type ValueTooLargeError struct {
	Key   []byte
	Size  int
	Limit int
}

// Error names the key, the size and the limit.
func (e *ValueTooLargeError) Error() string {
	return fmt.Sprintf("store: value for key %q is %d bytes, limit is %d", e.Key, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrValueTooLarge) true.
func (e *ValueTooLargeError) Is(target error) bool { return target == ErrValueTooLarge }

// NotFound returns an error wrapping ErrNotFound that names key.
func NotFound(key []byte) error {
	return fmt.Errorf("store: key %q: %w", key, ErrNotFound)
}

// invalidf returns an error wrapping ErrInvalidArgument.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}
