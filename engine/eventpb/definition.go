package eventpb

import (
	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"maps"
)

// BackoffStrategies maps a retry policy's backoff strategies.
var BackoffStrategies = NewEnumTable(map[weftv1.BackoffStrategy]definition.BackoffStrategy{
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_CONSTANT:    definition.BackoffConstant,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_LINEAR:      definition.BackoffLinear,
	weftv1.BackoffStrategy_BACKOFF_STRATEGY_EXPONENTIAL: definition.BackoffExponential,
})

// OnFailures maps an action's on_failure policies.
var OnFailures = NewEnumTable(map[weftv1.OnFailure]definition.OnFailure{
	weftv1.OnFailure_ON_FAILURE_ABORT:      definition.OnFailureAbort,
	weftv1.OnFailure_ON_FAILURE_SKIP:       definition.OnFailureSkip,
	weftv1.OnFailure_ON_FAILURE_COMPENSATE: definition.OnFailureCompensate,
	weftv1.OnFailure_ON_FAILURE_HOLD:       definition.OnFailureHold,
})

// CompletionModes maps an action's completion modes.
var CompletionModes = NewEnumTable(map[weftv1.CompletionMode]definition.CompletionMode{
	weftv1.CompletionMode_COMPLETION_MODE_AUTOMATED: definition.CompletionAutomated,
	weftv1.CompletionMode_COMPLETION_MODE_MANUAL:    definition.CompletionManual,
})

// BackpressureModes maps a definition's backpressure modes.
var BackpressureModes = NewEnumTable(map[weftv1.BackpressureMode]definition.BackpressureMode{
	weftv1.BackpressureMode_BACKPRESSURE_MODE_REJECT: definition.BackpressureReject,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_QUEUE:  definition.BackpressureQueue,
	weftv1.BackpressureMode_BACKPRESSURE_MODE_DELAY:  definition.BackpressureDelay,
})

// ConcurrencyStrategies maps a run concurrency's strategies.
var ConcurrencyStrategies = NewEnumTable(map[weftv1.ConcurrencyStrategy]definition.ConcurrencyStrategy{
	weftv1.ConcurrencyStrategy_CONCURRENCY_STRATEGY_QUEUE:              definition.StrategyQueue,
	weftv1.ConcurrencyStrategy_CONCURRENCY_STRATEGY_CANCEL_NEWEST:      definition.StrategyCancelNewest,
	weftv1.ConcurrencyStrategy_CONCURRENCY_STRATEGY_CANCEL_IN_PROGRESS: definition.StrategyCancelInProgress,
})

// DefinitionProto converts the engine's definition back to the API's. Zero
// values become unset optional fields and "" enums UNSPECIFIED, so a
// definition round-trips unless it set a field to the engine's "unset" value
// (docs/semantics.md: an explicit initial_backoff_ms 0 is not expressible).
// It answers nil for an empty definition (ListRuns leaves the definition
// out). The server answers runs and schedules with it, and cmd/weft sends a
// definition read from YAML with it.
func DefinitionProto(d definition.Definition) *weftv1.WorkflowDefinition {
	if d.PlanID == "" && len(d.Actions) == 0 {
		return nil
	}
	out := &weftv1.WorkflowDefinition{
		PlanId:            d.PlanID,
		PlanVersion:       d.PlanVersion,
		TimeoutMs:         msProto(d.Timeout),
		Backpressure:      BackpressureModes.Proto(d.Backpressure),
		MaxConcurrentRuns: optUint32(d.MaxConcurrentRuns),
		Priority:          optUint32(d.Priority),
		RequiresApproval:  d.RequiresApproval,
		Dag:               d.DAG,
		DisplayName:       d.DisplayName,
		ResultActionId:    d.ResultActionID,
		RetentionMs:       ms64Proto(d.Retention),
		SearchAttributes:  maps.Clone(d.SearchAttributes),
		Fairness:          fairnessProto(d.Fairness),
	}
	if c := d.Concurrency; c != nil {
		out.Concurrency = &weftv1.RunConcurrency{Key: c.Key, Limit: clampUint32(c.Limit), Strategy: ConcurrencyStrategies.Proto(c.Strategy)}
	}
	if len(d.Actions) > 0 {
		// The actions' messages are allocated in one block.
		actions := make([]weftv1.Action, len(d.Actions))
		out.Actions = make([]*weftv1.Action, len(d.Actions))
		for i := range d.Actions {
			out.Actions[i] = actionProto(&d.Actions[i], &actions[i])
		}
	}
	return out
}

// actionProto converts an action into out.
func actionProto(a *definition.Action, out *weftv1.Action) *weftv1.Action {
	*out = weftv1.Action{
		Id:                       a.ID,
		Order:                    uint32(a.Order),
		Activity:                 a.Activity,
		Queue:                    a.Queue,
		DependsOn:                a.DependsOn,
		Input:                    JSONValue(a.Input),
		Retry:                    RetryProto(a.Retry),
		TimeoutMs:                msProto(a.Timeout),
		HeartbeatTimeoutMs:       msProto(a.HeartbeatTimeout),
		ScheduleToStartTimeoutMs: msProto(a.ScheduleToStartTimeout),
		OnFailure:                OnFailures.Proto(a.OnFailure),
		CompletionMode:           CompletionModes.Proto(a.Completion),
		ManualTimeoutMs:          msProto(a.ManualTimeout),
		Secrets:                  SecretsProto(a.Secrets),
		When:                     a.When,
		SleepMs:                  msProto(a.Sleep),
		SleepUntil:               a.SleepUntil,
		ForEach:                  a.ForEach,
	}
	if a.MaxConcurrency != 0 {
		n := clampUint32(a.MaxConcurrency)
		out.MaxConcurrency = &n
	}
	if r := a.Repeat; r != nil {
		out.Repeat = &weftv1.StepRepeat{Until: r.Until, MaxIterations: uint32(max(r.MaxIterations, 0))}
	}
	if w := a.WaitForSignal; w != nil {
		out.WaitForSignal = &weftv1.WaitForSignal{SignalName: w.SignalName, TimeoutMs: msProto(w.Timeout)}
	}
	if c := a.Concurrency; c != nil {
		out.Concurrency = &weftv1.StepConcurrency{Key: c.Key, Limit: clampUint32(c.Limit), Scope: string(c.Scope)}
	}
	if t := a.Throttle; t != nil {
		out.Throttle = &weftv1.StepThrottle{Key: t.Key, Rate: t.Rate, Burst: clampUint32(t.Burst), Scope: string(t.Scope)}
	}
	out.Fairness = fairnessProto(a.Fairness)
	if h := a.Compensation; h != nil {
		out.Compensation = &weftv1.CompensationHook{Operation: h.Operation, Input: JSONValue(h.Input),
			TimeoutMs: msProto(h.Timeout), Retry: RetryProto(h.Retry), Queue: h.Queue}
	}
	if w := a.Workflow; w != nil {
		out.Workflow = SubWorkflowProto(w)
		out.ParentClose = ParentCloses.Proto(a.ParentClose)
	}
	return out
}

// ParentCloses maps the parent-close policies.
var ParentCloses = NewEnumTable(map[weftv1.ParentClose]definition.ParentClose{
	weftv1.ParentClose_PARENT_CLOSE_CANCEL:  definition.ParentCloseCancel,
	weftv1.ParentClose_PARENT_CLOSE_ABANDON: definition.ParentCloseAbandon,
})

// SubWorkflowProto converts a sub-workflow action's child.
func SubWorkflowProto(w *definition.SubWorkflow) *weftv1.SubWorkflow {
	out := &weftv1.SubWorkflow{PlanId: w.PlanID, PlanVersion: w.PlanVersion, Input: JSONValue(w.Input)}
	if w.Definition != nil {
		out.Definition = DefinitionProto(*w.Definition)
	}
	return out
}

// retryProto answers nil for an all-unset policy, without allocating one.
func RetryProto(r definition.RetryPolicy) *weftv1.RetryPolicy {
	maxAttempts, strategy := optUint32(r.MaxAttempts), BackoffStrategies.Proto(r.Strategy)
	initial, maxBackoff := msProto(r.InitialBackoff), msProto(r.MaxBackoff)
	if maxAttempts == nil && strategy == 0 && initial == nil && r.Multiplier == 0 && maxBackoff == nil && len(r.RetryableErrors) == 0 {
		return nil
	}
	out := &weftv1.RetryPolicy{MaxAttempts: maxAttempts, Strategy: strategy, InitialBackoffMs: initial, MaxBackoffMs: maxBackoff}
	if r.Multiplier != 0 {
		m := r.Multiplier
		out.BackoffMultiplier = &m
	}
	if len(r.RetryableErrors) > 0 {
		out.RetryableErrors = make([]weftv1.ErrorClass, len(r.RetryableErrors))
		for i, c := range r.RetryableErrors {
			out.RetryableErrors[i] = ErrorClasses.Proto(c)
		}
	}
	return out
}

// SecretsProto converts an action's secret references.
func SecretsProto(in []definition.SecretRef) []*weftv1.SecretRef {
	var out []*weftv1.SecretRef
	for _, s := range in {
		out = append(out, &weftv1.SecretRef{Name: s.Name, Ref: s.Ref})
	}
	return out
}

// msProto answers a duration as optional milliseconds; zero is unset.
func msProto(d definition.Duration) *uint32 {
	return optUint32(int(d.Milliseconds()))
}

// ms64Proto answers a duration as an optional 64-bit millisecond field;
// zero is unset.
func ms64Proto(d definition.Duration) *uint64 {
	if d <= 0 {
		return nil
	}
	v := uint64(d.Milliseconds())
	return &v
}

// optUint32 answers n as an optional field; zero (or less) is unset.
func optUint32(n int) *uint32 {
	if n <= 0 {
		return nil
	}
	v := uint32(n)
	return &v
}

// clampUint32 answers n as a uint32, negative ones as 0 (a value the
// proto's rules then refuse, as the definition's would).
func clampUint32(n int) uint32 {
	if n < 0 {
		return 0
	}
	return uint32(min(n, 1<<32-1))
}

// fairnessProto converts a fairness setting (nil: none).
func fairnessProto(f *definition.Fairness) *weftv1.Fairness {
	if f == nil {
		return nil
	}
	return &weftv1.Fairness{Key: f.Key, Weight: f.Weight}
}
