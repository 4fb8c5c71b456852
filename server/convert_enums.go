package server

import (
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// enumTable is an eventpb.EnumTable as the server's conversions call it.
// The tables of run state and events are eventpb's own, so that the API
// serves a value exactly as the engine's event validation converted it; the
// definition's and the worker API's tables are built here the same way.
type enumTable[P ~int32, E ~string] struct{ eventpb.EnumTable[P, E] }

// newEnumTable builds a table from proto → engine pairs.
func newEnumTable[P ~int32, E ~string](pairs map[P]E) enumTable[P, E] {
	return enumTable[P, E]{eventpb.NewEnumTable(pairs)}
}

// engine answers the engine value of p, or "" for UNSPECIFIED and unknown values.
func (t enumTable[P, E]) engine(p P) E { return t.Engine(p) }

// proto answers the proto value of e, or UNSPECIFIED for "" and unknown values.
func (t enumTable[P, E]) proto(e E) P { return t.Proto(e) }

// shared answers one of eventpb's tables as the server calls it.
func shared[P ~int32, E ~string](t eventpb.EnumTable[P, E]) enumTable[P, E] {
	return enumTable[P, E]{t}
}

// The tables of run state, events and worker reports, from eventpb.
var (
	errorClasses         = shared(eventpb.ErrorClasses)
	verifyStates         = shared(eventpb.VerifyStates)
	runStatuses          = shared(eventpb.RunStatuses)
	runSubstatuses       = shared(eventpb.RunSubstatuses)
	stepStatuses         = shared(eventpb.StepStatuses)
	compensationStatuses = shared(eventpb.CompensationStatuses)
	compensationOutcomes = shared(eventpb.CompensationOutcomes)
	attemptOutcomes      = shared(eventpb.AttemptOutcomes)
	signalKinds          = shared(eventpb.SignalKinds)
	manualOutcomes       = shared(eventpb.ManualOutcomes)
)

var backoffStrategies = newEnumTable(map[weftv1.BackoffStrategy]definition.BackoffStrategy{
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT:    definition.BackoffConstant,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_LINEAR:      definition.BackoffLinear,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_EXPONENTIAL: definition.BackoffExponential,
})

var onFailures = newEnumTable(map[weftv1.OnFailure]definition.OnFailure{
	weftv1.OnFailure_ON_FAILURE_ABORT:      definition.OnFailureAbort,
	weftv1.OnFailure_ON_FAILURE_SKIP:       definition.OnFailureSkip,
	weftv1.OnFailure_ON_FAILURE_COMPENSATE: definition.OnFailureCompensate,
	weftv1.OnFailure_ON_FAILURE_HOLD:       definition.OnFailureHold,
})

var completionModes = newEnumTable(map[weftv1.CompletionMode]definition.CompletionMode{
	weftv1.CompletionMode_COMPLETION_MODE_AUTOMATED: definition.CompletionAutomated,
	weftv1.CompletionMode_COMPLETION_MODE_MANUAL:    definition.CompletionManual,
})

var backpressureModes = newEnumTable(map[weftv1.BackpressureMode]definition.BackpressureMode{
	weftv1.BackpressureMode_BACKPRESSURE_MODE_REJECT: definition.BackpressureReject,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_QUEUE:  definition.BackpressureQueue,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_DELAY:  definition.BackpressureDelay,
})

var taskTypes = newEnumTable(map[weftv1.TaskType]engine.TaskKind{
	weftv1.TaskType_TASK_TYPE_ACTIVITY:     engine.TaskActivity,
	weftv1.TaskType_TASK_TYPE_VERIFY:       engine.TaskVerify,
	weftv1.TaskType_TASK_TYPE_COMPENSATION: engine.TaskCompensation,
})
