package server

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// enumTable maps one proto enum onto the engine's string values, both ways.
// UNSPECIFIED is absent: it maps to the engine's "" (unset), and an engine
// value the table does not know maps back to UNSPECIFIED, so a newer engine
// never fails a conversion.
type enumTable[P ~int32, E ~string] struct {
	toEngine map[P]E
	toProto  map[E]P
}

// newEnumTable builds a table from proto → engine pairs.
func newEnumTable[P ~int32, E ~string](pairs map[P]E) enumTable[P, E] {
	t := enumTable[P, E]{toEngine: pairs, toProto: make(map[E]P, len(pairs))}
	for p, e := range pairs {
		t.toProto[e] = p
	}
	return t
}

// engine answers the engine value of p, or "" for UNSPECIFIED and unknown values.
func (t enumTable[P, E]) engine(p P) E { return t.toEngine[p] }

// proto answers the proto value of e, or UNSPECIFIED for "" and unknown values.
func (t enumTable[P, E]) proto(e E) P { return t.toProto[e] }

var errorClasses = newEnumTable(map[weftv1.ErrorClass]definition.ErrorClass{
	weftv1.ErrorClass_ERROR_CLASS_TIMEOUT:                           definition.ErrorTimeout,
	weftv1.ErrorClass_ERROR_CLASS_RATE_LIMIT:                        definition.ErrorRateLimit,
	weftv1.ErrorClass_ERROR_CLASS_TRANSIENT:                         definition.ErrorTransient,
	weftv1.ErrorClass_ERROR_CLASS_TRANSPORT:                         definition.ErrorTransport,
	weftv1.ErrorClass_ERROR_CLASS_VALIDATION:                        definition.ErrorValidation,
	weftv1.ErrorClass_ERROR_CLASS_POLICY_DENY:                       definition.ErrorPolicyDeny,
	weftv1.ErrorClass_ERROR_CLASS_AUTH_DENY:                         definition.ErrorAuthDeny,
	weftv1.ErrorClass_ERROR_CLASS_BUSINESS_CONFLICT:                 definition.ErrorBusinessConflict,
	weftv1.ErrorClass_ERROR_CLASS_AGENT_ERROR:                       definition.ErrorAgent,
	weftv1.ErrorClass_ERROR_CLASS_EXTERNAL:                          definition.ErrorExternal,
	weftv1.ErrorClass_ERROR_CLASS_GOVERNANCE:                        definition.ErrorGovernance,
	weftv1.ErrorClass_ERROR_CLASS_UNKNOWN:                           definition.ErrorUnknown,
	weftv1.ErrorClass_ERROR_CLASS_CANCELLED:                         definition.ErrorCancelled,
	weftv1.ErrorClass_ERROR_CLASS_RECONCILIATION_RESULT_UNAVAILABLE: definition.ErrorReconciliationResultUnavailable,
	weftv1.ErrorClass_ERROR_CLASS_RECONCILIATION_INDETERMINATE:      definition.ErrorReconciliationIndeterminate,
})

// verifyStates maps spec 003's verify states.
var verifyStates = newEnumTable(map[weftv1.VerifyState]engine.VerifyState{
	weftv1.VerifyState_VERIFY_STATE_NOT_COMPLETED:                engine.VerifyNotCompleted,
	weftv1.VerifyState_VERIFY_STATE_COMPLETED_WITH_RESULT:        engine.VerifyCompletedWithResult,
	weftv1.VerifyState_VERIFY_STATE_COMPLETED_RESULT_UNAVAILABLE: engine.VerifyCompletedResultUnavailable,
	weftv1.VerifyState_VERIFY_STATE_INDETERMINATE:                engine.VerifyIndeterminate,
})

var backoffStrategies = newEnumTable(map[weftv1.BackoffStrategy]definition.BackoffStrategy{
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT:    definition.BackoffConstant,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_LINEAR:      definition.BackoffLinear,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_EXPONENTIAL: definition.BackoffExponential,
})

var onFailures = newEnumTable(map[weftv1.OnFailure]definition.OnFailure{
	weftv1.OnFailure_ON_FAILURE_ABORT:      definition.OnFailureAbort,
	weftv1.OnFailure_ON_FAILURE_SKIP:       definition.OnFailureSkip,
	weftv1.OnFailure_ON_FAILURE_COMPENSATE: definition.OnFailureCompensate,
	weftv1.OnFailure_ON_FAILURE_HOLD:       definition.OnFailureHold,
})

var completionModes = newEnumTable(map[weftv1.CompletionMode]definition.CompletionMode{
	weftv1.CompletionMode_COMPLETION_MODE_AUTOMATED: definition.CompletionAutomated,
	weftv1.CompletionMode_COMPLETION_MODE_MANUAL:    definition.CompletionManual,
})

var backpressureModes = newEnumTable(map[weftv1.BackpressureMode]definition.BackpressureMode{
	weftv1.BackpressureMode_BACKPRESSURE_MODE_REJECT: definition.BackpressureReject,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_QUEUE:  definition.BackpressureQueue,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_DELAY:  definition.BackpressureDelay,
})

var runStatuses = newEnumTable(map[weftv1.RunStatus]engine.RunStatus{
	weftv1.RunStatus_RUN_STATUS_PENDING:      engine.RunPending,
	weftv1.RunStatus_RUN_STATUS_APPROVED:     engine.RunApproved,
	weftv1.RunStatus_RUN_STATUS_QUEUED:       engine.RunQueued,
	weftv1.RunStatus_RUN_STATUS_RUNNING:      engine.RunRunning,
	weftv1.RunStatus_RUN_STATUS_BLOCKED:      engine.RunBlocked,
	weftv1.RunStatus_RUN_STATUS_PAUSED:       engine.RunPaused,
	weftv1.RunStatus_RUN_STATUS_COMPENSATING: engine.RunCompensating,
	weftv1.RunStatus_RUN_STATUS_COMPLETED:    engine.RunCompleted,
	weftv1.RunStatus_RUN_STATUS_FAILED:       engine.RunFailed,
	weftv1.RunStatus_RUN_STATUS_CANCELLED:    engine.RunCancelled,
})

// drainingSubstatus is the engine's substatus string for RUN_SUBSTATUS_DRAINING.
const drainingSubstatus = "DRAINING"

var runSubstatuses = newEnumTable(map[weftv1.RunSubstatus]string{
	weftv1.RunSubstatus_RUN_SUBSTATUS_DRAINING: drainingSubstatus,
})

var stepStatuses = newEnumTable(map[weftv1.StepStatus]engine.StepStatus{
	weftv1.StepStatus_STEP_STATUS_PENDING:                       engine.StepPending,
	weftv1.StepStatus_STEP_STATUS_SCHEDULED:                     engine.StepScheduled,
	weftv1.StepStatus_STEP_STATUS_RUNNING:                       engine.StepRunning,
	weftv1.StepStatus_STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION: engine.StepWaitingManual,
	weftv1.StepStatus_STEP_STATUS_WAITING_FOR_SIGNAL:            engine.StepWaitingSignal,
	weftv1.StepStatus_STEP_STATUS_SUCCEEDED:                     engine.StepSucceeded,
	weftv1.StepStatus_STEP_STATUS_FAILED:                        engine.StepFailed,
	weftv1.StepStatus_STEP_STATUS_SKIPPED:                       engine.StepSkipped,
	weftv1.StepStatus_STEP_STATUS_CANCELLED:                     engine.StepCancelled,
})

var compensationStatuses = newEnumTable(map[weftv1.CompensationStatus]engine.CompensationStatus{
	weftv1.CompensationStatus_COMPENSATION_STATUS_PENDING:   engine.CompPending,
	weftv1.CompensationStatus_COMPENSATION_STATUS_RUNNING:   engine.CompRunning,
	weftv1.CompensationStatus_COMPENSATION_STATUS_SUCCEEDED: engine.CompSucceeded,
	weftv1.CompensationStatus_COMPENSATION_STATUS_FAILED:    engine.CompFailed,
})

var compensationOutcomes = newEnumTable(map[weftv1.CompensationOutcome]engine.CompensationOutcome{
	weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK: engine.CompensationRolledBack,
	weftv1.CompensationOutcome_COMPENSATION_OUTCOME_PARTIAL:     engine.CompensationPartial,
})

var attemptOutcomes = newEnumTable(map[weftv1.AttemptOutcome]engine.AttemptOutcome{
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_SUCCEEDED:  engine.AttemptSucceeded,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_FAILED:     engine.AttemptFailed,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_TIMED_OUT:  engine.AttemptTimedOut,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_CANCELLED:  engine.AttemptCancelled,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_RECONCILED: engine.AttemptReconciled,
})

var taskTypes = newEnumTable(map[weftv1.TaskType]engine.TaskKind{
	weftv1.TaskType_TASK_TYPE_ACTIVITY:     engine.TaskActivity,
	weftv1.TaskType_TASK_TYPE_VERIFY:       engine.TaskVerify,
	weftv1.TaskType_TASK_TYPE_COMPENSATION: engine.TaskCompensation,
})

// signalKinds has no entry for SIGNAL_KIND_UNSPECIFIED, which is the user
// signal: engine.SignalUser is "" and maps to it naturally.
var signalKinds = newEnumTable(map[weftv1.SignalKind]engine.SignalKind{
	weftv1.SignalKind_SIGNAL_KIND_PAUSE:             engine.SignalPause,
	weftv1.SignalKind_SIGNAL_KIND_RESUME:            engine.SignalResume,
	weftv1.SignalKind_SIGNAL_KIND_CANCEL:            engine.SignalCancel,
	weftv1.SignalKind_SIGNAL_KIND_RETRY_STEP:        engine.SignalRetryStep,
	weftv1.SignalKind_SIGNAL_KIND_SKIP_STEP:         engine.SignalSkipStep,
	weftv1.SignalKind_SIGNAL_KIND_MANUAL_COMPLETION: engine.SignalManual,
	weftv1.SignalKind_SIGNAL_KIND_APPROVE:           engine.SignalApprove,
})

var manualOutcomes = newEnumTable(map[weftv1.ManualOutcome]engine.ManualOutcome{
	weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED: engine.ManualSucceeded,
	weftv1.ManualOutcome_MANUAL_OUTCOME_FAILED:    engine.ManualFailed,
	weftv1.ManualOutcome_MANUAL_OUTCOME_CANCELLED: engine.ManualCancelled,
})
