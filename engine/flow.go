package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/expr"
	"github.com/weft-dev/weft/engine/flowcontrol"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Step flow control (docs/semantics.md#step-concurrency,
// docs/semantics.md#step-throttle): a step's concurrency key and throttle
// key are CEL expressions, compiled when a definition is submitted and
// evaluated when the step's activity task is created; the values are kept
// in the task record (runcodec.TaskFlow). A claim of such a task reads the
// key's slots and bucket before its rule runs (flowclaim.go) and changes
// them in the batch that claims the task; every way out of the claim gives
// the slot back in its own batch. Compensation and verify tasks are not
// flow-controlled.

// flowPlan is a definition's compiled flow control, per action index.
type flowPlan struct {
	steps []flowStep
}

// flowStep is one action's compiled flow control (zero: none).
type flowStep struct {
	concurrency *expr.Program
	throttleKey *expr.Program
	throttle    flowcontrol.Throttle
	// fair is the step's fairness (its own, else the definition's; nil:
	// none), docs/semantics.md#fairness.
	fair *fairStep
}

// has reports whether the step has any flow control.
func (s *flowStep) has() bool { return s.concurrency != nil || s.throttleKey != nil }

// flowEnv is the expression environment every key is compiled in.
var flowEnv = sync.OnceValues(func() (*expr.Env, error) { return expr.NewEnv(expr.Limits{}) })

// flowPlans remembers compiled flow control by plan SHA-256.
var flowPlans planCache[*flowPlan]

// flowPlanOf answers the compiled flow control of a prepared definition,
// or the violations of its flow-control fields (their API paths, under
// "definition.").
func flowPlanOf(d *definition.Definition, sha string) (*flowPlan, error) {
	if !hasFlow(d) {
		return nil, nil
	}
	return flowPlans.get(sha, func() (*flowPlan, []FieldViolation) { return compileFlow(d) })
}

// planCache remembers what the engine compiles from a prepared definition
// (its flow control, its run concurrency key), by plan SHA-256: bounded,
// and emptied when full (a deployment submits few distinct definitions).
type planCache[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// planCacheSize bounds each planCache.
const planCacheSize = 256

// get answers what compile made of the definition of sha, compiling it on
// a miss; a definition compile finds violations in is refused
// (invalid_argument, naming their paths) and not remembered.
func (c *planCache[T]) get(sha string, compile func() (T, []FieldViolation)) (T, error) {
	c.mu.Lock()
	v, ok := c.m[sha]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, violations := compile()
	if len(violations) > 0 {
		var zero T
		return zero, fault.InvalidArgument("invalid definition", violations...)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= planCacheSize {
		c.m = make(map[string]T)
	}
	c.m[sha] = v
	c.mu.Unlock()
	return v, nil
}

// hasFlow reports whether any action of d has flow control or fairness.
func hasFlow(d *definition.Definition) bool {
	if d.Fairness != nil {
		return true
	}
	for i := range d.Actions {
		if d.Actions[i].Concurrency != nil || d.Actions[i].Throttle != nil || d.Actions[i].Fairness != nil {
			return true
		}
	}
	return false
}

// compileFlow checks and compiles every action's flow control.
func compileFlow(d *definition.Definition) (*flowPlan, []FieldViolation) {
	env, err := flowEnv()
	if err != nil {
		return nil, []FieldViolation{fault.Violation("definition", "flow.environment", "the expression environment failed to build")}
	}
	p := &flowPlan{steps: make([]flowStep, len(d.Actions))}
	var vs []FieldViolation
	known := make([]string, len(d.Actions))
	for i := range d.Actions {
		known[i] = d.Actions[i].ID
	}
	var top *fairStep
	if d.Fairness != nil {
		top = compileFairness(env, d.Fairness, "definition.fairness", expr.Scope{Known: known}, &vs)
	}
	for i := range d.Actions {
		a := &d.Actions[i]
		path := fmt.Sprintf("definition.actions[%d]", i)
		scope := expr.Scope{Steps: upstreamOf(d, i), Known: known}
		p.steps[i].fair = top
		if a.Fairness != nil {
			p.steps[i].fair = compileFairness(env, a.Fairness, path+".fairness", scope, &vs)
			if a.Activity == "" {
				vs = append(vs, fault.Violation(path, "flow.activity", "fairness applies to a step's activity tasks: this step has no activity"))
			}
		}
		if c := a.Concurrency; c != nil {
			p.steps[i].concurrency = compileKey(env, c.Key, path+".concurrency.key", scope, &vs)
			if err := flowcontrol.ValidLimit(c.Limit); err != nil {
				vs = append(vs, flowViolation(path+".concurrency.limit", err))
			}
			checkScope(c.Scope, path+".concurrency.scope", &vs)
		}
		if t := a.Throttle; t != nil {
			p.steps[i].throttleKey = compileKey(env, t.Key, path+".throttle.key", scope, &vs)
			rate, err := flowcontrol.ParseRate(t.Rate)
			if err != nil {
				vs = append(vs, flowViolation(path+".throttle.rate", err))
			} else if p.steps[i].throttle, err = flowcontrol.NewThrottle(rate, t.Burst); err != nil {
				vs = append(vs, flowViolation(path+".throttle.burst", err))
			}
			checkScope(t.Scope, path+".throttle.scope", &vs)
		}
		if (a.Concurrency != nil || a.Throttle != nil) && a.Activity == "" {
			vs = append(vs, fault.Violation(path, "flow.activity", "concurrency and throttle apply to a step's activity tasks: this step has no activity"))
		}
	}
	return p, vs
}

// compileKey compiles a key expression, which must answer a string.
func compileKey(env *expr.Env, src, path string, scope expr.Scope, vs *[]FieldViolation) *expr.Program {
	if src == "" {
		*vs = append(*vs, fault.Violation(path, "flow.key_required", "%s is required: a CEL expression answering a string", shortPath(path)))
		return nil
	}
	prg, err := env.CompileKey(src, path, expr.String, scope)
	if err != nil {
		*vs = append(*vs, exprViolations(path, err)...)
		return nil
	}
	return prg
}

// exprViolations answers an expression's errors as violations of path.
func exprViolations(path string, err error) []FieldViolation {
	var list expr.Errors
	if errors.As(err, &list) {
		out := make([]FieldViolation, 0, len(list))
		for _, e := range list {
			out = append(out, fault.Violation(path, e.Rule, "%s", exprMessage(e)))
		}
		return out
	}
	var one *expr.Error
	if errors.As(err, &one) {
		return []FieldViolation{fault.Violation(path, one.Rule, "%s", exprMessage(one))}
	}
	return []FieldViolation{fault.Violation(path, expr.RuleEval, "%s", err.Error())}
}

// exprMessage is an expression's error without its path (the violation
// names the field, which a YAML file places elsewhere): its position
// within the expression, when it has one, and the message.
func exprMessage(e *expr.Error) string {
	if e.Column > 0 && e.Line > 1 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	if e.Column > 0 {
		return fmt.Sprintf("column %d: %s", e.Column, e.Message)
	}
	return e.Message
}

// flowViolation answers a flowcontrol rule broken at path.
func flowViolation(path string, err error) FieldViolation {
	var fe *flowcontrol.Error
	if errors.As(err, &fe) {
		return fault.Violation(path, "flow."+fe.Rule, "%s: %s", shortPath(path), fe.Message)
	}
	return fault.Violation(path, "flow.invalid", "%s: %s", shortPath(path), err.Error())
}

// checkScope checks a flow-control scope: plan (or unset) or tenant.
func checkScope(s definition.FlowScope, path string, vs *[]FieldViolation) {
	if s != "" && s != definition.ScopePlan && s != definition.ScopeTenant {
		*vs = append(*vs, fault.Violation(path, "flow.scope_known", "scope must be plan or tenant"))
	}
}

// shortPath is a path's last segment ("limit" of "…concurrency.limit").
func shortPath(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

// upstreamOf answers the ids of the actions upstream of action i: those
// it depends on, transitively, in a DAG; those of a smaller order in a
// sequential definition.
func upstreamOf(d *definition.Definition, i int) []string {
	if !d.DAG && !dependsAny(d) {
		var out []string
		for _, a := range d.Actions {
			if a.Order < d.Actions[i].Order {
				out = append(out, a.ID)
			}
		}
		return out
	}
	index := make(map[string]int, len(d.Actions))
	for j, a := range d.Actions {
		index[a.ID] = j
	}
	seen := map[int]bool{}
	var out []string
	var walk func(j int)
	walk = func(j int) {
		for _, dep := range d.Actions[j].DependsOn {
			k, ok := index[dep]
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, dep)
			walk(k)
		}
	}
	walk(i)
	return out
}

// dependsAny reports whether any action of d declares depends_on.
func dependsAny(d *definition.Definition) bool {
	for _, a := range d.Actions {
		if len(a.DependsOn) > 0 {
			return true
		}
	}
	return false
}

// checkFlowAtSubmit evaluates, over the submission's input and run id, the
// keys that read neither steps' outputs, so that one that does not answer
// a string is refused at submission, naming its field.
func checkFlowAtSubmit(rec *record.Run, p *flowPlan) error {
	if p == nil {
		return nil
	}
	var vs []FieldViolation
	vars := expr.Vars{Input: rec.Input, RunID: rec.RunID}.Shared()
	checked := map[*fairStep]bool{}
	for i := range p.steps {
		s := &p.steps[i]
		path := fmt.Sprintf("definition.actions[%d]", i)
		for _, k := range []struct {
			prg  *expr.Program
			path string
		}{{s.concurrency, path + ".concurrency.key"}, {s.throttleKey, path + ".throttle.key"}} {
			if k.prg == nil || len(k.prg.Steps()) > 0 {
				continue
			}
			if _, err := k.prg.EvalString(vars); err != nil {
				vs = append(vs, exprViolations(k.path, err)...)
			}
		}
		if f := s.fair; f != nil && !checked[f] {
			checked[f] = true
			vs = append(vs, f.checkAtSubmit(vars)...)
		}
	}
	if len(vs) > 0 {
		return fault.InvalidArgument("invalid definition: a flow-control key does not evaluate over the input", vs...)
	}
	return nil
}

// flowOfTask evaluates a's flow-control keys for its new activity task:
// over the run's input, its id and the outputs of the upstream steps that
// produced one. Nil: a has none. A key that fails to evaluate is recorded
// as the task's Err: the task is never claimed, and its attempt fails.
func flowOfTask(c *change, a *definition.Action) *runcodec.TaskFlow {
	if a.Concurrency == nil && a.Throttle == nil {
		return nil
	}
	s := flowStepOf(c.run, a.ID)
	f := &runcodec.TaskFlow{}
	if s == nil {
		f.Err = "flow_compile: the step's flow control did not compile"
		return f
	}
	vars := flowVars(c, s)
	var err error
	if s.concurrency != nil {
		if f.ConcurrencyKey, err = s.concurrency.EvalString(vars); err != nil {
			f.Err = flowErr(err)
		}
	}
	if s.throttleKey != nil && f.Err == "" {
		if f.ThrottleKey, err = s.throttleKey.EvalString(vars); err != nil {
			f.Err = flowErr(err)
		}
	}
	return f
}

// flowErr answers an evaluation's error as a task records it: its rule and
// message (which never quote a value).
func flowErr(err error) string {
	var one *expr.Error
	if errors.As(err, &one) {
		return one.Error()
	}
	return err.Error()
}

// flowVars are what a key reads: the run's input and id, and the outputs
// of the steps it names that have one.
func flowVars(c *change, s *flowStep) expr.Vars {
	v := expr.Vars{Input: c.run.Input, RunID: c.run.RunID}
	var ids []string
	for _, p := range []*expr.Program{s.concurrency, s.throttleKey} {
		if p != nil {
			ids = append(ids, p.Steps()...)
		}
	}
	if len(ids) > 0 {
		v.Steps = make(map[string]json.RawMessage, len(ids))
		for _, id := range ids {
			if st := c.state.Step(id); st != nil && st.Status == runstate.StepSucceeded && len(st.Output) > 0 {
				v.Steps[id] = st.Output
			}
		}
	}
	return v.Shared()
}

// flowStepOf answers the compiled flow control of the run's action id, or
// nil when it has none (or it does not compile, which submission refused).
func flowStepOf(run *record.Run, actionID string) *flowStep {
	p, err := flowPlanOf(&run.Definition, run.PlanSHA256)
	if err != nil || p == nil {
		return nil
	}
	if parent, _, ok := definition.ParseItemID(actionID); ok {
		actionID = parent // a fan-out's item has its step's flow control (docs/semantics.md#for-each)
	}
	for i := range run.Definition.Actions {
		if run.Definition.Actions[i].ID == actionID && p.steps[i].has() {
			return &p.steps[i]
		}
	}
	return nil
}

// fairStepOf answers the compiled fairness of the run's action id, or nil
// when it has none.
func fairStepOf(run *record.Run, actionID string) *fairStep {
	p, err := flowPlanOf(&run.Definition, run.PlanSHA256)
	if err != nil || p == nil {
		return nil
	}
	if parent, _, ok := definition.ParseItemID(actionID); ok {
		actionID = parent // a fan-out's item has its step's fairness (docs/semantics.md#for-each)
	}
	for i := range run.Definition.Actions {
		if run.Definition.Actions[i].ID == actionID {
			return p.steps[i].fair
		}
	}
	return nil
}

// scopeOf names who shares a key: "t" (the tenant) or "p:{plan}".
func scopeOf(run *record.Run, s definition.FlowScope) string {
	if definition.ScopeOf(s) == definition.ScopeTenant {
		return "t"
	}
	return "p:" + run.Definition.PlanID
}

// slotPrefix is the prefix of a concurrency key's slots.
func slotPrefix(run *record.Run, a *definition.Action, key string) []byte {
	return keyspace.FlowSlot.KeyPrefix(run.TenantID, scopeOf(run, a.Concurrency.Scope), key)
}

// slotKey is slot i of a concurrency key.
func slotKey(run *record.Run, a *definition.Action, key string, i int) []byte {
	return keyspace.FlowSlot.Key(run.TenantID, scopeOf(run, a.Concurrency.Scope), key, strconv.Itoa(i))
}

// bucketKey is a throttle key's bucket.
func bucketKey(run *record.Run, a *definition.Action, key string) []byte {
	return keyspace.FlowThrottle.Key(run.TenantID, scopeOf(run, a.Throttle.Scope), key)
}

// releaseFlowSlot gives back the concurrency slot the step's task holds,
// in the decision that ends the claim, and wakes the task's queue: a poll
// waiting for the slot claims within its next cycle.
func releaseFlowSlot(c *change, st *runstate.StepState, queue string) {
	if st == nil || st.FlowSlot == "" {
		return
	}
	c.ops = append(c.ops, store.Delete([]byte(st.FlowSlot)))
	st.FlowSlot = ""
	c.dirty = true
	c.flowWakes = append(c.flowWakes, queue)
}

// releaseAllFlowSlots gives back every slot the run's steps hold (the run
// ended).
func releaseAllFlowSlots(c *change) {
	for _, st := range c.state.Steps {
		if st.FlowSlot != "" {
			queue := ""
			if a := c.run.Action(st.ActionID); a != nil {
				queue = a.Queue
			}
			releaseFlowSlot(c, st, queueOrDefault(queue))
		}
	}
}

// queueOrDefault answers the queue a task of an action with queue goes to.
func queueOrDefault(q string) string {
	if q == "" {
		return definition.DefaultQueue
	}
	return q
}

// flowKeyFailed fails the attempt of a task whose flow-control key did not
// evaluate (a validation error, which is not retried by default): the task
// leaves its queue in the same batch.
func (c dueTimer) flowKeyFailed(task *record.Task, a *definition.Action, st *runstate.StepState, why string) error {
	c.del(task.ReadyKey())
	task.State, task.StartDue = record.TaskLost, time.Time{}
	c.put(record.TaskKey(task.TaskID), task)
	st.ReadyKey = ""
	stepErr := &runstate.StepError{Class: definition.ErrorValidation, Message: "the step's flow-control key did not evaluate: " + why}
	return c.rules().FailAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptFailed, Err: stepErr})
}
