package server

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
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

// verifyStates maps the verify states of docs/semantics.md#reconciliation.
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

var runStatuses = newEnumTable(map[weftv1.RunStatus]runstate.RunStatus{
	weftv1.RunStatus_RUN_STATUS_PENDING:      runstate.RunPending,
	weftv1.RunStatus_RUN_STATUS_APPROVED:     runstate.RunApproved,
	weftv1.RunStatus_RUN_STATUS_QUEUED:       runstate.RunQueued,
	weftv1.RunStatus_RUN_STATUS_RUNNING:      runstate.RunRunning,
	weftv1.RunStatus_RUN_STATUS_BLOCKED:      runstate.RunBlocked,
	weftv1.RunStatus_RUN_STATUS_PAUSED:       runstate.RunPaused,
	weftv1.RunStatus_RUN_STATUS_COMPENSATING: runstate.RunCompensating,
	weftv1.RunStatus_RUN_STATUS_COMPLETED:    runstate.RunCompleted,
	weftv1.RunStatus_RUN_STATUS_FAILED:       runstate.RunFailed,
	weftv1.RunStatus_RUN_STATUS_CANCELLED:    runstate.RunCancelled,
})

// drainingSubstatus is the engine's substatus string for RUN_SUBSTATUS_DRAINING.
const drainingSubstatus = "DRAINING"

var runSubstatuses = newEnumTable(map[weftv1.RunSubstatus]string{
	weftv1.RunSubstatus_RUN_SUBSTATUS_DRAINING: drainingSubstatus,
})

var stepStatuses = newEnumTable(map[weftv1.StepStatus]runstate.StepStatus{
	weftv1.StepStatus_STEP_STATUS_PENDING:                       runstate.StepPending,
	weftv1.StepStatus_STEP_STATUS_SCHEDULED:                     runstate.StepScheduled,
	weftv1.StepStatus_STEP_STATUS_RUNNING:                       runstate.StepRunning,
	weftv1.StepStatus_STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION: runstate.StepWaitingManual,
	weftv1.StepStatus_STEP_STATUS_WAITING_FOR_SIGNAL:            runstate.StepWaitingSignal,
	weftv1.StepStatus_STEP_STATUS_SUCCEEDED:                     runstate.StepSucceeded,
	weftv1.StepStatus_STEP_STATUS_FAILED:                        runstate.StepFailed,
	weftv1.StepStatus_STEP_STATUS_SKIPPED:                       runstate.StepSkipped,
	weftv1.StepStatus_STEP_STATUS_CANCELLED:                     runstate.StepCancelled,
})

var compensationStatuses = newEnumTable(map[weftv1.CompensationStatus]runstate.CompensationStatus{
	weftv1.CompensationStatus_COMPENSATION_STATUS_PENDING:   runstate.CompPending,
	weftv1.CompensationStatus_COMPENSATION_STATUS_RUNNING:   runstate.CompRunning,
	weftv1.CompensationStatus_COMPENSATION_STATUS_SUCCEEDED: runstate.CompSucceeded,
	weftv1.CompensationStatus_COMPENSATION_STATUS_FAILED:    runstate.CompFailed,
})

var compensationOutcomes = newEnumTable(map[weftv1.CompensationOutcome]runstate.CompensationOutcome{
	weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK: runstate.CompensationRolledBack,
	weftv1.CompensationOutcome_COMPENSATION_OUTCOME_PARTIAL:     runstate.CompensationPartial,
})

var attemptOutcomes = newEnumTable(map[weftv1.AttemptOutcome]runstate.AttemptOutcome{
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_SUCCEEDED:  runstate.AttemptSucceeded,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_FAILED:     runstate.AttemptFailed,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_TIMED_OUT:  runstate.AttemptTimedOut,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_CANCELLED:  runstate.AttemptCancelled,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_RECONCILED: runstate.AttemptReconciled,
})

var taskTypes = newEnumTable(map[weftv1.TaskType]engine.TaskKind{
	weftv1.TaskType_TASK_TYPE_ACTIVITY:     engine.TaskActivity,
	weftv1.TaskType_TASK_TYPE_VERIFY:       engine.TaskVerify,
	weftv1.TaskType_TASK_TYPE_COMPENSATION: engine.TaskCompensation,
})

// signalKinds has no entry for SIGNAL_KIND_UNSPECIFIED, which is the user
// signal: engine.SignalUser is "" and maps to it naturally.
var signalKinds = newEnumTable(map[weftv1.SignalKind]runstate.SignalKind{
	weftv1.SignalKind_SIGNAL_KIND_PAUSE:             runstate.SignalPause,
	weftv1.SignalKind_SIGNAL_KIND_RESUME:            runstate.SignalResume,
	weftv1.SignalKind_SIGNAL_KIND_CANCEL:            runstate.SignalCancel,
	weftv1.SignalKind_SIGNAL_KIND_RETRY_STEP:        runstate.SignalRetryStep,
	weftv1.SignalKind_SIGNAL_KIND_SKIP_STEP:         runstate.SignalSkipStep,
	weftv1.SignalKind_SIGNAL_KIND_MANUAL_COMPLETION: runstate.SignalManual,
	weftv1.SignalKind_SIGNAL_KIND_APPROVE:           runstate.SignalApprove,
})

var manualOutcomes = newEnumTable(map[weftv1.ManualOutcome]runstate.ManualOutcome{
	weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED: runstate.ManualSucceeded,
	weftv1.ManualOutcome_MANUAL_OUTCOME_FAILED:    runstate.ManualFailed,
	weftv1.ManualOutcome_MANUAL_OUTCOME_CANCELLED: runstate.ManualCancelled,
})
