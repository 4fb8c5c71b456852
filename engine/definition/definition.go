package definition

import (
	"encoding/json"
	"time"
)

// Definition is a workflow definition as the engine runs it: the domain form
// of weft.v1.WorkflowDefinition, and what the YAML loader (docs/semantics.md#yaml-definitions)
// produces. Zero values mean "unset": WithDefaults fills in the spec's
// defaults, and Validate checks the result.
//
// A definition whose actions declare no DependsOn runs strictly sequentially
// by Order (docs/semantics.md#sequential-order); any DependsOn makes it a DAG whose roots start at
// once (docs/semantics.md#dag-shape).
type Definition struct {
	PlanID            string           `json:"plan_id"`
	PlanVersion       string           `json:"plan_version"`
	Actions           []Action         `json:"actions"`
	Timeout           Duration         `json:"timeout_ms,omitempty"`
	Backpressure      BackpressureMode `json:"backpressure,omitempty"`
	MaxConcurrentRuns int              `json:"max_concurrent_runs,omitempty"`
	RequiresApproval  bool             `json:"requires_approval,omitempty"`
	DisplayName       string           `json:"display_name,omitempty"`
	// DAG makes every action without DependsOn a root that starts at once,
	// even when no action declares a dependency: definitions read in spec
	// 002's YAML shape are DAGs (docs/semantics.md#dag-shape).
	DAG bool `json:"dag,omitempty"`
	// ResultActionID names the action whose output is the run's result
	// (docs/semantics.md#a-runs-result); empty: the run has none.
	ResultActionID string `json:"result_action_id,omitempty"`
	// Retention is how long a finished run of this definition is kept
	// before retention removes it, overriding the deployment's default
	// (docs/semantics.md#retention); zero: the default.
	Retention Duration `json:"retention_ms,omitempty"`
	// SearchAttributes are set on every run at submission
	// (docs/semantics.md#search-attributes), by name: a ${{ }} expression
	// over the input, typed by its value, or a literal keyword.
	SearchAttributes map[string]string `json:"search_attributes,omitempty"`
	// Priority is the priority of the runs' tasks, 1 (first) to 5; zero:
	// the default, 3 (docs/semantics.md#priority).
	Priority int `json:"priority,omitempty"`
	// Concurrency limits the started runs of the plan per key
	// (docs/semantics.md#run-concurrency); nil: no key limit.
	Concurrency *RunConcurrency `json:"concurrency,omitempty"`
	// Fairness shares each priority of a queue among the fairness keys of
	// the runs' tasks by weight (docs/semantics.md#fairness); nil: none.
	Fairness *Fairness `json:"fairness,omitempty"`
}

// Action is one step of a definition.
type Action struct {
	ID               string          `json:"id"`
	Order            int             `json:"order"`
	Activity         string          `json:"activity,omitempty"`
	Queue            string          `json:"queue,omitempty"`
	DependsOn        []string        `json:"depends_on,omitempty"`
	Input            json.RawMessage `json:"input,omitempty"`
	Retry            RetryPolicy     `json:"retry"`
	Timeout          Duration        `json:"timeout_ms,omitempty"`
	HeartbeatTimeout Duration        `json:"heartbeat_timeout_ms,omitempty"`
	// ScheduleToStartTimeout bounds how long the action's task, and its
	// compensation's, may wait in its queue for a worker to claim it
	// (docs/semantics.md#schedule-to-start); unset: the deployment's default.
	ScheduleToStartTimeout Duration          `json:"schedule_to_start_timeout_ms,omitempty"`
	OnFailure              OnFailure         `json:"on_failure,omitempty"`
	Completion             CompletionMode    `json:"completion_mode,omitempty"`
	WaitForSignal          *SignalWait       `json:"wait_for_signal,omitempty"`
	ManualTimeout          Duration          `json:"manual_timeout_ms,omitempty"`
	Compensation           *CompensationHook `json:"compensation,omitempty"`
	Secrets                []SecretRef       `json:"secrets,omitempty"`
	// When is a CEL bool evaluated when the step becomes ready: false skips
	// it with reason condition (docs/semantics.md#when). Empty: always runs.
	When string `json:"when,omitempty"`
	// Repeat runs the step again until a condition over its own output
	// holds (docs/semantics.md#repeat).
	Repeat *Repeat `json:"repeat,omitempty"`
	// Sleep makes the step a durable sleep of this long: it completes when
	// the time comes (docs/semantics.md#sleep).
	Sleep Duration `json:"sleep_ms,omitempty"`
	// SleepUntil makes the step a durable sleep until the time a CEL
	// timestamp expression answers (docs/semantics.md#sleep).
	SleepUntil string `json:"sleep_until,omitempty"`
	// Concurrency and Throttle are the step's flow control
	// (docs/semantics.md#step-concurrency, docs/semantics.md#step-throttle).
	Concurrency *StepConcurrency `json:"concurrency,omitempty"`
	Throttle    *StepThrottle    `json:"throttle,omitempty"`
	// Fairness replaces the definition's for this step's activity tasks
	// (docs/semantics.md#fairness).
	Fairness *Fairness `json:"fairness,omitempty"`
	// Workflow makes the action start a child run (docs/semantics.md#sub-workflows);
	// ParentClose is what the child does when the parent stops waiting for it.
	Workflow    *SubWorkflow `json:"workflow,omitempty"`
	ParentClose ParentClose  `json:"parent_close,omitempty"`
	// ForEach makes the step a fan-out (docs/semantics.md#for-each): a CEL
	// list, evaluated when the step becomes ready, with one item per
	// element, each item run as the step would run (an activity or a
	// sub-workflow) and addressed step[index]; MaxConcurrency bounds the
	// items in flight (default DefaultMaxConcurrency).
	ForEach        string `json:"for_each,omitempty"`
	MaxConcurrency int    `json:"max_concurrency,omitempty"`
}

// Repeat is a step's bounded loop (docs/semantics.md#repeat): the step runs
// again, each iteration a new logical attempt, until Until (a CEL bool that
// reads the last iteration's output as steps.<id>.output) holds; after
// MaxIterations iterations without it the step fails.
type Repeat struct {
	Until         string `json:"until"`
	MaxIterations int    `json:"max_iterations"`
}

// Sleeps reports whether the action is a durable sleep (sleep or sleepUntil).
func (a *Action) Sleeps() bool { return a.Sleep > 0 || a.SleepUntil != "" }

// RetryPolicy decides whether and when a failed attempt runs again (docs/semantics.md#retry-policy,
// docs/semantics.md#backoff).
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included: 1–10, default 3.
	MaxAttempts int             `json:"max_attempts,omitempty"`
	Strategy    BackoffStrategy `json:"strategy,omitempty"`
	// InitialBackoff is the delay before the first retry (default 1s).
	InitialBackoff Duration `json:"initial_backoff_ms,omitempty"`
	// Multiplier is the exponential factor (default 2.0).
	Multiplier float64 `json:"backoff_multiplier,omitempty"`
	// MaxBackoff caps each delay (default 30s).
	MaxBackoff Duration `json:"max_backoff_ms,omitempty"`
	// RetryableErrors, when non-empty, replaces each class's default decision.
	RetryableErrors []ErrorClass `json:"retryable_errors,omitempty"`
}

// SignalWait makes an action wait for a named signal; its payload becomes the
// action's output.
type SignalWait struct {
	SignalName string   `json:"signal_name"`
	Timeout    Duration `json:"timeout_ms,omitempty"`
}

// CompensationHook is an action's rollback (docs/semantics.md#compensation).
type CompensationHook struct {
	Operation string          `json:"operation"`
	Input     json.RawMessage `json:"input,omitempty"`
	Timeout   Duration        `json:"timeout_ms,omitempty"`
	Retry     RetryPolicy     `json:"retry"`
	Queue     string          `json:"queue,omitempty"`
}

// SecretRef names a secret a worker resolves; only the reference is stored.
type SecretRef struct {
	Name string `json:"name"`
	Ref  string `json:"ref"`
}

// BackoffStrategy is how the delay between retries grows (docs/semantics.md#backoff).
type BackoffStrategy string

// The backoff strategies.
const (
	BackoffConstant    BackoffStrategy = "constant"
	BackoffLinear      BackoffStrategy = "linear"
	BackoffExponential BackoffStrategy = "exponential"
)

// OnFailure is what the run does when an action fails for good.
type OnFailure string

// The failure policies (docs/semantics.md#on-failure).
const (
	OnFailureAbort      OnFailure = "abort"
	OnFailureSkip       OnFailure = "skip"
	OnFailureCompensate OnFailure = "compensate"
	OnFailureHold       OnFailure = "hold"
)

// CompletionMode says who completes an action.
type CompletionMode string

// The completion modes.
const (
	CompletionAutomated CompletionMode = "automated"
	CompletionManual    CompletionMode = "manual"
)

// BackpressureMode is what submission does at a concurrency limit (docs/semantics.md#backpressure).
type BackpressureMode string

// The backpressure modes.
const (
	BackpressureReject BackpressureMode = "reject"
	BackpressureQueue  BackpressureMode = "queue"
	BackpressureDelay  BackpressureMode = "delay"
)

// ErrorClass classifies a failed attempt (the union of specs 000 and 002).
type ErrorClass string

// The error classes; docs/semantics.md gives each one's default retry decision.
const (
	ErrorTimeout                         ErrorClass = "timeout"
	ErrorRateLimit                       ErrorClass = "rate_limit"
	ErrorTransient                       ErrorClass = "transient"
	ErrorTransport                       ErrorClass = "transport"
	ErrorValidation                      ErrorClass = "validation"
	ErrorPolicyDeny                      ErrorClass = "policy_deny"
	ErrorAuthDeny                        ErrorClass = "auth_deny"
	ErrorBusinessConflict                ErrorClass = "business_conflict"
	ErrorAgent                           ErrorClass = "agent_error"
	ErrorExternal                        ErrorClass = "external"
	ErrorGovernance                      ErrorClass = "governance"
	ErrorUnknown                         ErrorClass = "unknown"
	ErrorCancelled                       ErrorClass = "cancelled"
	ErrorReconciliationResultUnavailable ErrorClass = "reconciliation_result_unavailable"
	ErrorReconciliationIndeterminate     ErrorClass = "reconciliation_indeterminate"
	ErrorScheduleToStart                 ErrorClass = "schedule_to_start"
)

// Duration is a time.Duration persisted and exchanged as whole milliseconds.
type Duration time.Duration

// D answers the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Milliseconds answers the duration in whole milliseconds.
func (d Duration) Milliseconds() int64 { return time.Duration(d).Milliseconds() }

// MarshalJSON encodes the duration as milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Milliseconds()) }

// UnmarshalJSON decodes milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms int64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(time.Duration(ms) * time.Millisecond)
	return nil
}

// Ms builds a Duration from milliseconds.
func Ms(ms int64) Duration { return Duration(time.Duration(ms) * time.Millisecond) }

// Action answers the action with id, or nil. An item id of a fan-out
// ("ship[3]", ItemID) answers the item's action (ItemAction).
func (d *Definition) Action(id string) *Action {
	for i := range d.Actions {
		if d.Actions[i].ID == id {
			return &d.Actions[i]
		}
	}
	if parent, index, ok := ParseItemID(id); ok {
		if a := d.Action(parent); a != nil && a.ForEach != "" {
			return a.ItemAction(index)
		}
	}
	return nil
}
