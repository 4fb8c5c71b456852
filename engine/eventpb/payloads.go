package eventpb

import (
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// runPayloads fill the payloads of run-level events.
var runPayloads = map[string]payloadFiller{
	runstate.EvRunSubmitted: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunSubmitted{RunSubmitted: &weftv1.RunSubmitted{Status: runStatusOf(d),
			PlanRef: planRef(ev), Context: runContextProto(d.Context), RunRequestId: d.RunRequestID}}
	},
	runstate.EvRunApproved: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunApproved{RunApproved: &weftv1.RunApproved{Status: runStatusOf(d),
			ApprovedBy: d.Actor, Reason: d.Reason}}
	},
	runstate.EvRunQueued: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_RunQueued{RunQueued: &weftv1.RunQueued{Status: runStatusOf(&ev.Data), Reason: ev.Data.Reason}}
	},
	runstate.EvRunStarted: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunStarted{RunStarted: &weftv1.RunStarted{Status: runStatusOf(d),
			EngineRunRef: ev.RunID, EngineType: "weft", PlanRef: planRef(ev), Context: runContextProto(d.Context),
			StartedAt: Timestamp(d.StartedAt)}}
	},
	runstate.EvRunBlocked: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunBlocked{RunBlocked: &weftv1.RunBlocked{Status: runStatusOf(d),
			WaitingOn: d.WaitingOn, Reason: d.Reason}}
	},
	runstate.EvRunUnblocked: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_RunUnblocked{RunUnblocked: &weftv1.RunUnblocked{Status: runStatusOf(&ev.Data)}}
	},
	runstate.EvRunPaused: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunPaused{RunPaused: &weftv1.RunPaused{Status: runStatusOf(d),
			Substatus: RunSubstatuses.Proto(d.Substatus), InFlightTasks: uint32(max(d.InFlightTasks, 0)),
			RequestedBy: d.Actor, Reason: d.Reason}}
	},
	runstate.EvRunDrained: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunDrained{RunDrained: &weftv1.RunDrained{Status: runStatusOf(d),
			TimedOut: d.TimedOut, OrphanedTasks: uint32(max(d.InFlightTasks, 0))}}
	},
	runstate.EvRunResumed: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_RunResumed{RunResumed: &weftv1.RunResumed{Status: runStatusOf(&ev.Data),
			RequestedBy: ev.Data.Actor}}
	},
	runstate.EvRunCompensating: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunCompensating{RunCompensating: &weftv1.RunCompensating{Status: runStatusOf(d),
			FailedActionId: d.FailedActionID, CompensationOrder: d.CompensationOrder, CancelRequested: d.CancelRequested}}
	},
	runstate.EvSearchAttributesUpserted: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_SearchAttributesUpserted{SearchAttributesUpserted: &weftv1.SearchAttributesUpserted{
			Attributes: SearchAttributes(ev.Data.Attributes)}}
	},
	runstate.EvRunRerun: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunRerun{RunRerun: &weftv1.RunRerun{Status: runStatusOf(d),
			FromStep: d.RerunFrom, Reopened: d.Reopened, RequestedBy: d.Actor, Reason: d.Reason}}
	},
	runstate.EvRunCompleted: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_RunCompleted{RunCompleted: &weftv1.RunCompleted{Status: runStatusOf(&ev.Data),
			CompletedAt: Timestamp(ev.Data.CompletedAt)}}
	},
	runstate.EvRunFailed: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunFailed{RunFailed: &weftv1.RunFailed{Status: runStatusOf(d),
			Error: RunError(d.RunError), CompensationOutcome: CompensationOutcomes.Proto(d.CompensationOutcome),
			CompletedAt: Timestamp(d.CompletedAt)}}
	},
	runstate.EvRunCancelled: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_RunCancelled{RunCancelled: &weftv1.RunCancelled{Status: runStatusOf(d),
			Cancellation: Cancellation(d.Cancellation), CompletedAt: Timestamp(d.CompletedAt),
			CompensationOutcome: CompensationOutcomes.Proto(d.CompensationOutcome)}}
	},
}

// stepPayloads fill the payloads of step-level and compensation events.
var stepPayloads = map[string]payloadFiller{
	runstate.EvStepScheduled: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepScheduled{StepScheduled: &weftv1.StepScheduled{Status: stepStatusOf(d),
			TaskId: d.TaskID, Queue: d.Queue, NotBefore: Timestamp(d.NotBefore), Input: JSONValue(d.Input)}}
	},
	runstate.EvStepSleeping: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepSleeping{StepSleeping: &weftv1.StepSleeping{Status: stepStatusOf(d),
			StartedAt: Timestamp(d.StartedAt), WakeAt: Timestamp(d.WakeAt)}}
	},
	runstate.EvStepIterated: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepIterated{StepIterated: &weftv1.StepIterated{Status: stepStatusOf(d),
			Iteration: uint32(max(d.Iteration, 0)), Output: JSONValue(d.Output), NewLogicalAttemptId: uint32(max(d.NewLogicalAttempt, 0))}}
	},
	runstate.EvStepStarted: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepStarted{StepStarted: &weftv1.StepStarted{Status: stepStatusOf(d),
			WorkerId: d.WorkerID, StartedAt: Timestamp(d.StartedAt)}}
	},
	runstate.EvStepCompleted: func(ev *runstate.Event, out *weftv1.Event) {
		fillStepCompleted(ev, out, JSONValue(ev.Data.Output))
	},
	runstate.EvStepFannedOut: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepFannedOut{StepFannedOut: &weftv1.StepFannedOut{Status: stepStatusOf(d),
			StartedAt: Timestamp(d.StartedAt), ItemCount: uint32(max(d.ItemCount, 0)), MaxConcurrency: uint32(max(d.MaxConcurrency, 0))}}
	},
	runstate.EvChildRunStarted: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_ChildRunStarted{ChildRunStarted: &weftv1.ChildRunStarted{Status: stepStatusOf(d),
			ChildRunId: d.ChildRunID, StartedAt: Timestamp(d.StartedAt)}}
	},
	runstate.EvChildRunEnded: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_ChildRunEnded{ChildRunEnded: &weftv1.ChildRunEnded{Status: runStatusOf(d),
			ChildRunId: d.ChildRunID, CompletedAt: Timestamp(d.CompletedAt)}}
	},
	runstate.EvStepFailed: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepFailed{StepFailed: &weftv1.StepFailed{Status: stepStatusOf(d),
			Error: StepError(d.Error), CompletedAt: Timestamp(d.CompletedAt), WillRetry: d.WillRetry,
			NextAttemptAt: Timestamp(d.NextAttemptAt), Output: JSONValue(d.Output)}}
	},
	runstate.EvStepSkipped: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_StepSkipped{StepSkipped: &weftv1.StepSkipped{Status: stepStatusOf(&ev.Data),
			Reason: ev.Data.Reason}}
	},
	runstate.EvStepCancelled: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_StepCancelled{StepCancelled: &weftv1.StepCancelled{Status: stepStatusOf(&ev.Data),
			Reason: ev.Data.Reason}}
	},
	runstate.EvStepWaiting: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepWaiting{StepWaiting: &weftv1.StepWaiting{Status: stepStatusOf(d),
			CompletionToken: d.CompletionToken, SignalName: d.SignalName, Deadline: Timestamp(d.Deadline)}}
	},
	runstate.EvStepRetried: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		out.Payload = &weftv1.Event_StepRetried{StepRetried: &weftv1.StepRetried{Status: stepStatusOf(d),
			NewLogicalAttemptId: uint32(max(d.NewLogicalAttempt, 0)), RequestedBy: d.Actor, Rerun: d.Rerun}}
	},
	runstate.EvStepAttemptRecorded: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_StepAttemptRecorded{StepAttemptRecorded: &weftv1.StepAttemptRecorded{
			Attempt: Attempt(ev.Data.Attempt), CorrelationId: ev.Data.CorrelationID}}
	},
	// EventData has no verify state or reconciliation key yet (the engine
	// emits no StepVerified); the payload carries the diagnostic only.
	runstate.EvStepVerified: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_StepVerified{StepVerified: &weftv1.StepVerified{
			VerifyState: VerifyStates.Proto(runstate.VerifyState(ev.Data.VerifyState)), ReconciliationKey: ev.Data.ReconciliationKey,
			Diagnostic: ev.Data.Reason}}
	},
	runstate.EvCompensationStarted: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_CompensationStarted{CompensationStarted: &weftv1.CompensationStarted{
			Operation: ev.Data.Operation, IdempotencyKey: ev.Data.OperationKey, Input: JSONValue(ev.Data.Input)}}
	},
	runstate.EvCompensationSucceeded: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_CompensationSucceeded{CompensationSucceeded: &weftv1.CompensationSucceeded{
			CompletedAt: Timestamp(ev.Data.CompletedAt)}}
	},
	runstate.EvCompensationFailed: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_CompensationFailed{CompensationFailed: &weftv1.CompensationFailed{
			Error: StepError(ev.Data.Error), CompletedAt: Timestamp(ev.Data.CompletedAt)}}
	},
}

// signalPayloads fill the payloads of signal events.
var signalPayloads = map[string]payloadFiller{
	runstate.EvSignalAccepted: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		p := &weftv1.SignalAccepted{Kind: SignalKinds.Proto(d.SignalKind), Actor: d.Actor, Compensate: d.Compensate}
		if d.SignalKind == runstate.SignalManual {
			p.ManualCompletion = StepManual(runstate.ManualResultOf(*ev))
			p.Actor = sender(d)
		} else {
			p.Result = &weftv1.AcceptedSignalResult{Accepted: true, RunId: ev.RunID, SignalName: d.SignalName,
				SignalId: d.SignalID, AcceptedAt: Timestamp(d.AcceptedAt), SignalStorageKey: d.SignalStorageKey}
		}
		out.Payload = &weftv1.Event_SignalAccepted{SignalAccepted: p}
	},
	runstate.EvSignalRejected: func(ev *runstate.Event, out *weftv1.Event) {
		d := &ev.Data
		r := &weftv1.SignalRejected{Kind: SignalKinds.Proto(d.SignalKind), SignalName: d.SignalName, SignalId: d.SignalID,
			Actor: d.Actor, Reason: d.Reason}
		if d.SignalKind == runstate.SignalManual {
			r.Actor, r.ActorUserId = sender(d), d.Actor
		}
		out.Payload = &weftv1.Event_SignalRejected{SignalRejected: r}
	},
	runstate.EvSignalConsumed: func(ev *runstate.Event, out *weftv1.Event) {
		out.Payload = &weftv1.Event_SignalConsumed{SignalConsumed: &weftv1.SignalConsumed{
			SignalName: ev.Data.SignalName, SignalId: ev.Data.SignalID}}
	},
}

// sender names who sent a manual completion: the authenticated principal, or
// the declared actor on a server that authenticates nobody (a manual
// completion's event data keeps the declared actor in Actor).
func sender(d *runstate.EventData) string {
	if d.Principal != "" {
		return d.Principal
	}
	return d.Actor
}

// fillStepCompleted fills a StepCompleted payload with the output given.
func fillStepCompleted(ev *runstate.Event, out *weftv1.Event, output *structpb.Value) {
	d := &ev.Data
	out.Payload = &weftv1.Event_StepCompleted{StepCompleted: &weftv1.StepCompleted{Status: stepStatusOf(d),
		Output: output, Artifacts: Artifacts(d.Artifacts), CompletedAt: Timestamp(d.CompletedAt),
		Source: d.Source}}
}
