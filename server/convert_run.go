package server

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// runProto converts a snapshot to the API's Run. Timestamps are set only
// when the engine recorded them.
func runProto(s *runstate.Snapshot) *weftv1.Run {
	if s == nil {
		return nil
	}
	out := &weftv1.Run{
		RunId:               s.RunID,
		TenantId:            s.TenantID,
		ProjectId:           s.ProjectID,
		EnvironmentId:       s.EnvironmentID,
		PlanId:              s.PlanID,
		PlanVersion:         s.PlanVersion,
		RunRequestId:        s.RunRequestID,
		Status:              runStatuses.proto(s.Status),
		Substatus:           runSubstatuses.proto(s.Substatus),
		Message:             s.Message,
		CompensationOutcome: compensationOutcomes.proto(s.CompensationOutcome),
		CreatedAt:           timestamp(s.CreatedAt),
		StartedAt:           timestamp(s.StartedAt),
		CompletedAt:         timestamp(s.CompletedAt),
		TotalDurationMs:     uint64(max(s.TotalDuration.Milliseconds(), 0)),
		LastEventSeq:        s.LastEventSeq,
		Error:               runErrorProto(s.Error),
		Cancellation:        cancellationProto(s.Cancellation),
		SubmittedBy:         s.SubmittedBy,
		FailedSteps:         uint32(s.FailedSteps()),
		TriggerSource:       s.TriggerSource,
		Definition:          definitionProto(s.Definition),
		Input:               jsonValue(s.Input),
		Artifacts:           artifactsProto(s.Artifacts),
		Deadline:            timestamp(s.Deadline),
		Result:              jsonValue(s.Result),
	}
	for i := range s.Steps {
		out.Steps = append(out.Steps, stepProto(s.RunID, &s.Steps[i]))
	}
	return out
}

// stepProto converts one step's state.
func stepProto(runID string, st *runstate.StepState) *weftv1.Step {
	out := &weftv1.Step{
		ActionId:           st.ActionID,
		Status:             stepStatuses.proto(st.Status),
		LogicalAttemptId:   uint32(max(st.LogicalAttempt, 0)),
		EngineAttemptId:    uint32(max(st.EngineAttempt, 0)),
		ScheduledAt:        timestamp(st.ScheduledAt),
		StartedAt:          timestamp(st.StartedAt),
		CompletedAt:        timestamp(st.CompletedAt),
		Output:             jsonValue(st.Output),
		Artifacts:          artifactsProto(st.Artifacts),
		Error:              stepErrorProto(st.Error),
		CompletionToken:    st.CompletionToken,
		CompensationStatus: compensationStatuses.proto(st.CompStatus),
		CompensationError:  stepErrorProto(st.CompError),
		IdempotencyKey:     actionIdempotencyKey(runID, st.ActionID),
		NextAttemptAt:      timestamp(st.NextAttemptAt),
		Reason:             st.Reason,
		WaitingForSignal:   st.WaitingSignal,
		ManualCompletion:   stepManualProto(st.Manual),
	}
	for i := range st.Attempts {
		out.Attempts = append(out.Attempts, attemptProto(&st.Attempts[i]))
	}
	return out
}

// actionIdempotencyKey is the key the engine hands workers in Task
// (runId:actionId, stable across retries). StepState does not carry it, so
// the adapter derives it the same way.
func actionIdempotencyKey(runID, actionID string) string { return runID + ":" + actionID }

// artifactsOf converts a worker's artifact references.
func artifactsOf(in []*weftv1.ArtifactRef) []runstate.ArtifactRef {
	var out []runstate.ArtifactRef
	for _, a := range in {
		out = append(out, runstate.ArtifactRef{URI: a.GetUri(), Kind: a.GetKind(), SHA256: a.GetSha256(),
			SizeBytes: a.GetSizeBytes(), ExpiresAt: timeOf(a.GetExpiresAt())})
	}
	return out
}

// acceptedProto converts the canonical accepted-signal result (docs/semantics.md#accepted-signal-record).
func acceptedProto(a engine.AcceptedSignal) *weftv1.AcceptedSignalResult {
	return &weftv1.AcceptedSignalResult{Accepted: a.Accepted, RunId: a.RunID, SignalName: a.SignalName,
		SignalId: a.SignalID, AcceptedAt: timestamp(a.AcceptedAt), SignalStorageKey: a.SignalStorageKey}
}

// The conversions of run state that events share are eventpb's, so that a
// run and its events read the same.
var (
	attemptProto      = eventpb.Attempt
	stepErrorProto    = eventpb.StepError
	runErrorProto     = eventpb.RunError
	cancellationProto = eventpb.Cancellation
	artifactsProto    = eventpb.Artifacts
	manualResultProto = eventpb.ManualResult
	stepManualProto   = eventpb.StepManual
)
