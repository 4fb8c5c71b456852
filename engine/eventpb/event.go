package eventpb

import (
	"maps"

	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// Event converts an event: the envelope of docs/semantics.md#events plus the typed payload
// its event_type names. An event type this server does not know keeps its
// envelope and has no payload, so consumers advance their watermark past it
// (docs/semantics.md); conversion never fails.
func Event(ev *runstate.Event) *weftv1.Event {
	out := &weftv1.Event{
		EventType:        ev.Type,
		EventId:          ev.ID,
		RunId:            ev.RunID,
		RunSeq:           ev.Seq,
		IdempotencyKey:   ev.IdempotencyKey,
		EmittedAt:        Timestamp(ev.EmittedAt),
		OccurredAt:       Timestamp(ev.OccurredAt),
		EmittedBy:        ev.EmittedBy,
		StepId:           ev.StepID,
		LogicalAttemptId: uint32(max(ev.LogicalAttempt, 0)),
		PlanVersion:      ev.PlanVersion,
	}
	if ev.EngineAttempt > 0 {
		n := uint32(ev.EngineAttempt)
		out.EngineAttemptId = &n
	}
	if fill, ok := payloads[ev.Type]; ok {
		fill(ev, out)
	}
	return out
}

// payloadFiller sets the typed payload of one event type.
type payloadFiller func(ev *runstate.Event, out *weftv1.Event)

// payloads has one filler per event type in engine/runstate/events.go; a test keeps
// the table and the oneof in step.
var payloads = map[string]payloadFiller{}

func init() {
	maps.Copy(payloads, runPayloads)
	maps.Copy(payloads, stepPayloads)
	maps.Copy(payloads, signalPayloads)
}

func runStatusOf(d *runstate.EventData) weftv1.RunStatus {
	return RunStatuses.Proto(runstate.RunStatus(d.Status))
}

func stepStatusOf(d *runstate.EventData) weftv1.StepStatus {
	return StepStatuses.Proto(runstate.StepStatus(d.Status))
}

// planRef names the definition a run executes.
func planRef(ev *runstate.Event) *weftv1.PlanRef {
	if ev.Data.PlanSHA256 == "" {
		return nil
	}
	return &weftv1.PlanRef{Uri: "weft://runs/" + ev.RunID + "/definition", Sha256: ev.Data.PlanSHA256,
		SchemaVersion: "v1", PlanId: ev.Data.PlanID, PlanVersion: ev.PlanVersion}
}

func runContextProto(c *runstate.RunContext) *weftv1.RunContext {
	if c == nil {
		return nil
	}
	return &weftv1.RunContext{TenantId: c.TenantID, ProjectId: c.ProjectID, EnvironmentId: c.EnvironmentID,
		TriggeredBy: c.TriggeredBy, TriggerSource: c.TriggerSource}
}
