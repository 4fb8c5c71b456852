package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// scenarios are the engine's behaviour tests, each named after the rule it
// proves; every one runs on every store backend.
var scenarios = map[string]func(*testing.T, *bundle){
	"Reads_AnIdempotentSignalReadsItsPayloadKeyOnce":                                        scenarioReads_AnIdempotentSignalReadsItsPayloadKeyOnce,
	"Reads_ATaskCompletionReadsEveryKeyAtMostOnce":                                          scenarioReads_ATaskCompletionReadsEveryKeyAtMostOnce,
	"ScheduleToStart_AnUnclaimedTaskFailsItsAttemptWithItsOwnClassLeavesTheQueueAndRetries": scenarioScheduleToStart_AnUnclaimedTaskFailsItsAttemptWithItsOwnClassLeavesTheQueueAndRetries,
	"ScheduleToStart_ARetryClaimedLaterStartsTheStepOnce":                                   scenarioScheduleToStart_ARetryClaimedLaterStartsTheStepOnce,
	"ScheduleToStart_ACompensationNobodyClaimsFailsUnderTheHooksPolicyAndTheRunEnds":        scenarioScheduleToStart_ACompensationNobodyClaimsFailsUnderTheHooksPolicyAndTheRunEnds,
	"ScheduleToStart_AClaimInTimeRemovesTheTimer":                                           scenarioScheduleToStart_AClaimInTimeRemovesTheTimer,
	"ScheduleToStart_TheDeploymentDefaultAppliesAndOnFailureSkipMovesOn":                    scenarioScheduleToStart_TheDeploymentDefaultAppliesAndOnFailureSkipMovesOn,
	"ScheduleToStart_APausedRunsTaskWaitsAgainInsteadOfFailing":                             scenarioScheduleToStart_APausedRunsTaskWaitsAgainInsteadOfFailing,
	"ScheduleToStart_AGivenBackTaskWaitsAgainFromItsGiveBack":                               scenarioScheduleToStart_AGivenBackTaskWaitsAgainFromItsGiveBack,
	"Pollers_ListedPerQueueWithIdentityLastPollInFlightBacklogAndOldestAge":                 scenarioPollers_ListedPerQueueWithIdentityLastPollInFlightBacklogAndOldestAge,
	"Pollers_EveryEngineListsEveryPollerAndQuietOnesExpire":                                 scenarioPollers_EveryEngineListsEveryPollerAndQuietOnesExpire,
	"Pollers_ANewerWeftdsRecordIsNeitherListedNorSwept":                                     scenarioPollers_ANewerWeftdsRecordIsNeitherListedNorSwept,
	"Pollers_AStoppedProcessesRecordsExpireAndAreSwept":                                     scenarioPollers_AStoppedProcessesRecordsExpireAndAreSwept,
	"Stats_CountRunsByStatusAndQueueDepthFromIndexes":                                       scenarioStats_CountRunsByStatusAndQueueDepthFromIndexes,
	"Reconcile_CancellationBeforeCompletionIsRecordedCancelled":                             scenarioReconcile_CancellationBeforeCompletionIsRecordedCancelled,
	"Signal_DurableReplayAfterACrashAnswersTheOriginalResult":                               scenarioSignal_DurableReplayAfterACrashAnswersTheOriginalResult,
	"Signal_WithoutAnIDIsANewSignalEveryTime":                                               scenarioSignal_WithoutAnIDIsANewSignalEveryTime,
	"Signal_AcceptedBeforeItsWaitOpensStillUnblocksWhatFollows":                             scenarioSignal_AcceptedBeforeItsWaitOpensStillUnblocksWhatFollows,
	"SignalRetention_ExpiredRecordsGoAndARetryIsANewSignal":                                 scenarioSignalRetention_ExpiredRecordsGoAndARetryIsANewSignal,
	"SignalRetention_KeepsASignalTheRunHasNotConsumed":                                      scenarioSignalRetention_KeepsASignalTheRunHasNotConsumed,
	"Signal_OnlyThePayloadDurableAnswersAcceptanceIndeterminate":                            scenarioSignal_OnlyThePayloadDurableAnswersAcceptanceIndeterminate,
	"Signal_ReservedCharactersInIDsNeverCollide":                                            scenarioSignal_ReservedCharactersInIDsNeverCollide,
	"PersistedFormat_UnknownPrefixesBreakNoScanAndAreLeftAlone":                             scenarioPersistedFormat_UnknownPrefixesBreakNoScanAndAreLeftAlone,
	"Reconcile_VerifierUnavailableIsIndeterminate":                                          scenarioReconcile_VerifierUnavailableIsIndeterminate,
	"Reconcile_SuccessIsRecordedBeforeItIsAcknowledged":                                     scenarioReconcile_SuccessIsRecordedBeforeItIsAcknowledged,
	"Reconcile_FailureBeforeTheSideEffectRetriesWithoutVerify":                              scenarioReconcile_FailureBeforeTheSideEffectRetriesWithoutVerify,
	"Reconcile_FailureAfterAPossibleSideEffectVerifiesFirst":                                scenarioReconcile_FailureAfterAPossibleSideEffectVerifiesFirst,
	"Reconcile_ActivityWithoutAKeyKeepsAtLeastOnceAndWritesNoRecord":                        scenarioReconcile_ActivityWithoutAKeyKeepsAtLeastOnceAndWritesNoRecord,
	"Submit_StartRacingRecoveryStartsTheRunOnce":                                            scenarioSubmit_StartRacingRecoveryStartsTheRunOnce,
	"Heartbeat_MissingHeartbeatTimesTheAttemptOut":                                          scenarioHeartbeat_MissingHeartbeatTimesTheAttemptOut,
	"Pause_DrainTimeoutForcesPausedAndLateCompletionIsApplied":                              scenarioPause_DrainTimeoutForcesPausedAndLateCompletionIsApplied,
	"Signal_ToATerminalRunIsRejected":                                                       scenarioSignal_ToATerminalRunIsRejected,
	"Signal_InvalidIDsAreRejectedBeforeAnythingIsWritten":                                   scenarioSignal_InvalidIDsAreRejectedBeforeAnythingIsWritten,
	"DAG_AllOfJoinWaitsForEveryPredecessor":                                                 scenarioDAG_AllOfJoinWaitsForEveryPredecessor,
	"Dispatch_OrderThenActionIDByteWise":                                                    scenarioDispatch_OrderThenActionIDByteWise,
	"Retry_RetryableFailureRunsAgainAfterBackoff":                                           scenarioRetry_RetryableFailureRunsAgainAfterBackoff,
	"Retry_ExhaustedAttemptsFailTheStep":                                                    scenarioRetry_ExhaustedAttemptsFailTheStep,
	"Timeout_AttemptTimeoutIsRetryableByDefault":                                            scenarioTimeout_AttemptTimeoutIsRetryableByDefault,
	"TaskReport_DuplicateWithSameTokenChangesNothing":                                       scenarioTaskReport_DuplicateWithSameTokenChangesNothing,
	"Compensation_RunsInReverseCompletionOrderThenFails":                                    scenarioCompensation_RunsInReverseCompletionOrderThenFails,
	"Compensation_FailedHookDoesNotStopTheOthers":                                           scenarioCompensation_FailedHookDoesNotStopTheOthers,
	"OnFailureSkip_RecordsTheFailureThenSkipsDependants":                                    scenarioOnFailureSkip_RecordsTheFailureThenSkipsDependants,
	"FailedSteps_EveryStepFailedCountsAStepSkippedAfterItFailedToo":                         scenarioFailedSteps_EveryStepFailedCountsAStepSkippedAfterItFailedToo,
	"Hold_BlocksUntilRetryStepOpensANewLogicalAttempt":                                      scenarioHold_BlocksUntilRetryStepOpensANewLogicalAttempt,
	"Rerun_AFailedRunRerunsFromAMiddleStepAndKeepsUpstreamAndEveryAttempt":                  scenarioRerun_AFailedRunRerunsFromAMiddleStepAndKeepsUpstreamAndEveryAttempt,
	"Rerun_ACompletedRunRerunsAStepAndEverythingDownstreamOfIt":                             scenarioRerun_ACompletedRunRerunsAStepAndEverythingDownstreamOfIt,
	"Rerun_ARetriedRequestAnswersTheFirstRerun":                                             scenarioRerun_ARetriedRequestAnswersTheFirstRerun,
	"Rerun_TheRerunRunLeavesTheExpiryIndexUntilItEndsAgain":                                 scenarioRerun_TheRerunRunLeavesTheExpiryIndexUntilItEndsAgain,
	"Rerun_AVerifyThatFindsNoSideEffectDispatchesTheStepAgain":                              scenarioRerun_AVerifyThatFindsNoSideEffectDispatchesTheStepAgain,
	"Manual_WaitsWithAFreshTokenAndCompletesIdempotently":                                   scenarioManual_WaitsWithAFreshTokenAndCompletesIdempotently,
	"Signal_WaitConsumesAcceptedSignalsInOrder":                                             scenarioSignal_WaitConsumesAcceptedSignalsInOrder,
	"Signal_ConcurrentDuplicatesAcceptExactlyOnce":                                          scenarioSignal_ConcurrentDuplicatesAcceptExactlyOnce,
	"Pause_DrainsInFlightThenResumeRunsOnlyWhatRemains":                                     scenarioPause_DrainsInFlightThenResumeRunsOnlyWhatRemains,
	"Cancel_IsRejectedWhileCompensatingAndLogged":                                           scenarioCancel_IsRejectedWhileCompensatingAndLogged,
	"Cancel_EndsTheRunAndRetiresItsTasks":                                                   scenarioCancel_EndsTheRunAndRetiresItsTasks,
	"Tenancy_AnotherTenantsRunIsNotFound":                                                   scenarioTenancy_AnotherTenantsRunIsNotFound,
	"Submit_RunRequestIDAnswersTheExistingRun":                                              scenarioSubmit_RunRequestIDAnswersTheExistingRun,
	"Submit_WithoutStartStaysPendingUntilStartRun":                                          scenarioSubmit_WithoutStartStaysPendingUntilStartRun,
	"Submit_InvalidDefinitionNamesTheFieldAndWritesNothing":                                 scenarioSubmit_InvalidDefinitionNamesTheFieldAndWritesNothing,
	"WorkflowTimeout_FailsABlockedRun":                                                      scenarioWorkflowTimeout_FailsABlockedRun,
	"Dispatch_SharedOrderBreaksTiesByActionIDInASequence":                                   scenarioDispatch_SharedOrderBreaksTiesByActionIDInASequence,
	"YAMLDefinitions_AreDAGsWhoseRootsStartAtOnce":                                          scenarioYAMLDefinitions_AreDAGsWhoseRootsStartAtOnce,
	"Sequential_RunsEachActionAfterThePreviousSucceeds":                                     scenarioSequential_RunsEachActionAfterThePreviousSucceeds,
	"Poll_FindsATaskWhoseEntrySortsBeforeClaimedOnes":                                       scenarioPoll_FindsATaskWhoseEntrySortsBeforeClaimedOnes,
	"Undelivered_AClaimWhoseCallEndedIsReadyAgainUnderTheSameAttempt":                       scenarioUndelivered_AClaimWhoseCallEndedIsReadyAgainUnderTheSameAttempt,
	"Registry_AStoredVersionIsImmutableAndTheSameBodyAgainIsExisting":                       scenarioRegistry_AStoredVersionIsImmutableAndTheSameBodyAgainIsExisting,
	"Registry_LatestIsTheVersionStoredLast":                                                 scenarioRegistry_LatestIsTheVersionStoredLast,
	"Registry_ListPagesByPlanThenVersionWithinTheTenant":                                    scenarioRegistry_ListPagesByPlanThenVersionWithinTheTenant,
	"Registry_SubmitByReferenceRunsTheStoredVersionOrTheLatest":                             scenarioRegistry_SubmitByReferenceRunsTheStoredVersionOrTheLatest,
	"Registry_AnInvalidDefinitionNamesTheFieldAndStoresNothing":                             scenarioRegistry_AnInvalidDefinitionNamesTheFieldAndStoresNothing,
	"Registry_ConcurrentPutsOfOneVersionStoreExactlyOneBody":                                scenarioRegistry_ConcurrentPutsOfOneVersionStoreExactlyOneBody,
}

// scenarioBackends open a fresh store of each backend for one test.
var scenarioBackends = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"memory", func(*testing.T) store.Store { return memstore.New(memstore.Config{}) }},
	{"pebble", func(t *testing.T) store.Store {
		st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}},
	{"postgresql", func(t *testing.T) store.Store { return sqltest.Open(t, sqltest.NewSchema(t)) }},
}

func TestScenarios(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			for name, scenario := range scenarios {
				t.Run(name, func(t *testing.T) {
					scenario(t, setupWith(t, backend.open(t)))
				})
			}
		})
	}
}
