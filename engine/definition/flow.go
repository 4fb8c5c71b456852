package definition

// RunConcurrency limits how many runs of the plan with the same key are
// started — RUNNING, BLOCKED, PAUSED or COMPENSATING — at once; what a run
// that finds its key full does is its Strategy
// (docs/semantics.md#run-concurrency).
type RunConcurrency struct {
	// Key is a CEL expression over input and run.id (no steps: it is
	// evaluated when the run is submitted), answering a string.
	Key string `json:"key"`
	// Limit is the most started runs of one key, 1–100,000.
	Limit    int                 `json:"limit"`
	Strategy ConcurrencyStrategy `json:"strategy,omitempty"`
}

// ConcurrencyStrategy is what a run does when its concurrency key is full.
type ConcurrencyStrategy string

// The run concurrency strategies.
const (
	// StrategyQueue waits QUEUED until a run of the key ends (the default).
	StrategyQueue ConcurrencyStrategy = "queue"
	// StrategyCancelNewest cancels the run that finds the key full.
	StrategyCancelNewest ConcurrencyStrategy = "cancelNewest"
	// StrategyCancelInProgress cancels the oldest started run of the key
	// and waits QUEUED for its slot.
	StrategyCancelInProgress ConcurrencyStrategy = "cancelInProgress"
)

// StrategyOf answers s, or StrategyQueue when unset.
func StrategyOf(s ConcurrencyStrategy) ConcurrencyStrategy {
	if s == "" {
		return StrategyQueue
	}
	return s
}

func equalRunConcurrency(a, b *RunConcurrency) bool { return *a == *b }

// runConcurrency hashes a definition's run concurrency.
func (h *hasher) runConcurrency(c *RunConcurrency) {
	h.bool(c != nil)
	if c != nil {
		h.str(c.Key)
		h.u64(uint64(c.Limit))
		h.str(string(c.Strategy))
	}
}

// StepConcurrency limits how many tasks of a step's key are in flight —
// claimed and not yet reported — at once, across every run of the plan
// (scope plan) or of the tenant (scope tenant: every plan naming the same
// key shares the limit) (docs/semantics.md#step-concurrency).
type StepConcurrency struct {
	// Key is a CEL expression over input, steps.<id>.output (upstream
	// steps) and run.id, evaluated to a string when the step's task is
	// created.
	Key string `json:"key"`
	// Limit is the most tasks of one key in flight, 1–100,000.
	Limit int       `json:"limit"`
	Scope FlowScope `json:"scope,omitempty"`
}

// StepThrottle limits how fast a step's tasks of one key are handed out:
// at most Rate, with up to Burst at once after a quiet spell; excess tasks
// wait, none is dropped (docs/semantics.md#step-throttle).
type StepThrottle struct {
	// Key is a CEL expression like StepConcurrency.Key.
	Key string `json:"key"`
	// Rate is "<count>/<period>": "100/1m", "20/s".
	Rate string `json:"rate"`
	// Burst is how many tasks may go at once (0: 1).
	Burst int       `json:"burst,omitempty"`
	Scope FlowScope `json:"scope,omitempty"`
}

// FlowScope is who shares a flow-control key: the plan's runs (default)
// or the tenant's.
type FlowScope string

// The flow-control scopes.
const (
	ScopePlan   FlowScope = "plan"
	ScopeTenant FlowScope = "tenant"
)

// ScopeOf answers s, or ScopePlan when unset.
func ScopeOf(s FlowScope) FlowScope {
	if s == "" {
		return ScopePlan
	}
	return s
}

func equalConcurrency(a, b *StepConcurrency) bool { return *a == *b }

func equalThrottle(a, b *StepThrottle) bool { return *a == *b }

// flow hashes an action's flow control.
func (h *hasher) flow(a *Action) {
	h.bool(a.Concurrency != nil)
	if c := a.Concurrency; c != nil {
		h.str(c.Key)
		h.u64(uint64(c.Limit))
		h.str(string(c.Scope))
	}
	h.bool(a.Throttle != nil)
	if t := a.Throttle; t != nil {
		h.str(t.Key)
		h.str(t.Rate)
		h.u64(uint64(t.Burst))
		h.str(string(t.Scope))
	}
}

// Fairness shares a queue's priority among the keys of its ready tasks in
// proportion to their weights, so that one key with a deep backlog never
// starves the others (docs/semantics.md#fairness). On a definition it
// applies to every activity step; on a step it replaces the definition's.
type Fairness struct {
	// Key is a CEL expression over input, run.id (and, on a step,
	// steps.<id>.output of upstream steps) answering a string, evaluated
	// when a task is created; "" is the implicit key of tasks without one.
	Key string `json:"key"`
	// Weight is a number, or a CEL expression like Key answering one,
	// from 0.001 to 1000; empty: 1.
	Weight string `json:"weight,omitempty"`
}

func equalFairness(a, b *Fairness) bool { return *a == *b }

// fairness hashes a fairness setting.
func (h *hasher) fairness(f *Fairness) {
	h.bool(f != nil)
	if f != nil {
		h.str(f.Key)
		h.str(f.Weight)
	}
}
