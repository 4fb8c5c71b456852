package eventpb

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/jsonvalue"
)

// Attempt converts the evidence of one attempt; nil stays nil.
func Attempt(a *runstate.Attempt) *weftv1.Attempt {
	if a == nil {
		return nil
	}
	return AttemptIn(a, new(weftv1.Attempt), new([2]timestamppb.Timestamp))
}

// AttemptIn converts the evidence of one attempt into out, and its start and
// end into at (TimestampIn), for a caller that allocates an attempt's message
// with its timestamps.
func AttemptIn(a *runstate.Attempt, out *weftv1.Attempt, at *[2]timestamppb.Timestamp) *weftv1.Attempt {
	*out = weftv1.Attempt{
		LogicalAttemptId: uint32(max(a.LogicalAttempt, 0)),
		EngineAttemptId:  uint32(max(a.EngineAttempt, 0)),
		Outcome:          AttemptOutcomes.Proto(a.Outcome),
		Error:            StepError(a.Error),
		StartedAt:        TimestampIn(&at[0], a.StartedAt),
		CompletedAt:      TimestampIn(&at[1], a.CompletedAt),
		WorkerId:         a.WorkerID,
	}
	return out
}

// StepError converts a failure; nil stays nil.
func StepError(e *runstate.StepError) *weftv1.StepError {
	if e == nil {
		return nil
	}
	return &weftv1.StepError{ErrorClass: ErrorClasses.Proto(e.Class), Code: e.Code, Message: e.Message, Retryable: e.Retryable}
}

// RunError converts a run's terminal failure; nil stays nil.
func RunError(e *runstate.RunError) *weftv1.RunError {
	if e == nil {
		return nil
	}
	return &weftv1.RunError{ActionId: e.ActionID, Error: StepError(e.Error), WorkflowTimeout: e.WorkflowTimeout}
}

// Cancellation converts who cancelled a run and why; nil stays nil.
func Cancellation(c *runstate.Cancellation) *weftv1.Cancellation {
	if c == nil {
		return nil
	}
	return &weftv1.Cancellation{CancelledBy: c.CancelledBy, Reason: c.Reason, RequestedAt: Timestamp(c.RequestedAt), Compensate: c.Compensate}
}

// Artifacts converts artifact references; none is nil.
func Artifacts(in []runstate.ArtifactRef) []*weftv1.ArtifactRef {
	var out []*weftv1.ArtifactRef
	for _, a := range in {
		out = append(out, &weftv1.ArtifactRef{Uri: a.URI, Kind: a.Kind, Sha256: a.SHA256, SizeBytes: a.SizeBytes,
			ExpiresAt: Timestamp(a.ExpiresAt)})
	}
	return out
}

// ManualResult converts a manual completion's canonical result.
func ManualResult(r runstate.ManualResult) *weftv1.ManualCompletionResult {
	return &weftv1.ManualCompletionResult{RunId: r.RunID, ActionId: r.ActionID, CompletionToken: r.CompletionToken,
		Outcome: ManualOutcomes.Proto(r.Outcome), ActorUserId: r.ActorUserID, AcceptedAt: Timestamp(r.AcceptedAt),
		Principal: r.Principal, Notes: r.Notes, EvidenceRefs: r.EvidenceRefs}
}

// StepManual converts the manual completion a step keeps, if any.
func StepManual(r *runstate.ManualResult) *weftv1.ManualCompletionResult {
	if r == nil {
		return nil
	}
	return ManualResult(*r)
}

// JSONValue answers JSON as a google.protobuf.Value; empty JSON is unset
// (nil). JSON the engine stored is valid, so an undecodable value cannot
// happen; should it, the field is left unset rather than failing a read.
func JSONValue(raw json.RawMessage) *structpb.Value {
	if len(raw) == 0 {
		return nil
	}
	if v, ok := jsonvalue.Parse(raw); ok {
		return v
	}
	v := &structpb.Value{} // what Parse leaves to protojson
	if err := protojson.Unmarshal(raw, v); err != nil {
		return nil
	}
	return v
}

// Timestamp answers t as a Timestamp, or nil when t is zero.
func Timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// TimestampIn is Timestamp written into dst, for a caller that allocates a
// Timestamp with the message that holds it: nil when t is zero.
func TimestampIn(dst *timestamppb.Timestamp, t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	dst.Seconds, dst.Nanos = t.Unix(), int32(t.Nanosecond())
	return dst
}
