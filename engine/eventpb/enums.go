package eventpb

import (
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// EnumTable maps one proto enum onto the engine's string values, both ways.
// UNSPECIFIED is absent: it maps to the engine's "" (unset), and an engine
// value the table does not know maps back to UNSPECIFIED, so a newer engine
// never fails a conversion.
type EnumTable[P ~int32, E ~string] struct {
	toEngine map[P]E
	toProto  map[E]P
}

// NewEnumTable builds a table from proto → engine pairs.
func NewEnumTable[P ~int32, E ~string](pairs map[P]E) EnumTable[P, E] {
	t := EnumTable[P, E]{toEngine: pairs, toProto: make(map[E]P, len(pairs))}
	for p, e := range pairs {
		t.toProto[e] = p
	}
	return t
}

// Engine answers the engine value of p, or "" for UNSPECIFIED and unknown values.
func (t EnumTable[P, E]) Engine(p P) E { return t.toEngine[p] }

// Proto answers the proto value of e, or UNSPECIFIED for "" and unknown values.
func (t EnumTable[P, E]) Proto(e E) P { return t.toProto[e] }

// Len answers how many proto values the table maps (UNSPECIFIED excluded),
// and how many distinct engine values they map to.
func (t EnumTable[P, E]) Len() (proto, engine int) { return len(t.toEngine), len(t.toProto) }

// ErrorClasses maps the error classes.
var ErrorClasses = NewEnumTable(map[weftv1.ErrorClass]definition.ErrorClass{
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
	weftv1.ErrorClass_ERROR_CLASS_SCHEDULE_TO_START:                 definition.ErrorScheduleToStart,
})

// VerifyStates maps what a verify task found.
var VerifyStates = NewEnumTable(map[weftv1.VerifyState]runstate.VerifyState{
	weftv1.VerifyState_VERIFY_STATE_NOT_COMPLETED:                runstate.VerifyNotCompleted,
	weftv1.VerifyState_VERIFY_STATE_COMPLETED_WITH_RESULT:        runstate.VerifyCompletedWithResult,
	weftv1.VerifyState_VERIFY_STATE_COMPLETED_RESULT_UNAVAILABLE: runstate.VerifyCompletedResultUnavailable,
	weftv1.VerifyState_VERIFY_STATE_INDETERMINATE:                runstate.VerifyIndeterminate,
})

// RunStatuses maps the run statuses.
var RunStatuses = NewEnumTable(map[weftv1.RunStatus]runstate.RunStatus{
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

// DrainingSubstatus is the engine's substatus string for RUN_SUBSTATUS_DRAINING.
const DrainingSubstatus = "DRAINING"

// RunSubstatuses maps the run substatuses.
var RunSubstatuses = NewEnumTable(map[weftv1.RunSubstatus]string{
	weftv1.RunSubstatus_RUN_SUBSTATUS_DRAINING: DrainingSubstatus,
})

// StepStatuses maps the step statuses.
var StepStatuses = NewEnumTable(map[weftv1.StepStatus]runstate.StepStatus{
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

// CompensationStatuses maps a step's rollback statuses.
var CompensationStatuses = NewEnumTable(map[weftv1.CompensationStatus]runstate.CompensationStatus{
	weftv1.CompensationStatus_COMPENSATION_STATUS_PENDING:   runstate.CompPending,
	weftv1.CompensationStatus_COMPENSATION_STATUS_RUNNING:   runstate.CompRunning,
	weftv1.CompensationStatus_COMPENSATION_STATUS_SUCCEEDED: runstate.CompSucceeded,
	weftv1.CompensationStatus_COMPENSATION_STATUS_FAILED:    runstate.CompFailed,
})

// CompensationOutcomes maps a run's rollback outcomes.
var CompensationOutcomes = NewEnumTable(map[weftv1.CompensationOutcome]runstate.CompensationOutcome{
	weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK: runstate.CompensationRolledBack,
	weftv1.CompensationOutcome_COMPENSATION_OUTCOME_PARTIAL:     runstate.CompensationPartial,
})

// AttemptOutcomes maps how an attempt ended.
var AttemptOutcomes = NewEnumTable(map[weftv1.AttemptOutcome]runstate.AttemptOutcome{
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_SUCCEEDED:  runstate.AttemptSucceeded,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_FAILED:     runstate.AttemptFailed,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_TIMED_OUT:  runstate.AttemptTimedOut,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_CANCELLED:  runstate.AttemptCancelled,
	weftv1.AttemptOutcome_ATTEMPT_OUTCOME_RECONCILED: runstate.AttemptReconciled,
})

// SignalKinds has no entry for SIGNAL_KIND_UNSPECIFIED, which is the user
// signal: runstate.SignalUser is "" and maps to it naturally.
var SignalKinds = NewEnumTable(map[weftv1.SignalKind]runstate.SignalKind{
	weftv1.SignalKind_SIGNAL_KIND_PAUSE:             runstate.SignalPause,
	weftv1.SignalKind_SIGNAL_KIND_RESUME:            runstate.SignalResume,
	weftv1.SignalKind_SIGNAL_KIND_CANCEL:            runstate.SignalCancel,
	weftv1.SignalKind_SIGNAL_KIND_RETRY_STEP:        runstate.SignalRetryStep,
	weftv1.SignalKind_SIGNAL_KIND_SKIP_STEP:         runstate.SignalSkipStep,
	weftv1.SignalKind_SIGNAL_KIND_MANUAL_COMPLETION: runstate.SignalManual,
	weftv1.SignalKind_SIGNAL_KIND_APPROVE:           runstate.SignalApprove,
	weftv1.SignalKind_SIGNAL_KIND_RERUN:             runstate.SignalRerun,
})

// ManualOutcomes maps what a person reports for a manual action.
var ManualOutcomes = NewEnumTable(map[weftv1.ManualOutcome]runstate.ManualOutcome{
	weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED: runstate.ManualSucceeded,
	weftv1.ManualOutcome_MANUAL_OUTCOME_FAILED:    runstate.ManualFailed,
	weftv1.ManualOutcome_MANUAL_OUTCOME_CANCELLED: runstate.ManualCancelled,
})
