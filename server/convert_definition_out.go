package server

import (
	"sync"

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

// sharedDefinitionProto answers definitionProto(d) for a run's answer: the
// one definitionProtos built for d's definition when it has one, shared by
// every answer that carries it. The message is never changed once built:
// Connect only reads an answer, to encode it (binary encoding caches sizes
// in it atomically; proto.Marshal of one message from many goroutines is
// safe), and no handler or interceptor of this package writes a run's
// definition after runProto.
func sharedDefinitionProto(d definition.Definition) *weftv1.WorkflowDefinition {
	return definitionProtos.get(d)
}

// definitionCache remembers the messages it built for definitions by the
// array of their actions: the runs of one definition share its actions
// (engine/definition's Prepared, which every run the process submits holds
// and nothing changes), so a run's answer finds its definition's message
// without converting it again. An entry holds the definition it was built
// from, so its actions' array stays alive and its address names no other
// array while the entry is kept; a definition is served an entry only when
// definition.Equal to the entry's (which also compares the fields beside
// the actions). A definition without actions is converted each time. It is
// bounded: when full, an entry is dropped for each one added.
type definitionCache struct {
	max     int
	mu      sync.RWMutex
	entries map[*definition.Action]*definitionEntry
}

// definitionEntry is a definition and its message, never changed once made.
type definitionEntry struct {
	def definition.Definition
	out *weftv1.WorkflowDefinition
}

// definitionProtosSize bounds definitionProtos: the distinct definitions
// whose runs are answered, not the runs (engine/submit.go bounds its
// prepared definitions alike).
const definitionProtosSize = 256

var definitionProtos = newDefinitionCache(definitionProtosSize)

func newDefinitionCache(max int) *definitionCache {
	return &definitionCache{max: max, entries: make(map[*definition.Action]*definitionEntry)}
}

// get answers definitionProto(d), from the cache when d's actions were
// converted before.
func (c *definitionCache) get(d definition.Definition) *weftv1.WorkflowDefinition {
	if len(d.Actions) == 0 {
		return definitionProto(d)
	}
	key := &d.Actions[0]
	c.mu.RLock()
	e := c.entries[key]
	c.mu.RUnlock()
	if e != nil && definition.Equal(&e.def, &d) {
		return e.out
	}
	e = &definitionEntry{def: d, out: definitionProto(d)}
	c.mu.Lock()
	definition.PutBounded(c.entries, key, e, c.max)
	c.mu.Unlock()
	return e.out
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
