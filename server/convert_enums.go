package server

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// The tables of run state and events are eventpb's own, so that the API
// serves a value exactly as the engine's event validation converted it; the
// definition's and the worker API's tables below are built the same way.
var (
	errorClasses         = eventpb.ErrorClasses
	verifyStates         = eventpb.VerifyStates
	runStatuses          = eventpb.RunStatuses
	runSubstatuses       = eventpb.RunSubstatuses
	stepStatuses         = eventpb.StepStatuses
	compensationStatuses = eventpb.CompensationStatuses
	compensationOutcomes = eventpb.CompensationOutcomes
	attemptOutcomes      = eventpb.AttemptOutcomes
	signalKinds          = eventpb.SignalKinds
	manualOutcomes       = eventpb.ManualOutcomes
)

// The definition's tables are eventpb's, shared with its conversion.
var (
	backoffStrategies = eventpb.BackoffStrategies
	onFailures        = eventpb.OnFailures
	completionModes   = eventpb.CompletionModes
	backpressureModes = eventpb.BackpressureModes
)

var taskTypes = eventpb.NewEnumTable(map[weftv1.TaskType]engine.TaskKind{
	weftv1.TaskType_TASK_TYPE_ACTIVITY:     engine.TaskActivity,
	weftv1.TaskType_TASK_TYPE_VERIFY:       engine.TaskVerify,
	weftv1.TaskType_TASK_TYPE_COMPENSATION: engine.TaskCompensation,
})
