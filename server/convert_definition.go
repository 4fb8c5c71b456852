package server

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// definitionOf converts an API definition to the engine's. Durations are
// milliseconds, unset optional fields stay zero (the engine's "unset"), and
// UNSPECIFIED enums become "". The only failure is an unrepresentable JSON
// value, reported as an invalid-argument violation under path.
func definitionOf(d *weftv1.WorkflowDefinition, path string) (definition.Definition, error) {
	out := definition.Definition{
		PlanID:            d.GetPlanId(),
		PlanVersion:       d.GetPlanVersion(),
		Timeout:           msOf(d.TimeoutMs),
		Backpressure:      backpressureModes.Engine(d.GetBackpressure()),
		MaxConcurrentRuns: int(d.GetMaxConcurrentRuns()),
		RequiresApproval:  d.GetRequiresApproval(),
		DAG:               d.GetDag(),
		DisplayName:       d.GetDisplayName(),
		ResultActionID:    d.GetResultActionId(),
		Retention:         ms64Of(d.RetentionMs),
	}
	for i, a := range d.GetActions() {
		action, err := actionOf(a, fmt.Sprintf("%s.actions[%d]", path, i))
		if err != nil {
			return definition.Definition{}, err
		}
		out.Actions = append(out.Actions, action)
	}
	return out, nil
}

func actionOf(a *weftv1.Action, path string) (definition.Action, error) {
	input, err := jsonField(a.GetInput(), path+".input")
	if err != nil {
		return definition.Action{}, err
	}
	out := definition.Action{
		ID:                     a.GetId(),
		Order:                  int(a.GetOrder()),
		Activity:               a.GetActivity(),
		Queue:                  a.GetQueue(),
		DependsOn:              a.GetDependsOn(),
		Input:                  input,
		Retry:                  retryOf(a.GetRetry()),
		Timeout:                msOf(a.TimeoutMs),
		HeartbeatTimeout:       msOf(a.HeartbeatTimeoutMs),
		ScheduleToStartTimeout: msOf(a.ScheduleToStartTimeoutMs),
		OnFailure:              onFailures.Engine(a.GetOnFailure()),
		Completion:             completionModes.Engine(a.GetCompletionMode()),
		ManualTimeout:          msOf(a.ManualTimeoutMs),
		Secrets:                secretsOf(a.GetSecrets()),
	}
	if w := a.GetWaitForSignal(); w != nil {
		out.WaitForSignal = &definition.SignalWait{SignalName: w.GetSignalName(), Timeout: msOf(w.TimeoutMs)}
	}
	if h := a.GetCompensation(); h != nil {
		if out.Compensation, err = hookOf(h, path+".compensation"); err != nil {
			return definition.Action{}, err
		}
	}
	return out, nil
}

func hookOf(h *weftv1.CompensationHook, path string) (*definition.CompensationHook, error) {
	input, err := jsonField(h.GetInput(), path+".input")
	if err != nil {
		return nil, err
	}
	return &definition.CompensationHook{Operation: h.GetOperation(), Input: input, Timeout: msOf(h.TimeoutMs),
		Retry: retryOf(h.GetRetry()), Queue: h.GetQueue()}, nil
}

func retryOf(r *weftv1.RetryPolicy) definition.RetryPolicy {
	if r == nil {
		return definition.RetryPolicy{}
	}
	out := definition.RetryPolicy{
		MaxAttempts:    int(r.GetMaxAttempts()),
		Strategy:       backoffStrategies.Engine(r.GetStrategy()),
		InitialBackoff: msOf(r.InitialBackoffMs),
		Multiplier:     r.GetBackoffMultiplier(),
		MaxBackoff:     msOf(r.MaxBackoffMs),
	}
	for _, c := range r.GetRetryableErrors() {
		out.RetryableErrors = append(out.RetryableErrors, errorClasses.Engine(c))
	}
	return out
}

func secretsOf(in []*weftv1.SecretRef) []definition.SecretRef {
	var out []definition.SecretRef
	for _, s := range in {
		out = append(out, definition.SecretRef{Name: s.GetName(), Ref: s.GetRef()})
	}
	return out
}

// msOf converts optional milliseconds; unset is the zero Duration.
func msOf(ms *uint32) definition.Duration {
	if ms == nil {
		return 0
	}
	return definition.Ms(int64(*ms))
}

// ms64Of converts an optional 64-bit millisecond field; unset is zero.
func ms64Of(ms *uint64) definition.Duration {
	if ms == nil {
		return 0
	}
	return definition.Ms(int64(min(*ms, uint64(definition.MaxRetention.Milliseconds()+1))))
}

// jsonField converts a request's JSON value, naming path when it cannot.
func jsonField(v *structpb.Value, path string) (json.RawMessage, error) {
	raw, err := rawJSON(v)
	if err != nil {
		return nil, &engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid request",
			Violations: []engine.FieldViolation{{Field: path, Rule: "value.json", Message: err.Error()}}}
	}
	return raw, nil
}
