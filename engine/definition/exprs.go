package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/expr"
)

// The bounds of a step's expressions.
const (
	// MaxRepeatIterations is the largest repeat.max_iterations (docs/semantics.md#repeat).
	MaxRepeatIterations = 1000
	// MinSleep is the shortest sleep that may be set.
	MinSleep = Duration(time.Millisecond)
)

// The environment every expression of a definition is compiled in, and the
// programs compiled in it, kept so that a run's decisions do not compile an
// expression each time they evaluate it. A program is found by everything
// that went into compiling it (its kind, path, scope and source), so the
// same expression in two definitions is one entry, and one whose scope
// differs is another.
var (
	exprEnv   = mustEnv()
	programMu sync.Mutex
	programs  = map[programKey]programEntry{}
)

// maxPrograms bounds the programs kept.
const maxPrograms = 4096

// programKey is what a compiled program depends on; the scope by a hash of
// its ids (scopeHash), which a hit checks against the entry's own.
type programKey struct {
	kind    expr.Kind
	tmpl    bool
	runtime bool // kept for evaluation: the scope is not part of it (runtimeProgram)
	fanOut  bool // compiled with item and index declared (docs/semantics.md#for-each)
	path    string
	src     string
	scope   uint64
}

// programEntry is a kept program (*expr.Program or *expr.Template) and the
// scope it was compiled in (nil for a runtime one).
type programEntry struct {
	prog         any
	steps, known []string
}

func mustEnv() *expr.Env {
	e, err := expr.NewEnv(expr.Limits{})
	if err != nil {
		panic(err) // the environment's options are fixed: a failure is a bug caught by every test
	}
	return e
}

// scope answers what an expression of the action at index i may read: the
// steps upstream of it (its transitive dependencies in a DAG, the steps
// before it in a sequence), and the action itself when self is set (a
// repeat.until reads its own last iteration).
func (d *Definition) scope(i int, self bool) expr.Scope { return d.scopes().of(d, i, self) }

// scopes is what the scopes of a definition's expressions are made of,
// worked out once for all of them: every id, and in a sequence the ids in
// dispatch order, each action's upstream being a prefix of them.
type scopes struct {
	known   []string
	ordered []string // a sequence's ids in dispatch order
	pos     []int    // each action's position in ordered
}

func (d *Definition) scopes() *scopes {
	sc := &scopes{known: make([]string, len(d.Actions))}
	for j := range d.Actions {
		sc.known[j] = d.Actions[j].ID
	}
	if d.sequential() {
		idx := make([]int, len(d.Actions))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(x, y int) int {
			a, b := &d.Actions[x], &d.Actions[y]
			if a.Order != b.Order {
				return a.Order - b.Order
			}
			return strings.Compare(a.ID, b.ID)
		})
		sc.ordered, sc.pos = make([]string, len(idx)), make([]int, len(idx))
		for k, j := range idx {
			sc.ordered[k], sc.pos[j] = d.Actions[j].ID, k
		}
	}
	return sc
}

// of answers the scope of an expression of the action at index i.
func (sc *scopes) of(d *Definition, i int, self bool) expr.Scope {
	var up []string
	if sc.pos != nil {
		up = sc.ordered[:sc.pos[i]:sc.pos[i]]
	} else {
		up = d.ancestors(i)
	}
	if self {
		up = append(up, d.Actions[i].ID)
	}
	return expr.Scope{Steps: up, Known: sc.known}
}

// scopeHash hashes a scope's ids (FNV-1a, each id followed by a 0 byte).
func scopeHash(s expr.Scope) uint64 {
	h := uint64(14695981039346656037)
	add := func(id string) {
		for k := 0; k < len(id); k++ {
			h = (h ^ uint64(id[k])) * 1099511628211
		}
		h = (h ^ 0) * 1099511628211
	}
	for _, id := range s.Steps {
		add(id)
	}
	h = (h ^ 1) * 1099511628211
	for _, id := range s.Known {
		add(id)
	}
	return h
}

// sequential reports whether the definition runs by order alone
// (docs/semantics.md#sequential-order).
func (d *Definition) sequential() bool { return !d.DAG && !hasDependencies(d.Actions) }

// ancestors answers the ids the action at index i depends on, directly or
// through others, each once; a cycle (refused elsewhere) ends the walk.
func (d *Definition) ancestors(i int) []string {
	index := make(map[string]int, len(d.Actions))
	for j := range d.Actions {
		if _, dup := index[d.Actions[j].ID]; !dup {
			index[d.Actions[j].ID] = j
		}
	}
	seen := map[string]bool{d.Actions[i].ID: true}
	var out []string
	stack := append([]string(nil), d.Actions[i].DependsOn...)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		j, ok := index[id]
		if seen[id] || !ok {
			continue
		}
		seen[id] = true
		out = append(out, id)
		stack = append(stack, d.Actions[j].DependsOn...)
	}
	return out
}

// hasTemplate reports whether raw may hold an expression string (a ${{ …
// }}): only then is it compiled as a template.
func hasTemplate(raw json.RawMessage) bool { return bytes.Contains(raw, []byte("${{")) }

// compile answers the program of src at path in scope s, compiled once.
func compile(src, path string, k expr.Kind, s expr.Scope) (*expr.Program, error) {
	key := programKey{kind: k, path: path, src: src, scope: scopeHash(s), fanOut: s.FanOut}
	if p, ok := cached(key, s); ok {
		return p.(*expr.Program), nil
	}
	p, err := exprEnv.CompileKey(src, path, k, s)
	if err != nil {
		return nil, err
	}
	keep(key, programEntry{prog: p, steps: s.Steps, known: s.Known})
	return p, nil
}

// compileTemplate answers the template of raw at path in scope s, compiled once.
func compileTemplate(raw json.RawMessage, path string, s expr.Scope) (*expr.Template, error) {
	key := programKey{tmpl: true, path: path, src: string(raw), scope: scopeHash(s), fanOut: s.FanOut}
	if t, ok := cached(key, s); ok {
		return t.(*expr.Template), nil
	}
	t, err := exprEnv.CompileTemplate(raw, path, s)
	if err != nil {
		return nil, err
	}
	keep(key, programEntry{prog: t, steps: s.Steps, known: s.Known})
	return t, nil
}

// cached answers the program kept at key, when it was compiled in scope s
// (a hash collision is a miss).
func cached(key programKey, s expr.Scope) (any, bool) {
	programMu.Lock()
	e, ok := programs[key]
	programMu.Unlock()
	if !ok || (!key.runtime && (!slices.Equal(e.steps, s.Steps) || !slices.Equal(e.known, s.Known))) {
		return nil, false
	}
	return e.prog, true
}

func keep(key programKey, e programEntry) {
	programMu.Lock()
	PutBounded(programs, key, e, maxPrograms)
	programMu.Unlock()
}

// checkExpressions compiles every expression of the definition, adding a
// violation for each problem at the expression's own path.
func (v *violations) checkExpressions(d *Definition) {
	v.checkSearchAttributes(d)
	var sc *scopes // worked out for the first expression
	scope := func(i int, self bool) expr.Scope {
		if sc == nil {
			sc = d.scopes()
		}
		return sc.of(d, i, self)
	}
	for i := range d.Actions {
		a := &d.Actions[i]
		p := actionPath(i)
		if hasTemplate(a.Input) && json.Valid(a.Input) {
			s := scope(i, false)
			s.FanOut = a.ForEach != "" // an item's input reads item and index (docs/semantics.md#for-each)
			_, err := compileTemplate(a.Input, p+".input", s)
			v.exprErr(err)
		}
		if strings.TrimSpace(a.ForEach) != "" {
			_, err := compile(a.ForEach, p+".for_each", expr.List, scope(i, false))
			v.exprErr(err)
		}
		if a.When != "" {
			_, err := compile(a.When, p+".when", expr.Bool, scope(i, false))
			v.exprErr(err)
		}
		if a.SleepUntil != "" {
			_, err := compile(a.SleepUntil, p+".sleep_until", expr.Timestamp, scope(i, false))
			v.exprErr(err)
		}
		if r := a.Repeat; r != nil && r.Until != "" {
			_, err := compile(r.Until, p+".repeat.until", expr.Bool, scope(i, true))
			v.exprErr(err)
		}
	}
}

// The bounds of a definition's search attributes (docs/semantics.md#search-attributes).
const (
	// MaxSearchAttributes is the most a definition sets.
	MaxSearchAttributes = 100
	// maxSearchAttributeName is the longest name; maxSearchKeyword the
	// longest literal keyword, in bytes.
	maxSearchAttributeName = 64
	maxSearchKeyword       = 256
)

// searchAttributeName is the pattern of a search attribute's name (the
// engine also refuses the query language's field names and words).
var searchAttributeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// checkSearchAttributes checks a definition's search attributes: each
// name, each literal's length, each expression compiled over the input.
func (v *violations) checkSearchAttributes(d *Definition) {
	if len(d.SearchAttributes) > MaxSearchAttributes {
		v.add("search_attributes", "search_attributes.count", "a definition sets at most %d search attributes", MaxSearchAttributes)
	}
	for _, name := range slices.Sorted(maps.Keys(d.SearchAttributes)) {
		path := "search_attributes." + name
		if len(name) > maxSearchAttributeName || !searchAttributeName.MatchString(name) {
			v.add(path, "search_attributes.name", "a search attribute's name is a letter then letters, digits or '_', at most %d", maxSearchAttributeName)
			continue
		}
		value := d.SearchAttributes[name]
		if src, _, ok := expr.Expression(value); ok {
			_, err := compile(src, path, expr.JSON, expr.Scope{})
			v.exprErr(err)
			continue
		}
		if len(expr.Literal(value)) > maxSearchKeyword {
			v.add(path, "search_attributes.value", "a keyword is at most %d bytes", maxSearchKeyword)
		}
	}
}

// SearchAttributeValue is one search attribute a definition gives a run:
// its type (keyword, int, double, bool, time) and its value as JSON.
type SearchAttributeValue struct {
	Name  string
	Type  string
	Value json.RawMessage
}

// EvalSearchAttributes answers the search attributes d gives a run with
// input, by name: each expression evaluated (its value's type is the
// attribute's), each literal a keyword. The error names the attribute's
// path, never a value.
func (d *Definition) EvalSearchAttributes(input json.RawMessage, runID string) ([]SearchAttributeValue, error) {
	if len(d.SearchAttributes) == 0 {
		return nil, nil
	}
	out := make([]SearchAttributeValue, 0, len(d.SearchAttributes))
	vars := expr.Vars{Input: input, RunID: runID}.Shared()
	for _, name := range slices.Sorted(maps.Keys(d.SearchAttributes)) {
		value := d.SearchAttributes[name]
		src, _, ok := expr.Expression(value)
		if !ok {
			b, _ := json.Marshal(expr.Literal(value)) // a string always marshals
			out = append(out, SearchAttributeValue{Name: name, Type: "keyword", Value: b})
			continue
		}
		p, err := compile(src, "search_attributes."+name, expr.JSON, expr.Scope{})
		if err != nil {
			return nil, err
		}
		typ, raw, err := p.EvalSearchAttribute(vars)
		if err != nil {
			return nil, err
		}
		out = append(out, SearchAttributeValue{Name: name, Type: typ, Value: raw})
	}
	return out, nil
}

// exprErr adds each problem of a compile's error.
func (v *violations) exprErr(err error) {
	var es expr.Errors
	switch {
	case err == nil:
	case errors.As(err, &es):
		for _, e := range es {
			v.add(e.Path, e.Rule, "%s", exprMessage(e))
		}
	default:
		v.add("", expr.RuleSyntax, "%s", err.Error())
	}
}

// exprMessage is an expression error's message without its path (a
// violation names it): "column 7: undeclared reference to 'inptu'".
func exprMessage(e *expr.Error) string {
	switch {
	case e.Line > 1:
		return "line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Column) + ": " + e.Message
	case e.Column > 0:
		return "column " + strconv.Itoa(e.Column) + ": " + e.Message
	}
	return e.Message
}

// checkStepKinds checks the keys that make a step something else than an
// activity: a sleep, a repeat.
func (v *violations) checkStepKinds(p string, a Action) {
	if a.Sleep != 0 || a.SleepUntil != "" {
		switch {
		case a.Sleep != 0 && a.SleepUntil != "":
			v.add(p, "sleep.one_of", "a step sleeps for sleep_ms or until sleep_until, not both")
		case a.Sleep != 0 && (a.Sleep < MinSleep || a.Sleep > MaxTimeout):
			v.add(p+".sleep_ms", "sleep.range", "sleep_ms must be between %s and %s, got %s", MinSleep.D(), MaxTimeout.D(), a.Sleep.D())
		}
		if a.Activity != "" || a.WaitForSignal != nil || a.Completion == CompletionManual || a.Compensation != nil || a.Repeat != nil {
			v.add(p, "sleep.kind", "a sleep step has no activity, wait_for_signal, manual completion, compensation or repeat")
		}
	}
	if r := a.Repeat; r != nil {
		if strings.TrimSpace(r.Until) == "" {
			v.add(p+".repeat.until", "repeat.until_required", "repeat.until must be a bool expression")
		}
		if r.MaxIterations < 1 || r.MaxIterations > MaxRepeatIterations {
			v.add(p+".repeat.max_iterations", "repeat.max_iterations_range",
				"repeat.max_iterations is required, between 1 and %d, got %d", MaxRepeatIterations, r.MaxIterations)
		}
		if a.Activity == "" && a.Workflow == nil {
			v.add(p+".repeat", "repeat.kind", "repeat needs an activity or sub-workflow step")
		}
	}
}

// Values are what a step's expressions read, as the engine holds them.
type Values struct {
	// Input is the run's input.
	Input json.RawMessage
	// RunID is the run's id.
	RunID string
	// Output answers a finished step's output, nil when it has none.
	Output func(id string) json.RawMessage
}

// vars answers v as the variables of an expression of the action at index
// i that reads the steps ids: the outputs of those it may read (upstream,
// or itself when self) that have one.
func (d *Definition) vars(i int, self bool, ids []string, v Values) expr.Vars {
	steps := make(map[string]json.RawMessage, len(ids))
	for _, id := range ids {
		if !d.readable(i, self, id) {
			continue
		}
		if out := v.Output(id); len(out) > 0 {
			steps[id] = out
		}
	}
	return expr.Vars{Input: v.Input, Steps: steps, RunID: v.RunID}
}

// readable reports whether an expression of the action at index i may read
// step id: a step upstream of it (scope's rule), or itself when self.
func (d *Definition) readable(i int, self bool, id string) bool {
	a := &d.Actions[i]
	if id == a.ID {
		return self
	}
	if d.sequential() {
		for j := range d.Actions {
			if b := &d.Actions[j]; b.ID == id {
				return b.Order < a.Order || (b.Order == a.Order && b.ID < a.ID)
			}
		}
		return false
	}
	return slices.Contains(d.ancestors(i), id)
}

// runtimeProgram answers the program of src, the expression at key of the
// action at index i, for an evaluation. The definition was validated, so
// the expression compiles in its scope, and its program does not depend on
// the scope (only what compiles does): it is kept by its kind, path and
// source alone, and the scope is worked out only to compile it the first
// time.
func (d *Definition) runtimeProgram(i int, src, path string, k expr.Kind, self bool) (*expr.Program, error) {
	key := programKey{kind: k, runtime: true, path: path, src: src}
	if p, ok := cached(key, expr.Scope{}); ok {
		return p.(*expr.Program), nil
	}
	p, err := exprEnv.CompileKey(src, path, k, d.scope(i, self))
	if err != nil {
		return nil, err
	}
	keep(key, programEntry{prog: p})
	return p, nil
}

// runtimeTemplate is runtimeProgram for an input template.
func (d *Definition) runtimeTemplate(i int, raw json.RawMessage, path string) (*expr.Template, error) {
	key := programKey{tmpl: true, runtime: true, path: path, src: string(raw)}
	if t, ok := cached(key, expr.Scope{}); ok {
		return t.(*expr.Template), nil
	}
	t, err := exprEnv.CompileTemplate(raw, path, d.scope(i, false))
	if err != nil {
		return nil, err
	}
	keep(key, programEntry{prog: t})
	return t, nil
}

// ExprError is an expression's failure at run time: its YAML path (as
// steps[i].<key> spells it) and what went wrong, never a value it read.
type ExprError struct {
	Path    string
	Message string
}

func (e *ExprError) Error() string { return e.Path + ": " + e.Message }

// runtimeError answers a compile or evaluation error as an *ExprError.
func runtimeError(path string, err error) error {
	var es expr.Errors
	var e *expr.Error
	switch {
	case errors.As(err, &es) && len(es) > 0:
		e = es[0]
	case errors.As(err, &e):
	default:
		return &ExprError{Path: yamlSpelling(path), Message: err.Error()}
	}
	return &ExprError{Path: yamlSpelling(e.Path), Message: exprMessage(e)}
}

// yamlSpelling answers an API path as a YAML definition spells it
// ("actions[2].sleep_until" → "steps[2].sleepUntil").
func yamlSpelling(api string) string { return (&PathMap{steps: "steps"}).YAMLPath(api) }

// index answers the position of a in d, or -1.
func (d *Definition) index(a *Action) int {
	for i := range d.Actions {
		if &d.Actions[i] == a || d.Actions[i].ID == a.ID {
			return i
		}
	}
	return -1
}

// ResolveInput answers the action's input with each ${{ }} replaced by its
// value over v (docs/semantics.md#input-expressions); an input without one
// is answered as it is.
func (d *Definition) ResolveInput(a *Action, v Values) (json.RawMessage, error) {
	return d.resolveTemplate(a, a.Input, ".input", v)
}

// resolveTemplate answers raw, a JSON value of action a at its key (as
// ".input"), with each ${{ }} replaced by its value over v; a value without
// one is answered as it is.
func (d *Definition) resolveTemplate(a *Action, raw json.RawMessage, key string, v Values) (json.RawMessage, error) {
	i := d.index(a)
	if i < 0 || !hasTemplate(raw) {
		return raw, nil
	}
	path := actionPath(i) + key
	t, err := d.runtimeTemplate(i, raw, path)
	if err != nil {
		return nil, runtimeError(path, err)
	}
	if t.Static() {
		return raw, nil
	}
	var reads []string
	for _, p := range t.Programs() {
		reads = append(reads, p.Steps()...)
	}
	out, err := t.Eval(d.vars(i, false, reads, v))
	if err != nil {
		return nil, runtimeError(path, err)
	}
	return out, nil
}

// EvalWhen answers the action's when over v (docs/semantics.md#when): true
// when it has none.
func (d *Definition) EvalWhen(a *Action, v Values) (bool, error) {
	if a.When == "" {
		return true, nil
	}
	return d.evalBool(a, a.When, ".when", false, v)
}

// EvalUntil answers the action's repeat.until over v, which holds the
// action's own last output (docs/semantics.md#repeat).
func (d *Definition) EvalUntil(a *Action, v Values) (bool, error) {
	if a.Repeat == nil {
		return true, nil
	}
	return d.evalBool(a, a.Repeat.Until, ".repeat.until", true, v)
}

func (d *Definition) evalBool(a *Action, src, key string, self bool, v Values) (bool, error) {
	i := d.index(a)
	if i < 0 {
		return false, &ExprError{Path: key[1:], Message: "the step is not in the definition"}
	}
	path := actionPath(i) + key
	p, err := d.runtimeProgram(i, src, path, expr.Bool, self)
	if err != nil {
		return false, runtimeError(path, err)
	}
	ok, err := p.EvalBool(d.vars(i, self, p.Steps(), v))
	if err != nil {
		return false, runtimeError(path, err)
	}
	return ok, nil
}

// WakeAt answers when a sleep step started at now completes
// (docs/semantics.md#sleep): now + sleep, or sleepUntil's value over v.
func (d *Definition) WakeAt(a *Action, now time.Time, v Values) (time.Time, error) {
	if a.SleepUntil == "" {
		return now.Add(a.Sleep.D()), nil
	}
	i := d.index(a)
	if i < 0 {
		return time.Time{}, &ExprError{Path: "sleepUntil", Message: "the step is not in the definition"}
	}
	path := actionPath(i) + ".sleep_until"
	p, err := d.runtimeProgram(i, a.SleepUntil, path, expr.Timestamp, false)
	if err != nil {
		return time.Time{}, runtimeError(path, err)
	}
	t, err := p.EvalTimestamp(d.vars(i, false, p.Steps(), v))
	if err != nil {
		return time.Time{}, runtimeError(path, err)
	}
	return t, nil
}
