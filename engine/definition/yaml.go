package definition

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// LoadYAML reads a definition in the YAML shape (docs/semantics.md#yaml-definitions; JSON, a
// subset of YAML, is read the same way). It answers the definition before
// defaults: callers call WithDefaults and Validate. A definition read this way
// is a DAG (docs/semantics.md#dag-shape): a step without dependsOn is a root.
//
// The shape, with every key optional. A key the shape does not have is
// refused with its path and, when one is close, the key it was probably
// meant to be (apiVersion and kind, and top-level keys starting with "x-",
// a place for anchors, are accepted and ignored):
//
//	planId | metadata.name | name     → plan_id (first present wins)
//	planVersion | version | metadata.version → plan_version (default "1")
//	displayName | metadata.displayName → display_name
//	result: a                         → result_action_id: the step whose output
//	                                    is the run's result
//	timeout: "30m"                    → the workflow timeout
//	retention: "720h"                 → retention_ms: how long a finished run
//	                                    is kept (default: the deployment's)
//	requiresApproval: true            → requires_approval (ApproveRun before StartRun)
//	maxConcurrentRuns: 5              → max_concurrent_runs
//	backpressure: reject|queue|delay  → backpressure
//	priority: 1..5                    → priority (of the runs' tasks; default 3)
//	concurrency: {key: <CEL over input, run.id>, limit: n,
//	              strategy: queue|cancelNewest|cancelInProgress}
//	                                  → at most n started runs of the key
//	fairness: {key: <CEL>, weight: <CEL or number>}
//	                                  → a queue's priority shared among keys by weight
//	steps:            (or spec.steps; spec.* wins over the top level)
//	  - name: a                       → action id (or id:); list position → order from 1
//	    activity | agent: x           → activity (default: the step's name, unless
//	                                    the step is manual or waits for a signal)
//	    queue: q
//	    dependsOn: [b, c]             → depends_on (a single name is accepted too)
//	    onFailure: abort|skip|compensate|hold
//	    timeout: "5m"                 → per-attempt timeout; heartbeatTimeout likewise
//	    scheduleToStartTimeout: "2m"  → schedule_to_start_timeout (a task's wait for a worker)
//	    retryPolicy: {maxRetries: n (→ max_attempts n+1) | maxAttempts: n,
//	                  backoff: constant|linear|exponential, initialDelay: "1s",
//	                  maxDelay: "60s", multiplier: 2.0, retryableErrors: [timeout]}
//	    input: any YAML               → JSON
//	    manual: true                  → completion manual
//	    manualTimeout: "4h"           → manual_timeout (how long a person may take)
//	    waitForSignal: name           (or {name: s, timeout: "1h"})
//	    secrets: [{name: n, ref: r}]  → secret references (never values)
//	    when: <CEL bool>              → when (false: skipped, reason condition)
//	    repeat: {until: <CEL bool>, maxIterations: n} → repeat
//	    sleep: "10m"                  → sleep (a durable sleep step; no activity)
//	    sleepUntil: ${{ <CEL timestamp> }} → sleep_until
//	    concurrency: {key: <CEL>, limit: n, scope: plan|tenant}
//	                                  → at most n tasks of the key in flight
//	    throttle: {key: <CEL>, rate: "100/1m", burst: n, scope: plan|tenant}
//	                                  → the key's tasks handed out at the rate
//	    fairness: {key: <CEL>, weight: <CEL or number>} → the step's own fairness
//	compensation:     (or spec.compensation)
//	  - step: a                       → attaches a's compensation hook
//	    action | operation: op        → operation
//	    agent | queue: q              → the hook's queue
//	    input, timeout, retryPolicy   as for steps
//
// Durations are Go durations ("500ms", "5m", "1h30m"). Errors are *Error,
// one violation per problem, each naming its YAML path
// (e.g. "spec.steps[2].timeout") and never quoting an input payload.
func LoadYAML(data []byte) (Definition, error) {
	root, err := parseYAML(data)
	if err != nil {
		return Definition{}, err
	}
	d, _, err := loadYAML(root)
	return d, err
}

// ReadYAML is LoadYAML followed by WithDefaults and Validate, with every
// problem of both in one answer, each named by its YAML path: the loader's,
// then the validator's (one about a place the loader already refused is
// left out). It answers the definition before defaults, and the PathMap
// that places the API's field paths — the server's, for instance — in the
// document.
func ReadYAML(data []byte) (Definition, *PathMap, error) {
	root, err := parseYAML(data)
	if err != nil {
		return Definition{}, nil, err
	}
	l := newYAMLLoader()
	d := l.definition(root)
	d.DAG = true
	refused := make([]string, 0, len(l.v.list))
	for _, v := range l.v.list {
		refused = append(refused, v.Field)
	}
	var invalid *Error
	if errors.As(d.WithDefaults().Validate(), &invalid) {
		seen := make(map[Violation]bool, len(invalid.Violations))
		for _, v := range invalid.Violations {
			api := v.Field
			v.Field = l.paths.YAMLPath(api)
			v.Message = yamlMessage(v.Message, api, v.Field, l.paths)
			if !seen[v] && !under(v.Field, refused) {
				seen[v] = true
				l.v.add(v.Field, v.Rule, "%s", v.Message)
			}
		}
	}
	if err := l.v.err("invalid YAML definition"); err != nil {
		return Definition{}, l.paths, err
	}
	return d, l.paths, nil
}

// under reports whether path is one of paths or inside one of them.
func under(path string, paths []string) bool {
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
			return true
		}
	}
	return false
}

// loadYAML reads a parsed document.
func loadYAML(root *yaml.Node) (Definition, *PathMap, error) {
	l := newYAMLLoader()
	d := l.definition(root)
	if err := l.v.err("invalid YAML definition"); err != nil {
		return Definition{}, l.paths, err
	}
	d.DAG = true // YAML steps are a DAG (docs/semantics.md#dag-shape): every step without dependsOn is a root
	return d, l.paths, nil
}

func newYAMLLoader() *yamlLoader {
	return &yamlLoader{budget: maxYAMLInputValues,
		paths: &PathMap{steps: "steps", top: map[string]string{}, compensation: map[int]string{}}}
}

// Limits on what the loader expands, against alias bombs and deep nesting.
const (
	maxYAMLInputValues = 200_000
	maxYAMLInputDepth  = 1000
	maxYAMLAliasHops   = 64
	maxYAMLMergeDepth  = 8
)

// parseYAML parses the first document of data into a node tree. The parser is
// third-party: a panic in it is answered as a syntax error.
func parseYAML(data []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, yamlSyntaxError("the YAML parser failed on this input")
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlSyntaxError(sanitizeYAMLError(err.Error()) + indentationHint(data))
	}
	return resolve(&doc), nil
}

// quoted matches the quoted fragments of a parser message, which may echo input.
var quoted = regexp.MustCompile("'[^']*'|\"[^\"]*\"|`[^`]*`")

// punctuation is what a parser message may quote of YAML's own syntax.
const punctuation = ",:[]{}-?|>#&*!%@'\""

// sanitizeYAMLError keeps a parser message's line and problem, without any
// quoted input: a quoted fragment survives only when it is one punctuation
// character, as in "did not find expected ',' or '}'".
func sanitizeYAMLError(msg string) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = quoted.ReplaceAllStringFunc(msg, func(q string) string {
		if len(q) == 3 && strings.ContainsRune(punctuation, rune(q[1])) {
			return q
		}
		return "'…'"
	})
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// yamlSyntaxError answers an unparsable document.
func yamlSyntaxError(msg string) error {
	return &Error{
		Message:    "invalid YAML definition",
		Violations: []Violation{violation("", "yaml.syntax", "YAML syntax error: %s", msg)},
	}
}

// yamlLoader turns a node tree into a Definition, collecting every problem.
type yamlLoader struct {
	v      violations
	budget int // values input conversion may still produce
	paths  *PathMap
	depth  int // how deeply this document is nested in inline sub-workflows
}

// fail records one problem at a YAML path.
func (l *yamlLoader) fail(path, rule, format string, args ...any) {
	l.v.add(path, rule, format, args...)
}

// definition reads the document's top level.
func (l *yamlLoader) definition(root *yaml.Node) Definition {
	var d Definition
	if root == nil || root.Kind != yaml.MappingNode {
		l.fail("", "yaml.type", "the document must be a mapping")
		return d
	}
	meta := mapping(get(root, "metadata"))
	spec := mapping(get(root, "spec"))
	l.knownKeys(root, "", definitionKeys)
	l.knownKeys(meta, "metadata", metadataKeys)
	l.knownKeys(spec, "spec", specKeys)
	d.PlanID = l.placed("plan_id", field{root, "", "planId"}, field{meta, "metadata", "name"}, field{root, "", "name"})
	d.PlanVersion = l.placed("plan_version", field{root, "", "planVersion"}, field{root, "", "version"}, field{meta, "metadata", "version"})
	if d.PlanVersion == "" {
		d.PlanVersion = DefaultPlanVersion
	}
	d.DisplayName = l.placed("display_name", field{root, "", "displayName"}, field{meta, "metadata", "displayName"})
	if n, p := l.body(root, spec, "timeout", "timeout_ms"); n != nil {
		d.Timeout = l.duration(n, p)
	}
	if n, p := l.body(root, spec, "retention", "retention_ms"); n != nil {
		d.Retention = l.duration(n, p)
	}
	if n, p := l.body(root, spec, "requiresApproval", "requires_approval"); n != nil {
		d.RequiresApproval = l.boolean(n, p)
	}
	if n, p := l.body(root, spec, "maxConcurrentRuns", "max_concurrent_runs"); n != nil {
		d.MaxConcurrentRuns, _ = l.integer(n, p)
	}
	if n, p := l.body(root, spec, "priority", "priority"); n != nil {
		d.Priority, _ = l.integer(n, p)
	}
	if n, p := l.body(root, spec, "fairness", "fairness"); n != nil {
		d.Fairness = l.fairness(n, p)
	}
	if n, p := l.body(root, spec, "backpressure", "backpressure"); n != nil {
		d.Backpressure = l.backpressure(n, p)
	}
	if n, p := l.body(root, spec, "concurrency", "concurrency"); n != nil {
		d.Concurrency = l.runConcurrency(n, p)
	}
	if n, p := body(root, spec, "steps"); n != nil {
		l.paths.steps = p
		d.Actions = l.steps(n, p)
	}
	if n, p := body(root, spec, "compensation"); n != nil {
		l.compensations(n, p, d.Actions)
	}
	if n, p := l.body(root, spec, "result", "result_action_id"); n != nil {
		d.ResultActionID = l.str(n, p)
	}
	if n, p := l.body(root, spec, "searchAttributes", "search_attributes"); n != nil {
		d.SearchAttributes = l.searchAttributes(n, p)
	}
	if l.depth == 0 {
		nameInline(&d)
	}
	return d
}

// searchAttributes reads a mapping of search attribute names to values: a
// string is itself (a ${{ }} expression, or a literal keyword); a number or
// a bool is the expression of that literal, so that it keeps its type.
func (l *yamlLoader) searchAttributes(n *yaml.Node, path string) map[string]string {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "%s must be a mapping of attribute names to values", fieldName(path))
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, v := n.Content[i].Value, resolve(n.Content[i+1])
		at := path + "." + name
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			l.fail(at, "yaml.type", "a search attribute's value is a string, a number, a bool or a ${{ }} expression")
			continue
		}
		switch v.Tag {
		case "!!int", "!!float", "!!bool":
			out[name] = "${{ " + strings.ToLower(v.Value) + " }}"
		default:
			out[name] = v.Value
		}
	}
	return out
}

// field names one optional key of a mapping at a path.
type field struct {
	node *yaml.Node
	path string
	key  string
}

// first answers the string at the first of fields that is present, or "".
func (l *yamlLoader) first(fields ...field) string {
	for _, f := range fields {
		if n := get(f.node, f.key); n != nil {
			return l.str(n, join(f.path, f.key))
		}
	}
	return ""
}

// placed reads the first present of fields, like first, and records where
// the API's field api was read from.
func (l *yamlLoader) placed(api string, fields ...field) string {
	for _, f := range fields {
		if get(f.node, f.key) != nil {
			l.paths.top[api] = join(f.path, f.key)
			break
		}
	}
	return l.first(fields...)
}

// body is the package's body, recording where the API's field api was read
// from (the top level's key when it is absent).
func (l *yamlLoader) body(root, spec *yaml.Node, key, api string) (*yaml.Node, string) {
	n, p := body(root, spec, key)
	if n == nil && spec != nil {
		p = "spec." + key
	}
	l.paths.top[api] = p
	return n, p
}

// backpressure reads a backpressure mode.
func (l *yamlLoader) backpressure(n *yaml.Node, path string) BackpressureMode {
	m := BackpressureMode(strings.ToLower(l.str(n, path)))
	switch m {
	case BackpressureReject, BackpressureQueue, BackpressureDelay:
		return m
	}
	l.fail(path, "yaml.backpressure", "backpressure must be one of reject, queue, delay, got %s", short(string(m)))
	return ""
}

// body answers key from spec when it is there, else from the top level.
func body(root, spec *yaml.Node, key string) (*yaml.Node, string) {
	if n := get(spec, key); n != nil {
		return n, "spec." + key
	}
	return get(root, key), key
}

// steps reads the step list; list position is the order, from 1.
func (l *yamlLoader) steps(n *yaml.Node, path string) []Action {
	if n.Kind != yaml.SequenceNode {
		l.fail(path, "yaml.type", "%s must be a list", fieldName(path))
		return nil
	}
	actions := make([]Action, 0, len(n.Content))
	for i, s := range n.Content {
		actions = append(actions, l.step(resolve(s), indexPath(path, i), i+1))
	}
	return actions
}

// step reads one step.
func (l *yamlLoader) step(n *yaml.Node, path string, order int) Action {
	a := Action{Order: order}
	if n == nil || n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "a step must be a mapping")
		return a
	}
	l.knownKeys(n, path, stepKeys)
	a.ID = l.first(field{n, path, "name"}, field{n, path, "id"})
	a.Activity = l.first(field{n, path, "activity"}, field{n, path, "agent"})
	a.Queue = l.first(field{n, path, "queue"})
	if v := get(n, "dependsOn"); v != nil {
		a.DependsOn = l.strList(v, path+".dependsOn")
	}
	if v := get(n, "onFailure"); v != nil {
		a.OnFailure = l.onFailure(v, path+".onFailure")
	}
	a.Timeout = l.optDuration(n, path, "timeout")
	a.HeartbeatTimeout = l.optDuration(n, path, "heartbeatTimeout")
	a.ScheduleToStartTimeout = l.optDuration(n, path, "scheduleToStartTimeout")
	if v := get(n, "retryPolicy"); v != nil {
		a.Retry = l.retry(v, path+".retryPolicy")
	}
	if v := get(n, "input"); v != nil {
		a.Input = l.input(v, path+".input")
	}
	if v := get(n, "manual"); v != nil && l.boolean(v, path+".manual") {
		a.Completion = CompletionManual
	}
	a.ManualTimeout = l.optDuration(n, path, "manualTimeout")
	if v := get(n, "waitForSignal"); v != nil {
		a.WaitForSignal = l.signalWait(v, path+".waitForSignal")
	}
	if v := get(n, "secrets"); v != nil {
		a.Secrets = l.secrets(v, path+".secrets")
	}
	if v := get(n, "when"); v != nil {
		a.When = l.str(v, path+".when")
	}
	if v := get(n, "repeat"); v != nil {
		a.Repeat = l.repeat(v, path+".repeat")
	}
	a.Sleep = l.optDuration(n, path, "sleep")
	if v := get(n, "sleepUntil"); v != nil {
		a.SleepUntil = l.str(v, path+".sleepUntil")
	}
	if v := get(n, "concurrency"); v != nil {
		a.Concurrency = l.concurrency(v, path+".concurrency")
	}
	if v := get(n, "throttle"); v != nil {
		a.Throttle = l.throttle(v, path+".throttle")
	}
	if v := get(n, "forEach"); v != nil {
		a.ForEach = l.str(v, path+".forEach")
	}
	if v := get(n, "maxConcurrency"); v != nil {
		var ok bool
		if a.MaxConcurrency, ok = l.integer(v, path+".maxConcurrency"); ok && a.MaxConcurrency == 0 {
			l.fail(path+".maxConcurrency", "for_each.max_concurrency_range", "maxConcurrency must be between 1 and %d, got 0", MaxMaxConcurrency)
		}
	}
	if v := get(n, "fairness"); v != nil {
		a.Fairness = l.fairness(v, path+".fairness")
	}
	l.childStep(n, path, order-1, &a)
	if a.Activity == "" && a.WaitForSignal == nil && a.Completion != CompletionManual && !a.Sleeps() && a.Workflow == nil {
		a.Activity = a.ID
	}
	return a
}

// onFailure reads a failure policy.
func (l *yamlLoader) onFailure(n *yaml.Node, path string) OnFailure {
	s := OnFailure(strings.ToLower(l.str(n, path)))
	switch s {
	case OnFailureAbort, OnFailureSkip, OnFailureCompensate, OnFailureHold:
		return s
	}
	l.fail(path, "yaml.on_failure", "onFailure must be one of abort, skip, compensate, hold, got %s", short(string(s)))
	return ""
}

// signalWait reads waitForSignal: a signal name, or {name, timeout}.
func (l *yamlLoader) signalWait(n *yaml.Node, path string) *SignalWait {
	if n.Kind == yaml.ScalarNode {
		return &SignalWait{SignalName: l.str(n, path)}
	}
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "waitForSignal must be a signal name or a mapping")
		return nil
	}
	l.knownKeys(n, path, signalWaitKeys)
	return &SignalWait{
		SignalName: l.first(field{n, path, "name"}, field{n, path, "signal"}),
		Timeout:    l.optDuration(n, path, "timeout"),
	}
}

// repeat reads repeat: {until, maxIterations}.
func (l *yamlLoader) repeat(n *yaml.Node, path string) *Repeat {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "repeat must be a mapping of until and maxIterations")
		return nil
	}
	l.knownKeys(n, path, repeatKeys)
	r := &Repeat{Until: l.first(field{n, path, "until"})}
	if v := get(n, "maxIterations"); v != nil {
		r.MaxIterations, _ = l.integer(v, path+".maxIterations")
	}
	return r
}

// secrets reads a step's secret references: a list of {name, ref}.
func (l *yamlLoader) secrets(n *yaml.Node, path string) []SecretRef {
	if n.Kind != yaml.SequenceNode {
		l.fail(path, "yaml.type", "secrets must be a list of {name, ref}")
		return nil
	}
	out := make([]SecretRef, 0, len(n.Content))
	for i, c := range n.Content {
		p := indexPath(path, i)
		c = resolve(c)
		if c == nil || c.Kind != yaml.MappingNode {
			l.fail(p, "yaml.type", "a secret reference must be a mapping of name and ref")
			continue
		}
		l.knownKeys(c, p, secretKeys)
		out = append(out, SecretRef{Name: l.first(field{c, p, "name"}), Ref: l.first(field{c, p, "ref"})})
	}
	return out
}

// concurrency reads a step's concurrency: {key, limit, scope}.
func (l *yamlLoader) concurrency(n *yaml.Node, path string) *StepConcurrency {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "concurrency must be a mapping of key, limit and scope")
		return nil
	}
	l.knownKeys(n, path, concurrencyKeys)
	c := &StepConcurrency{Key: l.first(field{n, path, "key"}), Scope: FlowScope(l.first(field{n, path, "scope"}))}
	if v := get(n, "limit"); v != nil {
		c.Limit, _ = l.integer(v, path+".limit")
	}
	return c
}

// runConcurrency reads a definition's concurrency: {key, limit, strategy}.
// The strategy is checked here, since the API spells it as an enum (the
// engine checks it too, for a definition given in Go).
func (l *yamlLoader) runConcurrency(n *yaml.Node, path string) *RunConcurrency {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "concurrency must be a mapping of key, limit and strategy")
		return nil
	}
	l.knownKeys(n, path, runConcurrencyKeys)
	c := &RunConcurrency{Key: l.first(field{n, path, "key"}), Strategy: ConcurrencyStrategy(l.first(field{n, path, "strategy"}))}
	if v := get(n, "limit"); v != nil {
		c.Limit, _ = l.integer(v, path+".limit")
	}
	switch c.Strategy {
	case "", StrategyQueue, StrategyCancelNewest, StrategyCancelInProgress:
	default:
		l.fail(path+".strategy", "yaml.concurrency_strategy", "strategy must be one of queue, cancelNewest, cancelInProgress, got %s", short(string(c.Strategy)))
		c.Strategy = ""
	}
	return c
}

// throttle reads a step's throttle: {key, rate, burst, scope}.
func (l *yamlLoader) throttle(n *yaml.Node, path string) *StepThrottle {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "throttle must be a mapping of key, rate, burst and scope")
		return nil
	}
	l.knownKeys(n, path, throttleKeys)
	t := &StepThrottle{Key: l.first(field{n, path, "key"}), Rate: l.first(field{n, path, "rate"}),
		Scope: FlowScope(l.first(field{n, path, "scope"}))}
	if v := get(n, "burst"); v != nil {
		t.Burst, _ = l.integer(v, path+".burst")
	}
	return t
}

// fairness reads fairness: {key, weight}; weight is a number or a CEL
// expression answering one.
func (l *yamlLoader) fairness(n *yaml.Node, path string) *Fairness {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "fairness must be a mapping of key and weight")
		return nil
	}
	l.knownKeys(n, path, fairnessKeys)
	f := &Fairness{Key: l.first(field{n, path, "key"})}
	if v := get(n, "weight"); v != nil {
		if v = resolve(v); v == nil || v.Kind != yaml.ScalarNode {
			l.fail(path+".weight", "yaml.type", "weight must be a number or a CEL expression answering one")
		} else {
			f.Weight = v.Value
		}
	}
	return f
}

// compensations attaches the compensation list's hooks to the steps they name.
func (l *yamlLoader) compensations(n *yaml.Node, path string, actions []Action) {
	if n.Kind != yaml.SequenceNode {
		l.fail(path, "yaml.type", "compensation must be a list")
		return
	}
	byName := make(map[string]int, len(actions))
	for i := len(actions) - 1; i >= 0; i-- {
		if actions[i].ID != "" {
			byName[actions[i].ID] = i
		}
	}
	attached := make(map[int]int)
	for i, c := range n.Content {
		l.compensation(resolve(c), indexPath(path, i), i, actions, byName, attached)
	}
}

// compensation reads one entry of the compensation list.
func (l *yamlLoader) compensation(n *yaml.Node, path string, i int, actions []Action, byName map[string]int, attached map[int]int) {
	if n == nil || n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "a compensation entry must be a mapping")
		return
	}
	l.knownKeys(n, path, compensationKeys)
	step := get(n, "step")
	if step == nil {
		l.fail(path+".step", "yaml.compensation_step", "a compensation entry must name the step it undoes")
		return
	}
	name := l.str(step, path+".step")
	idx, ok := byName[name]
	switch {
	case step.Kind != yaml.ScalarNode:
		return
	case !ok:
		l.fail(path+".step", "yaml.compensation_step", "step must name a step of the definition, got %s", short(name))
		return
	}
	if j, dup := attached[idx]; dup {
		l.fail(path+".step", "yaml.compensation_duplicate", "step %s already has its compensation in entry %d", cycleID(name), j)
		return
	}
	attached[idx] = i
	l.paths.compensation[idx] = path
	hook := l.hook(n, path)
	actions[idx].Compensation = &hook
}

// hook reads a compensation hook's fields.
func (l *yamlLoader) hook(n *yaml.Node, path string) CompensationHook {
	h := CompensationHook{
		Operation: l.first(field{n, path, "operation"}, field{n, path, "action"}),
		Queue:     l.first(field{n, path, "queue"}, field{n, path, "agent"}),
		Timeout:   l.optDuration(n, path, "timeout"),
	}
	if v := get(n, "input"); v != nil {
		h.Input = l.input(v, path+".input")
	}
	if v := get(n, "retryPolicy"); v != nil {
		h.Retry = l.retry(v, path+".retryPolicy")
	}
	return h
}

// retry reads a retryPolicy.
func (l *yamlLoader) retry(n *yaml.Node, path string) RetryPolicy {
	var r RetryPolicy
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "retryPolicy must be a mapping")
		return r
	}
	l.knownKeys(n, path, retryKeys)
	r.MaxAttempts = l.attempts(n, path)
	if v := get(n, "backoff"); v != nil {
		r.Strategy = l.strategy(v, path+".backoff")
	}
	r.InitialBackoff = l.optDuration(n, path, "initialDelay")
	r.MaxBackoff = l.optDuration(n, path, "maxDelay")
	for _, key := range []string{"multiplier", "backoffMultiplier"} {
		if v := get(n, key); v != nil {
			r.Multiplier = l.number(v, join(path, key))
			break
		}
	}
	if v := get(n, "retryableErrors"); v != nil {
		r.RetryableErrors = l.errorClasses(v, path+".retryableErrors")
	}
	return r
}

// attempts reads maxRetries (n retries → n+1 attempts) or maxAttempts.
func (l *yamlLoader) attempts(n *yaml.Node, path string) int {
	retries, attempts := get(n, "maxRetries"), get(n, "maxAttempts")
	switch {
	case retries != nil && attempts != nil:
		l.fail(path, "yaml.conflict", "retryPolicy takes maxRetries or maxAttempts, not both")
	case retries != nil:
		k, ok := l.integer(retries, path+".maxRetries")
		if ok && (k < 0 || k > MaxRetryAttempts-1) {
			l.fail(path+".maxRetries", "yaml.max_retries",
				"maxRetries must be between 0 and %d (max_attempts 1 to %d), got %d", MaxRetryAttempts-1, MaxRetryAttempts, k)
		} else if ok {
			return k + 1
		}
	case attempts != nil:
		k, ok := l.integer(attempts, path+".maxAttempts")
		if ok && (k < 1 || k > MaxRetryAttempts) {
			l.fail(path+".maxAttempts", "yaml.max_attempts",
				"maxAttempts must be between 1 and %d, got %d", MaxRetryAttempts, k)
		} else if ok {
			return k
		}
	}
	return 0
}

// strategy reads a backoff strategy.
func (l *yamlLoader) strategy(n *yaml.Node, path string) BackoffStrategy {
	s := BackoffStrategy(strings.ToLower(l.str(n, path)))
	switch s {
	case BackoffConstant, BackoffLinear, BackoffExponential:
		return s
	}
	l.fail(path, "yaml.backoff", "backoff must be one of constant, linear, exponential, got %s", short(string(s)))
	return ""
}

// errorClasses reads retryableErrors, accepting the YAML shape's spelling (docs/semantics.md#yaml-definitions)
// ("Agent Error", "Rate-Limit") of the API's classes.
func (l *yamlLoader) errorClasses(n *yaml.Node, path string) []ErrorClass {
	names := l.strList(n, path)
	out := make([]ErrorClass, 0, len(names))
	for i, s := range names {
		c := ErrorClass(strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(s)))
		if !knownErrorClass(c) {
			l.fail(indexPath(path, i), "yaml.error_class", "retryableErrors[%d] must be a known error class, got %s", i, short(s))
			continue
		}
		out = append(out, c)
	}
	return out
}

// optDuration reads key of n as a duration, or 0 when it is absent.
func (l *yamlLoader) optDuration(n *yaml.Node, path, key string) Duration {
	if v := get(n, key); v != nil {
		return l.duration(v, join(path, key))
	}
	return 0
}

// duration reads a Go duration ("500ms", "5m", "1h30m"); a bare number is
// refused, since its unit would be a guess.
func (l *yamlLoader) duration(n *yaml.Node, path string) Duration {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!int" || n.ShortTag() == "!!float" {
		l.fail(path, "yaml.duration", "%s must be a duration with a unit, like \"5m\" or \"500ms\"", fieldName(path))
		return 0
	}
	d, err := time.ParseDuration(n.Value)
	switch {
	case err != nil:
		l.fail(path, "yaml.duration", "%s must be a duration like \"5m\" or \"1h30m\", got %s", fieldName(path), short(n.Value))
	case d < 0:
		l.fail(path, "yaml.duration", "%s must not be negative, got %s", fieldName(path), d)
	default:
		return Duration(d)
	}
	return 0
}
