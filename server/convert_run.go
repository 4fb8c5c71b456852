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
		Status:              runStatuses.Proto(s.Status),
		Substatus:           runSubstatuses.Proto(s.Substatus),
		Message:             s.Message,
		CompensationOutcome: compensationOutcomes.Proto(s.CompensationOutcome),
		CreatedAt:           eventpb.Timestamp(s.CreatedAt),
		StartedAt:           eventpb.Timestamp(s.StartedAt),
		CompletedAt:         eventpb.Timestamp(s.CompletedAt),
		TotalDurationMs:     uint64(max(s.TotalDuration.Milliseconds(), 0)),
		LastEventSeq:        s.LastEventSeq,
		Error:               eventpb.RunError(s.Error),
		Cancellation:        eventpb.Cancellation(s.Cancellation),
		SubmittedBy:         s.SubmittedBy,
		FailedSteps:         uint32(s.FailedSteps()),
		TriggerSource:       s.TriggerSource,
		Definition:          definitionProto(s.Definition),
		Input:               eventpb.JSONValue(s.Input),
		Artifacts:           eventpb.Artifacts(s.Artifacts),
		Deadline:            eventpb.Timestamp(s.Deadline),
		Result:              eventpb.JSONValue(s.Result),
		RetainUntil:         eventpb.Timestamp(s.RetainUntil),
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
		Status:             stepStatuses.Proto(st.Status),
		LogicalAttemptId:   uint32(max(st.LogicalAttempt, 0)),
		EngineAttemptId:    uint32(max(st.EngineAttempt, 0)),
		ScheduledAt:        eventpb.Timestamp(st.ScheduledAt),
		StartedAt:          eventpb.Timestamp(st.StartedAt),
		CompletedAt:        eventpb.Timestamp(st.CompletedAt),
		Output:             eventpb.JSONValue(st.Output),
		Artifacts:          eventpb.Artifacts(st.Artifacts),
		Error:              eventpb.StepError(st.Error),
		CompletionToken:    st.CompletionToken,
		CompensationStatus: compensationStatuses.Proto(st.CompStatus),
		CompensationError:  eventpb.StepError(st.CompError),
		IdempotencyKey:     actionIdempotencyKey(runID, st.ActionID),
		NextAttemptAt:      eventpb.Timestamp(st.NextAttemptAt),
		Reason:             st.Reason,
		WaitingForSignal:   st.WaitingSignal,
		ManualCompletion:   eventpb.StepManual(st.Manual),
	}
	for i := range st.Attempts {
		out.Attempts = append(out.Attempts, eventpb.Attempt(&st.Attempts[i]))
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
		SignalId: a.SignalID, AcceptedAt: eventpb.Timestamp(a.AcceptedAt), SignalStorageKey: a.SignalStorageKey}
}
