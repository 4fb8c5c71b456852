package server

import (
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// definitionProto converts the engine's definition back to the API's. Zero
// values become unset optional fields and "" enums UNSPECIFIED, so a
// definition round-trips unless it set a field to the engine's "unset" value
// (docs/semantics.md: an explicit initial_backoff_ms 0 is not expressible).
// The engine's DAG flag has no API field: definitions read from YAML
// (docs/semantics.md#dag-shape) lose it here.
func definitionProto(d definition.Definition) *weftv1.WorkflowDefinition {
	if d.PlanID == "" && len(d.Actions) == 0 {
		return nil // ListRuns leaves the definition out
	}
	out := &weftv1.WorkflowDefinition{
		PlanId:            d.PlanID,
		PlanVersion:       d.PlanVersion,
		TimeoutMs:         msProto(d.Timeout),
		Backpressure:      backpressureModes.Proto(d.Backpressure),
		MaxConcurrentRuns: optUint32(d.MaxConcurrentRuns),
		RequiresApproval:  d.RequiresApproval,
		Dag:               d.DAG,
		DisplayName:       d.DisplayName,
		ResultActionId:    d.ResultActionID,
		RetentionMs:       ms64Proto(d.Retention),
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
		Input:                    eventpb.JSONValue(a.Input),
		Retry:                    retryProto(a.Retry),
		TimeoutMs:                msProto(a.Timeout),
		HeartbeatTimeoutMs:       msProto(a.HeartbeatTimeout),
		ScheduleToStartTimeoutMs: msProto(a.ScheduleToStartTimeout),
		OnFailure:                onFailures.Proto(a.OnFailure),
		CompletionMode:           completionModes.Proto(a.Completion),
		ManualTimeoutMs:          msProto(a.ManualTimeout),
		Secrets:                  secretsProto(a.Secrets),
	}
	if w := a.WaitForSignal; w != nil {
		out.WaitForSignal = &weftv1.WaitForSignal{SignalName: w.SignalName, TimeoutMs: msProto(w.Timeout)}
	}
	if h := a.Compensation; h != nil {
		out.Compensation = &weftv1.CompensationHook{Operation: h.Operation, Input: eventpb.JSONValue(h.Input),
			TimeoutMs: msProto(h.Timeout), Retry: retryProto(h.Retry), Queue: h.Queue}
	}
	return out
}

// retryProto answers nil for an all-unset policy, without allocating one.
func retryProto(r definition.RetryPolicy) *weftv1.RetryPolicy {
	maxAttempts, strategy := optUint32(r.MaxAttempts), backoffStrategies.Proto(r.Strategy)
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
			out.RetryableErrors[i] = errorClasses.Proto(c)
		}
	}
	return out
}

func secretsProto(in []definition.SecretRef) []*weftv1.SecretRef {
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
