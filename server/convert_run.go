package server

import (
	"strings"

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

// attemptBox is an attempt's message and its two timestamps, allocated
// together.
type attemptBox struct {
	attempt weftv1.Attempt
	at      [2]timestamppb.Timestamp
}

// runProto converts a snapshot to the API's Run. Timestamps are set only
// when the engine recorded them. The run's message is allocated with its
// timestamps; its steps', its steps' attempts' and their pointers each in
// one block; its steps' idempotency keys in one string; and its definition
// is the one definitionProto shares.
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
		CreatedAt:           eventpb.TimestampIn(&box.at[0], s.CreatedAt),
		StartedAt:           eventpb.TimestampIn(&box.at[1], s.StartedAt),
		CompletedAt:         eventpb.TimestampIn(&box.at[2], s.CompletedAt),
		TotalDurationMs:     uint64(max(s.TotalDuration.Milliseconds(), 0)),
		LastEventSeq:        s.LastEventSeq,
		Error:               eventpb.RunError(s.Error),
		Cancellation:        eventpb.Cancellation(s.Cancellation),
		SubmittedBy:         s.SubmittedBy,
		FailedSteps:         uint32(s.FailedSteps()),
		TriggerSource:       s.TriggerSource,
		Priority:            uint32(max(s.Priority, 0)),
		Definition:          sharedDefinitionProto(s.Definition),
		Input:               jsonValue(s.Input),
		Artifacts:           eventpb.Artifacts(s.Artifacts),
		SearchAttributes:    eventpb.SearchAttributes(s.SearchAttributes),
		Deadline:            eventpb.Timestamp(s.Deadline),
		Result:              jsonValue(s.Result),
		RetainUntil:         eventpb.Timestamp(s.RetainUntil),
		ParentRunId:         s.ParentRunID,
		ParentStep:          s.ParentStep,
	}
	if c := s.Concurrency; c != nil {
		out.Concurrency = &weftv1.RunKeyConcurrency{Key: c.Key, Limit: uint32(max(c.Limit, 0)), Strategy: c.Strategy,
			InUse: uint32(max(c.InUse, 0)), Wait: c.Wait}
	}
	if len(s.Steps) == 0 {
		return out
	}
	attempts := 0
	for i := range s.Steps {
		attempts += len(s.Steps[i].Attempts)
	}
	b := stepBlocks{keys: idempotencyKeys(s.RunID, s.Steps), runIDLen: len(s.RunID)}
	if attempts > 0 {
		b.attempts = make([]attemptBox, attempts)
		b.attemptPtrs = make([]*weftv1.Attempt, attempts)
	}
	steps := make([]stepBox, len(s.Steps))
	out.Steps = make([]*weftv1.Step, len(s.Steps))
	fanOuts := s.FanOuts()
	for i := range s.Steps {
		out.Steps[i] = stepProto(&s.Steps[i], &steps[i], &b)
		out.Steps[i].FlowWait = s.FlowWaits[s.Steps[i].ActionID]
		if f, ok := fanOuts[s.Steps[i].ActionID]; ok {
			out.Steps[i].FanOut = fanOutProto(f)
		}
	}
	return out
}

// fanOutProto converts how a forEach step's items stand (docs/semantics.md#for-each).
func fanOutProto(f runstate.FanOut) *weftv1.FanOutProgress {
	n := func(v int) uint32 { return uint32(max(v, 0)) }
	return &weftv1.FanOutProgress{Items: n(f.Items), MaxConcurrency: n(f.MaxConcurrency), Pending: n(f.Pending),
		InFlight: n(f.InFlight), Succeeded: n(f.Succeeded), Failed: n(f.Failed), Cancelled: n(f.Cancelled)}
}

// stepBlocks is what a run's steps take their parts from, each taking the
// next: the attempts' messages and pointers, and the idempotency keys (the
// next step's key at keys' start, runIDLen+1 bytes longer than its action
// id).
type stepBlocks struct {
	attempts    []attemptBox
	attemptPtrs []*weftv1.Attempt
	keys        string
	runIDLen    int
}

// stepProto converts one step's state into box, taking its attempts and
// idempotency key from b.
func stepProto(st *runstate.StepState, box *stepBox, b *stepBlocks) *weftv1.Step {
	out := &box.step
	*out = weftv1.Step{
		ActionId:           st.ActionID,
		Status:             stepStatuses.Proto(st.Status),
		LogicalAttemptId:   uint32(max(st.LogicalAttempt, 0)),
		EngineAttemptId:    uint32(max(st.EngineAttempt, 0)),
		ScheduledAt:        eventpb.TimestampIn(&box.at[0], st.ScheduledAt),
		StartedAt:          eventpb.TimestampIn(&box.at[1], st.StartedAt),
		CompletedAt:        eventpb.TimestampIn(&box.at[2], st.CompletedAt),
		Output:             jsonValue(st.Output),
		Artifacts:          eventpb.Artifacts(st.Artifacts),
		Error:              eventpb.StepError(st.Error),
		CompletionToken:    st.CompletionToken,
		CompensationStatus: compensationStatuses.Proto(st.CompStatus),
		CompensationError:  eventpb.StepError(st.CompError),
		NextAttemptAt:      eventpb.Timestamp(st.NextAttemptAt),
		Reason:             st.Reason,
		WaitingForSignal:   st.WaitingSignal,
		ManualCompletion:   eventpb.StepManual(st.Manual),
		WakeAt:             eventpb.Timestamp(st.WakeAt),
		Iteration:          uint32(max(st.Iteration, 0)),
		Input:              jsonValue(st.Input),
		ChildRunId:         st.ChildRunID,
		ParentStep:         st.Parent,
		ItemIndex:          uint32(max(st.Index, 0)),
	}
	n := b.runIDLen + 1 + len(st.ActionID) // actionIdempotencyKey's length
	out.IdempotencyKey, b.keys = b.keys[:n], b.keys[n:]
	if k := len(st.Attempts); k > 0 {
		out.Attempts = b.attemptPtrs[:k:k]
		for i := range st.Attempts {
			out.Attempts[i] = eventpb.AttemptIn(&st.Attempts[i], &b.attempts[i].attempt, &b.attempts[i].at)
		}
		b.attempts, b.attemptPtrs = b.attempts[k:], b.attemptPtrs[k:]
	}
	return out
}

// actionIdempotencyKey is the key the engine hands workers in Task
// (runId:actionId, stable across retries). StepState does not carry it, so
// the adapter derives it the same way.
func actionIdempotencyKey(runID, actionID string) string { return runID + ":" + actionID }

// idempotencyKeys answers the steps' actionIdempotencyKey, one after the
// other in one string.
func idempotencyKeys(runID string, steps []runstate.StepState) string {
	n := 0
	for i := range steps {
		n += len(runID) + 1 + len(steps[i].ActionID)
	}
	var b strings.Builder
	b.Grow(n)
	for i := range steps {
		b.WriteString(runID)
		b.WriteByte(':')
		b.WriteString(steps[i].ActionID)
	}
	return b.String()
}

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
