package server

import (
	"encoding/json"
	"fmt"
	"maps"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
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
		Priority:          int(d.GetPriority()),
		RequiresApproval:  d.GetRequiresApproval(),
		DAG:               d.GetDag(),
		DisplayName:       d.GetDisplayName(),
		ResultActionID:    d.GetResultActionId(),
		Retention:         ms64Of(d.RetentionMs),
		SearchAttributes:  maps.Clone(d.GetSearchAttributes()),
		Fairness:          fairnessOf(d.GetFairness()),
	}
	if c := d.GetConcurrency(); c != nil {
		out.Concurrency = &definition.RunConcurrency{Key: c.GetKey(), Limit: int(c.GetLimit()), Strategy: eventpb.ConcurrencyStrategies.Engine(c.GetStrategy())}
	}
	if actions := d.GetActions(); len(actions) > 0 {
		out.Actions = make([]definition.Action, len(actions))
		for i, a := range actions {
			// The path is built only for an error: most definitions convert.
			if err := actionOf(a, &out.Actions[i], func() string { return fmt.Sprintf("%s.actions[%d]", path, i) }); err != nil {
				return definition.Definition{}, err
			}
		}
	}
	return out, nil
}

// actionOf converts an API action into out; path names it for an error.
func actionOf(a *weftv1.Action, out *definition.Action, path func() string) error {
	input, err := rawJSON(a.GetInput())
	if err != nil {
		return jsonFieldError(path()+".input", err)
	}
	*out = definition.Action{
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
		When:                   a.GetWhen(),
		Sleep:                  msOf(a.SleepMs),
		SleepUntil:             a.GetSleepUntil(),
		ForEach:                a.GetForEach(),
		MaxConcurrency:         int(min(a.GetMaxConcurrency(), definition.MaxMaxConcurrency+1)),
	}
	if r := a.GetRepeat(); r != nil {
		out.Repeat = &definition.Repeat{Until: r.GetUntil(), MaxIterations: int(r.GetMaxIterations())}
	}
	if c := a.GetConcurrency(); c != nil {
		out.Concurrency = &definition.StepConcurrency{Key: c.GetKey(), Limit: int(c.GetLimit()), Scope: definition.FlowScope(c.GetScope())}
	}
	if t := a.GetThrottle(); t != nil {
		out.Throttle = &definition.StepThrottle{Key: t.GetKey(), Rate: t.GetRate(), Burst: int(t.GetBurst()), Scope: definition.FlowScope(t.GetScope())}
	}
	out.Fairness = fairnessOf(a.GetFairness())
	if w := a.GetWaitForSignal(); w != nil {
		out.WaitForSignal = &definition.SignalWait{SignalName: w.GetSignalName(), Timeout: msOf(w.TimeoutMs)}
	}
	if h := a.GetCompensation(); h != nil {
		if out.Compensation, err = hookOf(h, path); err != nil {
			return err
		}
	}
	if w := a.GetWorkflow(); w != nil {
		if out.Workflow, err = subWorkflowOf(w, path); err != nil {
			return err
		}
		out.ParentClose = eventpb.ParentCloses.Engine(a.GetParentClose())
	}
	return nil
}

// subWorkflowOf converts a sub-workflow action's child; actionPath names
// the action for an error.
func subWorkflowOf(w *weftv1.SubWorkflow, actionPath func() string) (*definition.SubWorkflow, error) {
	input, err := rawJSON(w.GetInput())
	if err != nil {
		return nil, jsonFieldError(actionPath()+".workflow.input", err)
	}
	out := &definition.SubWorkflow{PlanID: w.GetPlanId(), PlanVersion: w.GetPlanVersion(), Input: input}
	if d := w.GetDefinition(); d != nil {
		child, err := definitionOf(d, actionPath()+".workflow.definition")
		if err != nil {
			return nil, err
		}
		out.Definition = &child
	}
	return out, nil
}

// hookOf converts an action's compensation hook; actionPath names the
// action for an error.
func hookOf(h *weftv1.CompensationHook, actionPath func() string) (*definition.CompensationHook, error) {
	input, err := rawJSON(h.GetInput())
	if err != nil {
		return nil, jsonFieldError(actionPath()+".compensation.input", err)
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
		return nil, jsonFieldError(path, err)
	}
	return raw, nil
}

// jsonFieldError is a request's JSON value at path that cannot be converted.
func jsonFieldError(path string, err error) error {
	return &engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid request",
		Violations: []engine.FieldViolation{{Field: path, Rule: "value.json", Message: err.Error()}}}
}

// fairnessOf converts a fairness setting (nil: none).
func fairnessOf(f *weftv1.Fairness) *definition.Fairness {
	if f == nil {
		return nil
	}
	return &definition.Fairness{Key: f.GetKey(), Weight: f.GetWeight()}
}
