package server

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// runBox is a run's message and the timestamps most runs have, allocated
// together; the rarer ones are allocated when set.
type runBox struct {
	run weftv1.Run
	at  [3]timestamppb.Timestamp
}

// stepBox is a step's message and the timestamps most steps have,
// allocated together; the rarer ones are allocated when set.
type stepBox struct {
	step weftv1.Step
	at   [3]timestamppb.Timestamp
}

// runProto converts a snapshot to the API's Run. Timestamps are set only
// when the engine recorded them. The run's and its steps' messages are
// allocated in two blocks, not one by one.
func runProto(s *runstate.Snapshot) *weftv1.Run {
	if s == nil {
		return nil
	}
	box := new(runBox)
	out := &box.run
	*out = weftv1.Run{
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
		CreatedAt:           timestampIn(&box.at[0], s.CreatedAt),
		StartedAt:           timestampIn(&box.at[1], s.StartedAt),
		CompletedAt:         timestampIn(&box.at[2], s.CompletedAt),
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
	if len(s.Steps) > 0 {
		steps := make([]stepBox, len(s.Steps))
		out.Steps = make([]*weftv1.Step, len(s.Steps))
		for i := range s.Steps {
			out.Steps[i] = stepProto(s.RunID, &s.Steps[i], &steps[i])
		}
	}
	return out
}

// stepProto converts one step's state into box.
func stepProto(runID string, st *runstate.StepState, box *stepBox) *weftv1.Step {
	out := &box.step
	*out = weftv1.Step{
		ActionId:           st.ActionID,
		Status:             stepStatuses.Proto(st.Status),
		LogicalAttemptId:   uint32(max(st.LogicalAttempt, 0)),
		EngineAttemptId:    uint32(max(st.EngineAttempt, 0)),
		ScheduledAt:        timestampIn(&box.at[0], st.ScheduledAt),
		StartedAt:          timestampIn(&box.at[1], st.StartedAt),
		CompletedAt:        timestampIn(&box.at[2], st.CompletedAt),
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
	if len(st.Attempts) > 0 {
		out.Attempts = make([]*weftv1.Attempt, len(st.Attempts))
		for i := range st.Attempts {
			out.Attempts[i] = eventpb.Attempt(&st.Attempts[i])
		}
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
