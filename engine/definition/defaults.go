package definition

import (
	"encoding/json"
	"slices"
	"time"
)

// The defaults WithDefaults fills in (docs/semantics.md#retry-policy, docs/semantics.md#timeouts and docs/semantics.md#compensation).
// Other code reads them from here rather than repeating the numbers.
const (
	// DefaultMaxAttempts is an action's attempts, the first included (000 §3.1).
	DefaultMaxAttempts = 3
	// DefaultBackoffStrategy is how retry delays grow (002 §3.2's strategies).
	DefaultBackoffStrategy = BackoffExponential
	// DefaultInitialBackoff is the delay before an action's first retry.
	DefaultInitialBackoff = Duration(1000 * time.Millisecond)
	// DefaultBackoffMultiplier is the exponential factor between retries.
	DefaultBackoffMultiplier = 2.0
	// DefaultMaxBackoff caps each retry delay of an action.
	DefaultMaxBackoff = Duration(30000 * time.Millisecond)
	// DefaultAttemptTimeout is an action's per-attempt timeout (000 §3.2).
	DefaultAttemptTimeout = Duration(300000 * time.Millisecond)
	// DefaultOnFailure is what a run does when an action fails for good (000 §4).
	DefaultOnFailure = OnFailureCompensate
	// DefaultCompletion is who completes an action.
	DefaultCompletion = CompletionAutomated
	// DefaultQueue is the task queue of an action that names none.
	DefaultQueue = "default"
	// DefaultCompensationMaxAttempts is a compensation hook's attempts (000 §4).
	DefaultCompensationMaxAttempts = 2
	// DefaultCompensationInitialBackoff is the delay before a hook's first retry.
	DefaultCompensationInitialBackoff = Duration(1000 * time.Millisecond)
	// DefaultCompensationBackoffMultiplier is a hook's exponential factor.
	DefaultCompensationBackoffMultiplier = 2.0
	// DefaultCompensationMaxBackoff caps each retry delay of a hook.
	DefaultCompensationMaxBackoff = Duration(10000 * time.Millisecond)
	// DefaultPlanVersion is the plan version of a YAML definition that names none.
	DefaultPlanVersion = "1"
)

// DefaultRetryPolicy answers an action's retry policy with every field at its default.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:    DefaultMaxAttempts,
		Strategy:       DefaultBackoffStrategy,
		InitialBackoff: DefaultInitialBackoff,
		Multiplier:     DefaultBackoffMultiplier,
		MaxBackoff:     DefaultMaxBackoff,
	}
}

// DefaultCompensationRetryPolicy answers a compensation hook's retry policy
// with every field at its default (docs/semantics.md#compensation).
func DefaultCompensationRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:    DefaultCompensationMaxAttempts,
		Strategy:       DefaultBackoffStrategy,
		InitialBackoff: DefaultCompensationInitialBackoff,
		Multiplier:     DefaultCompensationBackoffMultiplier,
		MaxBackoff:     DefaultCompensationMaxBackoff,
	}
}

// WithDefaults answers a deep copy of d with every unset field at its default;
// d itself is never changed. Definition-level fields without a default
// (timeout, backpressure, concurrency) stay unset.
//
// A default never contradicts a value the definition sets: an unset backoff
// cap below a set initial backoff is raised to it, and an unset initial
// backoff above a set cap is lowered to it, so a definition that validates
// still validates with its defaults.
func (d Definition) WithDefaults() Definition {
	out := d.Clone()
	for i := range out.Actions {
		out.Actions[i] = out.Actions[i].withDefaults()
		out.Actions[i].Workflow.withDefaults(&out, out.Actions[i].ID)
	}
	return out
}

// withDefaults fills in an action that is already a private copy.
func (a Action) withDefaults() Action {
	a.Retry = a.Retry.withDefaults(DefaultRetryPolicy())
	if a.Timeout == 0 {
		a.Timeout = DefaultAttemptTimeout
	}
	if a.OnFailure == "" {
		a.OnFailure = DefaultOnFailure
	}
	if a.ForEach != "" && a.MaxConcurrency == 0 {
		a.MaxConcurrency = DefaultMaxConcurrency
	}
	if a.Workflow != nil && a.ParentClose == "" {
		a.ParentClose = ParentCloseCancel
	}
	if a.Completion == "" {
		a.Completion = DefaultCompletion
	}
	if a.Queue == "" {
		a.Queue = DefaultQueue
	}
	if a.Compensation != nil {
		a.Compensation.Retry = a.Compensation.Retry.withDefaults(DefaultCompensationRetryPolicy())
		if a.Compensation.Timeout == 0 {
			a.Compensation.Timeout = a.Timeout
		}
		if a.Compensation.Queue == "" {
			a.Compensation.Queue = a.Queue
		}
	}
	return a
}

// withDefaults fills in r's unset fields from def.
func (r RetryPolicy) withDefaults(def RetryPolicy) RetryPolicy {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = def.MaxAttempts
	}
	if r.Strategy == "" {
		r.Strategy = def.Strategy
	}
	if r.Multiplier == 0 {
		r.Multiplier = def.Multiplier
	}
	switch {
	case r.InitialBackoff == 0 && r.MaxBackoff == 0:
		r.InitialBackoff, r.MaxBackoff = def.InitialBackoff, def.MaxBackoff
	case r.InitialBackoff == 0:
		r.InitialBackoff = min(def.InitialBackoff, r.MaxBackoff)
	case r.MaxBackoff == 0:
		r.MaxBackoff = max(def.MaxBackoff, r.InitialBackoff)
	}
	return r
}

// Clone answers a deep copy of d: no slice, map or pointer is shared with d.
func (d Definition) Clone() Definition {
	out := d
	if d.Actions != nil {
		out.Actions = make([]Action, len(d.Actions))
		for i, a := range d.Actions {
			out.Actions[i] = a.clone()
		}
	}
	return out
}

// clone answers a deep copy of a.
func (a Action) clone() Action {
	a.DependsOn = slices.Clone(a.DependsOn)
	a.Input = cloneRaw(a.Input)
	a.Retry.RetryableErrors = slices.Clone(a.Retry.RetryableErrors)
	a.Secrets = slices.Clone(a.Secrets)
	if a.Repeat != nil {
		r := *a.Repeat
		a.Repeat = &r
	}
	if a.WaitForSignal != nil {
		w := *a.WaitForSignal
		a.WaitForSignal = &w
	}
	a.Workflow = a.Workflow.clone()
	if a.Compensation != nil {
		c := *a.Compensation
		c.Input = cloneRaw(c.Input)
		c.Retry.RetryableErrors = slices.Clone(c.Retry.RetryableErrors)
		a.Compensation = &c
	}
	return a
}

// cloneRaw copies raw JSON, keeping nil as nil.
func cloneRaw(m json.RawMessage) json.RawMessage {
	if m == nil {
		return nil
	}
	return slices.Clone(m)
}
