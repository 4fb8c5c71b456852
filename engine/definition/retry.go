package definition

import (
	"math"
	"time"
)

// defaultRetryable is each error class's retry decision when an action's
// policy lists no retryable_errors (docs/semantics.md#error-class-defaults).
var defaultRetryable = map[ErrorClass]bool{
	ErrorTimeout:                         true,
	ErrorRateLimit:                       true,
	ErrorTransient:                       true,
	ErrorTransport:                       true,
	ErrorValidation:                      false,
	ErrorPolicyDeny:                      false,
	ErrorAuthDeny:                        false,
	ErrorBusinessConflict:                false,
	ErrorAgent:                           true,
	ErrorExternal:                        true,
	ErrorGovernance:                      false,
	ErrorUnknown:                         true,
	ErrorCancelled:                       false,
	ErrorReconciliationResultUnavailable: false,
	ErrorReconciliationIndeterminate:     false,
	ErrorScheduleToStart:                 true,
}

// KnownErrorClass reports whether c is one of the error classes.
func KnownErrorClass(c ErrorClass) bool {
	_, ok := defaultRetryable[c]
	return ok
}

// NormalizeClass maps an unset or unknown class to ErrorUnknown.
func NormalizeClass(c ErrorClass) ErrorClass {
	if KnownErrorClass(c) {
		return c
	}
	return ErrorUnknown
}

// Retryable reports whether the policy retries class c. Cancellation and
// reconciliation failures are never retried, whatever the list says: a
// cancelled attempt must not run again, and an indeterminate side effect must
// not be silently redispatched (docs/semantics.md#reconciliation).
func (p RetryPolicy) Retryable(c ErrorClass) bool {
	c = NormalizeClass(c)
	switch c {
	case ErrorCancelled, ErrorReconciliationResultUnavailable, ErrorReconciliationIndeterminate:
		return false
	}
	if len(p.RetryableErrors) == 0 {
		return defaultRetryable[c]
	}
	for _, r := range p.RetryableErrors {
		if r == c {
			return true
		}
	}
	return false
}

// ShouldRetry reports whether attempt number attempt (1-based), which failed
// with class c, is followed by another.
func (p RetryPolicy) ShouldRetry(attempt int, c ErrorClass) bool {
	return p.Retryable(c) && attempt < p.MaxAttempts
}

// Backoff answers the delay before retry number retry (1 for the delay after
// the first attempt), on a policy with defaults applied:
//
//	constant:    initial, initial, initial, ...
//	linear:      initial, 2×initial, 3×initial, ...
//	exponential: initial, initial×m, initial×m², ...
//
// each capped at MaxBackoff.
func (p RetryPolicy) Backoff(retry int) time.Duration {
	if retry < 1 {
		retry = 1
	}
	initial := float64(p.InitialBackoff.D())
	var d float64
	switch p.Strategy {
	case BackoffConstant:
		d = initial
	case BackoffLinear:
		d = initial * float64(retry)
	default:
		d = initial * math.Pow(p.Multiplier, float64(retry-1))
	}
	limit := float64(p.MaxBackoff.D())
	if limit > 0 && (d > limit || math.IsInf(d, 0) || math.IsNaN(d)) {
		d = limit
	}
	return time.Duration(d)
}
