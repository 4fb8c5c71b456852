package server

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
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

var backoffStrategies = eventpb.NewEnumTable(map[weftv1.BackoffStrategy]definition.BackoffStrategy{
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT:    definition.BackoffConstant,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_LINEAR:      definition.BackoffLinear,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_EXPONENTIAL: definition.BackoffExponential,
})

var onFailures = eventpb.NewEnumTable(map[weftv1.OnFailure]definition.OnFailure{
	weftv1.OnFailure_ON_FAILURE_ABORT:      definition.OnFailureAbort,
	weftv1.OnFailure_ON_FAILURE_SKIP:       definition.OnFailureSkip,
	weftv1.OnFailure_ON_FAILURE_COMPENSATE: definition.OnFailureCompensate,
	weftv1.OnFailure_ON_FAILURE_HOLD:       definition.OnFailureHold,
})

var completionModes = eventpb.NewEnumTable(map[weftv1.CompletionMode]definition.CompletionMode{
	weftv1.CompletionMode_COMPLETION_MODE_AUTOMATED: definition.CompletionAutomated,
	weftv1.CompletionMode_COMPLETION_MODE_MANUAL:    definition.CompletionManual,
})

var backpressureModes = eventpb.NewEnumTable(map[weftv1.BackpressureMode]definition.BackpressureMode{
	weftv1.BackpressureMode_BACKPRESSURE_MODE_REJECT: definition.BackpressureReject,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_QUEUE:  definition.BackpressureQueue,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_DELAY:  definition.BackpressureDelay,
})

var taskTypes = eventpb.NewEnumTable(map[weftv1.TaskType]engine.TaskKind{
	weftv1.TaskType_TASK_TYPE_ACTIVITY:     engine.TaskActivity,
	weftv1.TaskType_TASK_TYPE_VERIFY:       engine.TaskVerify,
	weftv1.TaskType_TASK_TYPE_COMPENSATION: engine.TaskCompensation,
})
