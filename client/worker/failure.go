package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// ErrorClass decides whether the engine retries a failed attempt (see
// docs/semantics.md, "Error classes").
type ErrorClass = weftv1.ErrorClass

// The error classes an activity can report.
const (
	ClassUnknown          = weftv1.ErrorClass_ERROR_CLASS_UNKNOWN
	ClassTimeout          = weftv1.ErrorClass_ERROR_CLASS_TIMEOUT
	ClassRateLimit        = weftv1.ErrorClass_ERROR_CLASS_RATE_LIMIT
	ClassTransient        = weftv1.ErrorClass_ERROR_CLASS_TRANSIENT
	ClassTransport        = weftv1.ErrorClass_ERROR_CLASS_TRANSPORT
	ClassValidation       = weftv1.ErrorClass_ERROR_CLASS_VALIDATION
	ClassPolicyDeny       = weftv1.ErrorClass_ERROR_CLASS_POLICY_DENY
	ClassAuthDeny         = weftv1.ErrorClass_ERROR_CLASS_AUTH_DENY
	ClassBusinessConflict = weftv1.ErrorClass_ERROR_CLASS_BUSINESS_CONFLICT
	ClassAgentError       = weftv1.ErrorClass_ERROR_CLASS_AGENT_ERROR
	ClassExternal         = weftv1.ErrorClass_ERROR_CLASS_EXTERNAL
	ClassGovernance       = weftv1.ErrorClass_ERROR_CLASS_GOVERNANCE
	ClassCancelled        = weftv1.ErrorClass_ERROR_CLASS_CANCELLED
	// ClassScheduleToStart is what weftd records when no worker claimed a
	// task in time; an activity has no reason to report it.
	ClassScheduleToStart = weftv1.ErrorClass_ERROR_CLASS_SCHEDULE_TO_START
)

// Failure is an activity error with the class that decides its retry, an
// application code and whether the side effect may have happened.
type Failure struct {
	// Class decides the retry; unset means ClassUnknown.
	Class ErrorClass
	// Code is an application error code (at most 128 characters).
	Code string
	// SideEffectPossible says the external effect may have happened
	// (docs/semantics.md#reconciliation).
	SideEffectPossible bool
	// Err is the cause. Its message is reported: keep payloads and secrets out of it.
	Err error
	// RetryAfter, when positive, is the earliest the next attempt may
	// start, from the report (a rate limit's Retry-After): weftd starts it
	// at the later of this and the retry policy's backoff, at most a day
	// (docs/semantics.md#retry-after).
	RetryAfter time.Duration
}

// Error renders the class, code and cause.
func (f *Failure) Error() string {
	msg := "failed"
	if f.Err != nil {
		msg = f.Err.Error()
	}
	if f.Code != "" {
		return fmt.Sprintf("%s (%s): %s", f.class().String(), f.Code, msg)
	}
	return fmt.Sprintf("%s: %s", f.class().String(), msg)
}

// Unwrap answers the cause.
func (f *Failure) Unwrap() error { return f.Err }

func (f *Failure) class() ErrorClass {
	if f.Class == weftv1.ErrorClass_ERROR_CLASS_UNSPECIFIED {
		return ClassUnknown
	}
	return f.Class
}

// Fail classifies an activity error, e.g.
//
//	return Out{}, worker.Fail(worker.ClassValidation, "sku_unknown", err)
func Fail(class ErrorClass, code string, err error) error {
	return &Failure{Class: class, Code: code, Err: err}
}

// RateLimited is a RATE_LIMIT failure whose next attempt starts no sooner
// than retryAfter from now (0: the backoff alone), e.g. from the external
// system's Retry-After:
//
//	return Out{}, worker.RateLimited(err, 30*time.Second)
func RateLimited(err error, retryAfter time.Duration) error {
	return &Failure{Class: ClassRateLimit, Code: "rate_limited", Err: err, RetryAfter: retryAfter}
}

// maxRetryAfter is the longest retry_after the API takes.
const maxRetryAfter = 24 * time.Hour

// retryAfterMs answers d in the API's milliseconds, within its bound.
func retryAfterMs(d time.Duration) uint32 {
	return uint32(min(max(d, 0), maxRetryAfter).Milliseconds())
}

// SideEffectPossible marks err as one after which the external effect may
// have happened; it keeps err's class and code if it has them.
func SideEffectPossible(err error) error {
	var f *Failure
	if errors.As(err, &f) {
		cp := *f
		cp.SideEffectPossible = true
		return &cp
	}
	return &Failure{Class: ClassUnknown, SideEffectPossible: true, Err: err}
}

// Errors that end an activity's context from the runtime's side.
var (
	errCancelRequested = errors.New("weft asked the worker to stop the task")
	errClaimLost       = errors.New("the task's claim was lost")
	errAbandoned       = errors.New("the worker shut down before the task finished")
)

// classify answers the failure to report for an activity's error, given the
// cause that ended its context (if any). Explicit classes win.
func classify(err error, ctxCause error) *Failure {
	var f *Failure
	switch {
	case errors.As(err, &f):
		cp := *f
		cp.Class = f.class()
		return &cp
	case errors.Is(ctxCause, errCancelRequested):
		return &Failure{Class: ClassCancelled, Code: "cancel_requested", Err: err}
	case errors.Is(ctxCause, context.DeadlineExceeded):
		return &Failure{Class: ClassTimeout, Code: "deadline_exceeded", Err: err}
	}
	return &Failure{Class: ClassUnknown, Err: err}
}
