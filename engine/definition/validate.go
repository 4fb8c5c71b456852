package definition

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"
)

// The bounds Validate enforces, the same as proto/weft/v1/definition.proto's.
const (
	// MaxActions is the most actions a definition may have.
	MaxActions = 1000
	// MaxRetryAttempts is the largest retry.max_attempts (docs/semantics.md#retry-policy).
	MaxRetryAttempts = 10
	// MinBackoffMultiplier and MaxBackoffMultiplier bound a set multiplier.
	MinBackoffMultiplier = 1.0
	// MaxBackoffMultiplier is the largest retry.backoff_multiplier.
	MaxBackoffMultiplier = 100.0
	// MaxBackoffDelay bounds a set initial backoff and backoff cap.
	MaxBackoffDelay = Duration(24 * time.Hour)
	// MinTimeout is the shortest timeout that may be set.
	MinTimeout = Duration(time.Millisecond)
	// MaxTimeout is the longest timeout that may be set (30 days).
	MaxTimeout = Duration(30 * 24 * time.Hour)
	// MinRetention and MaxRetention bound a set retention (one second to
	// ten years).
	MinRetention = Duration(time.Second)
	// MaxRetention is the longest retention that may be set.
	MaxRetention = Duration(10 * 365 * 24 * time.Hour)
	// MinHeartbeatTimeout is the shortest heartbeat timeout that may be set.
	MinHeartbeatTimeout = Duration(100 * time.Millisecond)
	// MaxViolations is the most violations one Validate error lists; its
	// Message says how many more there were.
	MaxViolations = 100
)

// Patterns shared with the proto (buf.validate string.pattern).
var (
	idPattern        = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	versionPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	operationPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/-]*$`)
)

// Validate answers nil when d is a valid definition, or an *Error
// listing every violation found (up to MaxViolations), in
// a stable order, each naming the API's field path and a stable rule id.
// docs/semantics.md lists the rules. Validate accepts a definition with or
// without defaults; it never panics.
func (d Definition) Validate() error {
	v := &violations{}
	v.checkDefinition(d)
	return v.err("invalid definition")
}

// checkDefinition checks a whole definition (a run's, or an inline
// sub-workflow's).
func (v *violations) checkDefinition(d Definition) {
	v.checkPlan(d)
	v.checkActions(d.Actions)
	v.checkDAG(d.Actions)
	v.checkResult(d)
	v.checkExpressions(&d)
	v.checkWorkflowInputs(&d)
	v.checkCompensationInputs(&d)
}

// violations collects what Validate finds.
type violations struct {
	list    []Violation
	dropped int
	// depth is how deeply the definition checked is nested in inline
	// sub-workflows (0: the run's own).
	depth int
}

// add records one violation, or counts it once MaxViolations are listed.
func (v *violations) add(field, rule, format string, args ...any) {
	if len(v.list) >= MaxViolations {
		v.dropped++
		return
	}
	v.list = append(v.list, violation(field, rule, format, args...))
}

// err answers the collected violations as an *Error with message msg, or nil.
func (v *violations) err(msg string) error {
	if len(v.list) == 0 {
		return nil
	}
	if v.dropped > 0 {
		msg = fmt.Sprintf("%s (%d more violations not listed)", msg, v.dropped)
	}
	return &Error{Message: msg, Violations: v.list}
}

// textRule describes the checks of one string field. Rule ids are
// prefix+"_required", "_max_len", "_pattern" and "_utf8".
type textRule struct {
	prefix   string
	required bool
	maxLen   int
	bytes    bool // maxLen counts bytes rather than characters
	pattern  *regexp.Regexp
}

// text checks one string field against r.
func (v *violations) text(field string, r textRule, s string) {
	name := fieldName(field)
	if s == "" {
		if r.required {
			v.add(field, r.prefix+"_required", "%s must not be empty", name)
		}
		return
	}
	if !utf8.ValidString(s) {
		v.add(field, r.prefix+"_utf8", "%s must be valid UTF-8", name)
		return
	}
	n, unit := utf8.RuneCountInString(s), "characters"
	if r.bytes {
		n, unit = len(s), "bytes"
	}
	if n > r.maxLen {
		v.add(field, r.prefix+"_max_len", "%s must be at most %d %s, got %d", name, r.maxLen, unit, n)
		return
	}
	if r.pattern != nil && !r.pattern.MatchString(s) {
		v.add(field, r.prefix+"_pattern", "%s must match %s", name, r.pattern)
	}
}

// timeout checks a timeout that is unset or within [lo, MaxTimeout].
func (v *violations) timeout(field, rule string, d, lo Duration) {
	if d == 0 || (d >= lo && d <= MaxTimeout) {
		return
	}
	v.add(field, rule, "%s must be unset or between %s and %s, got %s",
		fieldName(field), lo.D(), MaxTimeout.D(), d.D())
}

// known checks that an enum value is unset or one of allowed.
func known[T ~string](v *violations, field, rule string, got T, allowed ...T) {
	if got == "" {
		return
	}
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	v.add(field, rule, "%s must be one of %v, got %s", fieldName(field), allowed, short(string(got)))
}

// checkPlan checks the definition-level fields.
func (v *violations) checkPlan(d Definition) {
	v.text("plan_id", textRule{prefix: "plan.id", required: true, maxLen: 128, pattern: idPattern}, d.PlanID)
	v.text("plan_version", textRule{prefix: "plan.version", required: true, maxLen: 64, pattern: versionPattern}, d.PlanVersion)
	v.text("display_name", textRule{prefix: "plan.display_name", maxLen: 256}, d.DisplayName)
	v.timeout("timeout_ms", "plan.timeout_range", d.Timeout, MinTimeout)
	if d.Retention != 0 && (d.Retention < MinRetention || d.Retention > MaxRetention) {
		v.add("retention_ms", "plan.retention_range", "retention_ms must be unset or between %s and %s, got %s",
			MinRetention.D(), MaxRetention.D(), d.Retention.D())
	}
	known(v, "backpressure", "plan.backpressure_known", d.Backpressure,
		BackpressureReject, BackpressureQueue, BackpressureDelay)
	if d.MaxConcurrentRuns < 0 || int64(d.MaxConcurrentRuns) > math.MaxUint32 {
		v.add("max_concurrent_runs", "plan.max_concurrent_runs_range",
			"max_concurrent_runs must be unset or between 1 and %d, got %d", uint32(math.MaxUint32), d.MaxConcurrentRuns)
	}
}

// checkResult checks that result_action_id names an action of the definition.
func (v *violations) checkResult(d Definition) {
	if d.ResultActionID == "" {
		return
	}
	for _, a := range d.Actions {
		if a.ID == d.ResultActionID {
			return
		}
	}
	v.add("result_action_id", "plan.result_action_exists", "result_action_id must name an action of the definition")
}

// checkActions checks the action list and each action.
func (v *violations) checkActions(actions []Action) {
	switch n := len(actions); {
	case n == 0:
		v.add("actions", "actions.min_items", "a definition needs at least 1 action, got 0")
	case n > MaxActions:
		v.add("actions", "actions.max_items", "a definition may have at most %d actions, got %d", MaxActions, n)
	}
	firstID := make(map[string]int, len(actions))
	distinct := map[int]bool{}
	for _, a := range actions {
		distinct[a.Order] = true
	}
	for i, a := range actions {
		p := actionPath(i)
		v.checkActionID(p, i, a.ID, firstID)
		v.checkOrder(p, a.Order, len(distinct))
		v.checkAction(p, a)
	}
}

// checkActionID checks an action's id and that no earlier action has it.
func (v *violations) checkActionID(p string, i int, id string, first map[string]int) {
	v.text(p+".id", textRule{prefix: "action.id", required: true, maxLen: 128, pattern: idPattern}, id)
	if id == "" {
		return
	}
	if j, dup := first[id]; dup {
		v.add(p+".id", "actions.id_unique", "id must be unique: %s is also %s.id", short(id), actionPath(j))
		return
	}
	first[id] = i
}

// checkOrder checks that the orders are contiguous from 1 (docs/semantics.md#sequential-order).
// Actions may share an order (parallel branches; dispatch then breaks the tie
// by action id, docs/semantics.md#dispatch-order), so with k distinct orders every order must be
// in 1..k: k distinct values in 1..k are exactly 1..k.
func (v *violations) checkOrder(p string, order, distinct int) {
	if order < 1 || order > distinct {
		v.add(p+".order", "actions.order_contiguous",
			"order must be contiguous from 1: expected one of 1..%d, got %d", distinct, order)
	}
}

// checkAction checks one action's own fields.
func (v *violations) checkAction(p string, a Action) {
	v.text(p+".activity", textRule{prefix: "action.activity", maxLen: 256, pattern: operationPattern}, a.Activity)
	v.text(p+".queue", textRule{prefix: "action.queue", maxLen: 128, pattern: idPattern}, a.Queue)
	v.checkKind(p, a)
	v.json(p+".input", "action.input_json", a.Input)
	v.checkRetry(p+".retry", a.Retry)
	v.timeout(p+".timeout_ms", "action.timeout_range", a.Timeout, MinTimeout)
	v.timeout(p+".heartbeat_timeout_ms", "action.heartbeat_timeout_range", a.HeartbeatTimeout, MinHeartbeatTimeout)
	v.timeout(p+".schedule_to_start_timeout_ms", "action.schedule_to_start_timeout_range", a.ScheduleToStartTimeout, MinTimeout)
	v.timeout(p+".manual_timeout_ms", "action.manual_timeout_range", a.ManualTimeout, MinTimeout)
	known(v, p+".on_failure", "action.on_failure_known", a.OnFailure,
		OnFailureAbort, OnFailureSkip, OnFailureCompensate, OnFailureHold)
	known(v, p+".completion_mode", "action.completion_mode_known", a.Completion,
		CompletionAutomated, CompletionManual)
	if w := a.WaitForSignal; w != nil {
		v.text(p+".wait_for_signal.signal_name", textRule{prefix: "signal.name", required: true, maxLen: 256, bytes: true}, w.SignalName)
		v.timeout(p+".wait_for_signal.timeout_ms", "signal.timeout_range", w.Timeout, MinTimeout)
	}
	if c := a.Compensation; c != nil {
		v.checkCompensation(p+".compensation", *c)
	}
	v.checkSubWorkflow(p, a)
	v.checkSecrets(p, a.Secrets)
	v.checkStepKinds(p, a)
	v.checkForEach(p, a)
}

// checkKind checks that an action is exactly one of activity or
// wait-for-signal, or a manual action with neither (proto rules action.kind
// and action.manual_signal).
func (v *violations) checkKind(p string, a Action) {
	manual := a.Completion == CompletionManual
	if a.Sleeps() {
		return // checkStepKinds
	}
	switch {
	case a.Workflow != nil:
		return // checkSubWorkflow
	case a.WaitForSignal != nil && a.Activity != "":
		v.add(p, "action.kind", "an action needs exactly one of activity or wait_for_signal, got both")
	case a.WaitForSignal == nil && a.Activity == "" && !manual:
		v.add(p, "action.kind", "an action needs exactly one of activity or wait_for_signal, unless completion_mode is manual; got neither")
	}
	if a.WaitForSignal != nil && manual {
		v.add(p, "action.manual_signal", "a wait-for-signal action cannot also be completed manually")
	}
}

// json checks that raw, when present, is one valid JSON value.
func (v *violations) json(field, rule string, raw json.RawMessage) {
	if len(raw) > 0 && !json.Valid(raw) {
		v.add(field, rule, "%s must be valid JSON", fieldName(field))
	}
}

// checkRetry checks a retry policy's ranges; zero fields are unset.
func (v *violations) checkRetry(p string, r RetryPolicy) {
	if r.MaxAttempts != 0 && (r.MaxAttempts < 1 || r.MaxAttempts > MaxRetryAttempts) {
		v.add(p+".max_attempts", "retry.max_attempts_range",
			"max_attempts must be between 1 and %d, got %d", MaxRetryAttempts, r.MaxAttempts)
	}
	known(v, p+".strategy", "retry.strategy_known", r.Strategy, BackoffConstant, BackoffLinear, BackoffExponential)
	v.backoff(p+".initial_backoff_ms", "retry.initial_backoff_range", r.InitialBackoff)
	v.backoff(p+".max_backoff_ms", "retry.max_backoff_range", r.MaxBackoff)
	if r.InitialBackoff > 0 && r.MaxBackoff > 0 && r.MaxBackoff < r.InitialBackoff {
		v.add(p+".max_backoff_ms", "retry.max_backoff_gte_initial",
			"max_backoff_ms must be at least initial_backoff_ms (%s), got %s", r.InitialBackoff.D(), r.MaxBackoff.D())
	}
	if m := r.Multiplier; m != 0 && !(m >= MinBackoffMultiplier && m <= MaxBackoffMultiplier) {
		v.add(p+".backoff_multiplier", "retry.multiplier_range",
			"backoff_multiplier must be between %g and %g, got %g", MinBackoffMultiplier, MaxBackoffMultiplier, m)
	}
	v.checkErrorClasses(p+".retryable_errors", r.RetryableErrors)
}

// backoff checks a delay that is unset or within [0, MaxBackoffDelay].
func (v *violations) backoff(field, rule string, d Duration) {
	if d < 0 || d > MaxBackoffDelay {
		v.add(field, rule, "%s must be between 0 and %s, got %s", fieldName(field), MaxBackoffDelay.D(), d.D())
	}
}

// maxRetryableErrors is the proto's bound on retry.retryable_errors.
const maxRetryableErrors = 32

// checkErrorClasses checks that every listed class is known.
func (v *violations) checkErrorClasses(p string, classes []ErrorClass) {
	if len(classes) > maxRetryableErrors {
		v.add(p, "retry.retryable_errors_max_items",
			"retryable_errors may list at most %d classes, got %d", maxRetryableErrors, len(classes))
	}
	for k, c := range classes {
		if !knownErrorClass(c) {
			v.add(indexPath(p, k), "retry.retryable_errors_known", "retryable_errors[%d] must be a known error class, got %s", k, short(string(c)))
		}
	}
}

// checkCompensation checks a compensation hook.
func (v *violations) checkCompensation(p string, c CompensationHook) {
	v.text(p+".operation", textRule{prefix: "compensation.operation", required: true, maxLen: 256, pattern: operationPattern}, c.Operation)
	v.json(p+".input", "compensation.input_json", c.Input)
	v.timeout(p+".timeout_ms", "compensation.timeout_range", c.Timeout, MinTimeout)
	v.checkRetry(p+".retry", c.Retry)
	v.text(p+".queue", textRule{prefix: "compensation.queue", maxLen: 128, pattern: idPattern}, c.Queue)
}

// maxSecrets is the proto's bound on an action's secrets.
const maxSecrets = 64

// checkSecrets checks an action's secret references.
func (v *violations) checkSecrets(p string, secrets []SecretRef) {
	if len(secrets) > maxSecrets {
		v.add(p+".secrets", "action.secrets_max_items", "secrets may list at most %d references, got %d", maxSecrets, len(secrets))
	}
	for k, s := range secrets {
		sp := indexPath(p+".secrets", k)
		v.text(sp+".name", textRule{prefix: "secret.name", required: true, maxLen: 128}, s.Name)
		v.text(sp+".ref", textRule{prefix: "secret.ref", required: true, maxLen: 1024}, s.Ref)
	}
}

// knownErrorClass reports whether c is one of the defined error classes.
func knownErrorClass(c ErrorClass) bool {
	switch c {
	case ErrorTimeout, ErrorRateLimit, ErrorTransient, ErrorTransport, ErrorValidation,
		ErrorPolicyDeny, ErrorAuthDeny, ErrorBusinessConflict, ErrorAgent, ErrorExternal,
		ErrorGovernance, ErrorUnknown, ErrorCancelled,
		ErrorReconciliationResultUnavailable, ErrorReconciliationIndeterminate, ErrorScheduleToStart:
		return true
	}
	return false
}

// actionPath answers "actions[i]".
func actionPath(i int) string { return indexPath("actions", i) }

// indexPath answers "p[i]".
func indexPath(p string, i int) string { return p + "[" + strconv.Itoa(i) + "]" }

// fieldName answers the last element of a field path, for messages.
func fieldName(field string) string {
	for i := len(field) - 1; i >= 0; i-- {
		if field[i] == '.' {
			return field[i+1:]
		}
	}
	return field
}

// short quotes s for a message, cut to a few dozen bytes so that no message
// carries a long value.
func short(s string) string {
	const limit = 40
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
