package eventpb

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// engineEventTypes is every event type engine/runstate/events.go declares.
var engineEventTypes = []string{
	runstate.EvRunSubmitted, runstate.EvRunApproved, runstate.EvRunQueued, runstate.EvRunStarted, runstate.EvRunBlocked,
	runstate.EvRunUnblocked, runstate.EvRunPaused, runstate.EvRunDrained, runstate.EvRunResumed, runstate.EvRunCompensating,
	runstate.EvRunCompleted, runstate.EvRunFailed, runstate.EvRunCancelled, runstate.EvRunRerun, runstate.EvStepScheduled, runstate.EvStepStarted,
	runstate.EvStepCompleted, runstate.EvStepFailed, runstate.EvStepSkipped, runstate.EvStepCancelled, runstate.EvStepWaiting,
	runstate.EvStepRetried, runstate.EvStepAttemptRecorded, runstate.EvStepVerified, runstate.EvStepSleeping, runstate.EvStepIterated, runstate.EvCompensationStarted,
	runstate.EvCompensationSucceeded, runstate.EvCompensationFailed, runstate.EvSignalAccepted, runstate.EvSignalRejected,
	runstate.EvSignalConsumed, runstate.EvSearchAttributesUpserted, runstate.EvChildRunStarted, runstate.EvChildRunEnded, runstate.EvStepFannedOut,
}

// payloadCase answers the name of the oneof field an event's payload sets.
func payloadCase(ev *weftv1.Event) string {
	od := ev.ProtoReflect().Descriptor().Oneofs().ByName("payload")
	if fd := ev.ProtoReflect().WhichOneof(od); fd != nil {
		return string(fd.Name())
	}
	return ""
}

// snakeCase answers "RunSubmitted" as "run_submitted".
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestEventPayload_EveryEngineTypeFillsItsOneofCase(t *testing.T) {
	for _, typ := range engineEventTypes {
		out := Event(&runstate.Event{Type: typ, RunID: "run-1", Seq: 3})
		require.Equal(t, snakeCase(typ), payloadCase(out), typ)
		require.Equal(t, typ, out.GetEventType())
	}
}

func TestEventPayload_EveryOneofCaseHasAnEngineType(t *testing.T) {
	fields := (&weftv1.Event{}).ProtoReflect().Descriptor().Oneofs().ByName("payload").Fields()
	require.Equal(t, len(engineEventTypes), fields.Len())
	for i := range fields.Len() {
		name := fields.Get(i).Name()
		found := false
		for _, typ := range engineEventTypes {
			found = found || protoreflect.Name(snakeCase(typ)) == name
		}
		require.True(t, found, "oneof case %s has no engine event type", name)
	}
}

func TestEventPayload_UnknownTypeKeepsTheEnvelopeWithoutPayload(t *testing.T) {
	out := Event(&runstate.Event{Type: "FromTheFuture", RunID: "run-1", Seq: 9, EngineAttempt: 2})
	require.Nil(t, out.GetPayload())
	require.Equal(t, uint64(9), out.GetRunSeq())
	require.Equal(t, uint32(2), out.GetEngineAttemptId())
}

func TestEventPayload_CarriesTheEventData(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	out := Event(&runstate.Event{Type: runstate.EvRunFailed, Data: runstate.EventData{Status: "FAILED",
		CompensationOutcome: runstate.CompensationPartial, CompletedAt: at,
		RunError: &runstate.RunError{ActionID: "a", Error: &runstate.StepError{Class: definition.ErrorGovernance}}}})
	p := out.GetRunFailed()
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, p.GetStatus())
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_PARTIAL, p.GetCompensationOutcome())
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_GOVERNANCE, p.GetError().GetError().GetErrorClass())
	require.Equal(t, at, p.GetCompletedAt().AsTime())
	require.Nil(t, out.GetEmittedAt(), "zero times stay unset")

	manual := Event(&runstate.Event{Type: runstate.EvSignalAccepted, RunID: "r", StepID: "approve",
		Data: runstate.EventData{SignalKind: runstate.SignalManual, ManualOutcome: "SUCCEEDED", CompletionToken: "tok", Actor: "alice"}})
	mc := manual.GetSignalAccepted().GetManualCompletion()
	require.Equal(t, weftv1.SignalKind_SIGNAL_KIND_MANUAL_COMPLETION, manual.GetSignalAccepted().GetKind())
	require.Equal(t, "approve", mc.GetActionId())
	require.Equal(t, weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED, mc.GetOutcome())
}

func TestEventPayload_CancelWithCompensationIsRecordedOnEveryEventOfIt(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := &runstate.Cancellation{CancelledBy: "op", Reason: "withdrawn", RequestedAt: at, Compensate: true}
	accepted := Event(&runstate.Event{Type: runstate.EvSignalAccepted, RunID: "r",
		Data: runstate.EventData{SignalKind: runstate.SignalCancel, SignalName: "$cancel", SignalID: "s", AcceptedAt: at, Compensate: true}})
	require.True(t, accepted.GetSignalAccepted().GetCompensate())
	compensating := Event(&runstate.Event{Type: runstate.EvRunCompensating, RunID: "r",
		Data: runstate.EventData{Status: "COMPENSATING", CompensationOrder: []string{"b", "a"}, CancelRequested: true, Cancellation: c}})
	require.True(t, compensating.GetRunCompensating().GetCancelRequested())
	require.Empty(t, compensating.GetRunCompensating().GetFailedActionId())
	cancelled := Event(&runstate.Event{Type: runstate.EvRunCancelled, RunID: "r",
		Data: runstate.EventData{Status: "CANCELLED", Cancellation: c, CompensationOutcome: runstate.CompensationRolledBack, CompletedAt: at}})
	p := cancelled.GetRunCancelled()
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK, p.GetCompensationOutcome())
	require.True(t, p.GetCancellation().GetCompensate())
	plain := Event(&runstate.Event{Type: runstate.EvRunCancelled, RunID: "r",
		Data: runstate.EventData{Status: "CANCELLED", Cancellation: &runstate.Cancellation{CancelledBy: "op"}, CompletedAt: at}})
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_UNSPECIFIED, plain.GetRunCancelled().GetCompensationOutcome())
	require.False(t, plain.GetRunCancelled().GetCancellation().GetCompensate())
}
