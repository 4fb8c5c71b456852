package eventpb

import (
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/engine/runstate"
)

// fieldReaders read the ruled fields of the proto Event and of the messages
// it holds on the runstate.Event they are converted from (event.go,
// payloads.go, state.go), by the proto field's full name: what Check binds
// the compiled rules to. Only fields with rules (or holding a message with
// rules) need one. A reader reads a field exactly as the conversion sets
// it; TestCheck_PassesExactlyTheEventsValidatePasses holds the two
// together.
var fieldReaders = map[protoreflect.FullName]fieldReader{
	// The envelope (Event).
	"weft.v1.Event.event_type": str(func(ev *runstate.Event, _ int) string { return ev.Type }),
	"weft.v1.Event.event_id":   str(func(ev *runstate.Event, _ int) string { return ev.ID }),
	"weft.v1.Event.run_id":     str(func(ev *runstate.Event, _ int) string { return ev.RunID }),
	"weft.v1.Event.run_seq": {value: func(ev *runstate.Event, _ int) (protoreflect.Value, bool) {
		return protoreflect.ValueOfUint64(ev.Seq), ev.Seq != 0
	}},
	"weft.v1.Event.idempotency_key":    str(func(ev *runstate.Event, _ int) string { return ev.IdempotencyKey }),
	"weft.v1.Event.emitted_at":         timestamp(func(ev *runstate.Event) time.Time { return ev.EmittedAt }),
	"weft.v1.Event.occurred_at":        timestamp(func(ev *runstate.Event) time.Time { return ev.OccurredAt }),
	"weft.v1.Event.emitted_by":         str(func(ev *runstate.Event, _ int) string { return ev.EmittedBy }),
	"weft.v1.Event.step_id":            str(func(ev *runstate.Event, _ int) string { return ev.StepID }),
	"weft.v1.Event.logical_attempt_id": uint32Of(func(ev *runstate.Event) int { return ev.LogicalAttempt }),
	"weft.v1.Event.engine_attempt_id":  uint32Of(func(ev *runstate.Event) int { return ev.EngineAttempt }),
	"weft.v1.Event.plan_version":       str(func(ev *runstate.Event, _ int) string { return ev.PlanVersion }),

	// The payloads' fields; a payload's status is read by its enum
	// (statusReaders). A PlanRef is set when the run's plan has a digest
	// (planRef).
	"weft.v1.RunSubmitted.plan_ref":        message(func(ev *runstate.Event) bool { return ev.Data.PlanSHA256 != "" }),
	"weft.v1.RunStarted.plan_ref":          message(func(ev *runstate.Event) bool { return ev.Data.PlanSHA256 != "" }),
	"weft.v1.PlanRef.sha256":               str(func(ev *runstate.Event, _ int) string { return ev.Data.PlanSHA256 }),
	"weft.v1.PlanRef.plan_id":              str(func(ev *runstate.Event, _ int) string { return ev.Data.PlanID }),
	"weft.v1.RunSubmitted.context":         message(func(ev *runstate.Event) bool { return ev.Data.Context != nil }),
	"weft.v1.RunStarted.context":           message(func(ev *runstate.Event) bool { return ev.Data.Context != nil }),
	"weft.v1.RunContext.tenant_id":         str(func(ev *runstate.Event, _ int) string { return ev.Data.Context.TenantID }),
	"weft.v1.RunStarted.started_at":        timestamp(func(ev *runstate.Event) time.Time { return ev.Data.StartedAt }),
	"weft.v1.StepStarted.started_at":       timestamp(func(ev *runstate.Event) time.Time { return ev.Data.StartedAt }),
	"weft.v1.ChildRunStarted.started_at":   timestamp(func(ev *runstate.Event) time.Time { return ev.Data.StartedAt }),
	"weft.v1.ChildRunStarted.child_run_id": str(func(ev *runstate.Event, _ int) string { return ev.Data.ChildRunID }),
	"weft.v1.ChildRunEnded.child_run_id":   str(func(ev *runstate.Event, _ int) string { return ev.Data.ChildRunID }),
	"weft.v1.RunCompleted.completed_at":    timestamp(func(ev *runstate.Event) time.Time { return ev.Data.CompletedAt }),
	"weft.v1.RunFailed.completed_at":       timestamp(func(ev *runstate.Event) time.Time { return ev.Data.CompletedAt }),
	"weft.v1.RunCancelled.completed_at":    timestamp(func(ev *runstate.Event) time.Time { return ev.Data.CompletedAt }),
	"weft.v1.StepCompleted.completed_at":   timestamp(func(ev *runstate.Event) time.Time { return ev.Data.CompletedAt }),
	"weft.v1.StepFailed.completed_at":      timestamp(func(ev *runstate.Event) time.Time { return ev.Data.CompletedAt }),
	"weft.v1.RunCancelled.compensation_outcome": enum(func(ev *runstate.Event) protoreflect.EnumNumber {
		return protoreflect.EnumNumber(CompensationOutcomes.Proto(ev.Data.CompensationOutcome))
	}),
	"weft.v1.RunRerun.from_step":                  str(func(ev *runstate.Event, _ int) string { return ev.Data.RerunFrom }),
	"weft.v1.StepScheduled.task_id":               str(func(ev *runstate.Event, _ int) string { return ev.Data.TaskID }),
	"weft.v1.StepFailed.error":                    message(func(ev *runstate.Event) bool { return ev.Data.Error != nil }),
	"weft.v1.StepRetried.new_logical_attempt_id":  uint32Of(func(ev *runstate.Event) int { return ev.Data.NewLogicalAttempt }),
	"weft.v1.StepSleeping.started_at":             timestamp(func(ev *runstate.Event) time.Time { return ev.Data.StartedAt }),
	"weft.v1.StepFannedOut.started_at":            timestamp(func(ev *runstate.Event) time.Time { return ev.Data.StartedAt }),
	"weft.v1.StepFannedOut.max_concurrency":       uint32Of(func(ev *runstate.Event) int { return ev.Data.MaxConcurrency }),
	"weft.v1.StepSleeping.wake_at":                timestamp(func(ev *runstate.Event) time.Time { return ev.Data.WakeAt }),
	"weft.v1.StepIterated.iteration":              uint32Of(func(ev *runstate.Event) int { return ev.Data.Iteration }),
	"weft.v1.StepIterated.new_logical_attempt_id": uint32Of(func(ev *runstate.Event) int { return ev.Data.NewLogicalAttempt }),
	"weft.v1.StepAttemptRecorded.attempt":         message(func(ev *runstate.Event) bool { return ev.Data.Attempt != nil }),
	"weft.v1.StepCompleted.artifacts":             {len: func(ev *runstate.Event) int { return len(ev.Data.Artifacts) }},
	"weft.v1.ArtifactRef.uri":                     str(func(ev *runstate.Event, i int) string { return ev.Data.Artifacts[i].URI }),
	"weft.v1.ArtifactRef.kind":                    str(func(ev *runstate.Event, i int) string { return ev.Data.Artifacts[i].Kind }),
	"weft.v1.ArtifactRef.sha256":                  str(func(ev *runstate.Event, i int) string { return ev.Data.Artifacts[i].SHA256 }),
}

// statusReaders read a payload's status field by its enum: every payload
// converts the event's status (runStatusOf, stepStatusOf).
var statusReaders = map[protoreflect.FullName]fieldReader{
	"weft.v1.RunStatus": enum(func(ev *runstate.Event) protoreflect.EnumNumber {
		return protoreflect.EnumNumber(runStatusOf(&ev.Data))
	}),
	"weft.v1.StepStatus": enum(func(ev *runstate.Event) protoreflect.EnumNumber {
		return protoreflect.EnumNumber(stepStatusOf(&ev.Data))
	}),
}

// readerFor answers the reader of field fd.
func readerFor(fd protoreflect.FieldDescriptor) (fieldReader, bool) {
	if r, ok := fieldReaders[fd.FullName()]; ok {
		return r, true
	}
	if fd.Name() == "status" && fd.Enum() != nil && !fd.IsList() && fd.ContainingMessage().FullName() != "weft.v1.Event" {
		r, ok := statusReaders[fd.Enum().FullName()]
		return r, ok
	}
	return fieldReader{}, false
}

func str(get func(ev *runstate.Event, item int) string) fieldReader {
	return fieldReader{value: func(ev *runstate.Event, item int) (protoreflect.Value, bool) {
		s := get(ev, item)
		return protoreflect.ValueOfString(s), s != ""
	}}
}

// uint32Of reads an int the conversion sets as a uint32, negative as 0.
func uint32Of(get func(ev *runstate.Event) int) fieldReader {
	return fieldReader{value: func(ev *runstate.Event, _ int) (protoreflect.Value, bool) {
		n := uint32(max(get(ev), 0))
		return protoreflect.ValueOfUint32(n), n != 0
	}}
}

func enum(get func(ev *runstate.Event) protoreflect.EnumNumber) fieldReader {
	return fieldReader{value: func(ev *runstate.Event, _ int) (protoreflect.Value, bool) {
		n := get(ev)
		return protoreflect.ValueOfEnum(n), n != 0
	}}
}

// timestamp reads a Timestamp the conversion sets when the time is not
// zero (Timestamp).
func timestamp(get func(ev *runstate.Event) time.Time) fieldReader {
	return message(func(ev *runstate.Event) bool { return !get(ev).IsZero() })
}

// message reads whether a message field is set.
func message(set func(ev *runstate.Event) bool) fieldReader {
	return fieldReader{value: func(ev *runstate.Event, _ int) (protoreflect.Value, bool) { return protoreflect.Value{}, set(ev) }}
}
