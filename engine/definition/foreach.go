package definition

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/engine/expr"
)

// The bounds of a fan-out (docs/semantics.md#for-each).
const (
	// DefaultMaxConcurrency is a forEach step's maxConcurrency when unset.
	DefaultMaxConcurrency = 10
	// MaxMaxConcurrency is the largest maxConcurrency.
	MaxMaxConcurrency = 1000
	// DefaultMaxFanOut is the longest list a forEach may fan out over
	// unless the deployment raises it (weftd --max-fan-out).
	DefaultMaxFanOut = 1000
	// MaxFanOutLimit is the highest the deployment may raise it to: an
	// item id (ID[index]) then stays within an event's 128-character
	// step id.
	MaxFanOutLimit = 100_000
	// MaxForEachIDLen is the longest id of a forEach step: its item ids add
	// "[" the index "]" (at most 7 characters below MaxFanOutLimit).
	MaxForEachIDLen = 120
)

// ItemID answers the id of a fan-out's item: the step's id and the item's
// index in brackets, "ship[3]" (docs/semantics.md#for-each). A step id
// never holds a bracket, so an item id is never a step's.
func ItemID(actionID string, index int) string {
	return actionID + "[" + strconv.Itoa(index) + "]"
}

// ParseItemID answers the step and index an item id names; ok is false
// for any other id.
func ParseItemID(id string) (actionID string, index int, ok bool) {
	if !strings.HasSuffix(id, "]") {
		return "", 0, false
	}
	open := strings.LastIndexByte(id, '[')
	if open <= 0 {
		return "", 0, false
	}
	digits := id[open+1 : len(id)-1]
	if digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return "", 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:open], n, true
}

// ItemAction answers the action one item of the fan-out a runs: a copy of
// a with the item's id, run as a would be run (its activity or
// sub-workflow, input, retries, timeouts, compensation), without the
// keys that belong to the step as a whole (forEach, maxConcurrency,
// when, which the step evaluated once).
func (a *Action) ItemAction(index int) *Action {
	item := *a
	item.ID = ItemID(a.ID, index)
	item.ForEach, item.MaxConcurrency, item.When = "", 0, ""
	return &item
}

// FanOut reports whether the action fans out over a list.
func (a *Action) FanOut() bool { return a.ForEach != "" }

// checkForEach checks a forEach step's own keys and the keys it cannot be
// combined with.
func (v *violations) checkForEach(p string, a Action) {
	if a.ForEach == "" {
		if a.MaxConcurrency != 0 {
			v.add(p+".max_concurrency", "for_each.max_concurrency_without", "max_concurrency applies only to a for_each step")
		}
		return
	}
	if strings.TrimSpace(a.ForEach) == "" {
		v.add(p+".for_each", "for_each.required", "for_each must be a list expression")
	}
	if a.MaxConcurrency != 0 && (a.MaxConcurrency < 1 || a.MaxConcurrency > MaxMaxConcurrency) {
		v.add(p+".max_concurrency", "for_each.max_concurrency_range",
			"max_concurrency must be between 1 and %d, got %d", MaxMaxConcurrency, a.MaxConcurrency)
	}
	if len(a.ID) > MaxForEachIDLen {
		v.add(p+".id", "for_each.id_length", "a for_each step's id is at most %d characters (its items are id[index])", MaxForEachIDLen)
	}
	switch {
	case a.Sleeps():
		v.add(p+".for_each", "for_each.kind", "a for_each step cannot sleep (sleep_ms, sleep_until)")
	case a.Repeat != nil:
		v.add(p+".for_each", "for_each.kind", "a for_each step cannot repeat")
	case a.WaitForSignal != nil:
		v.add(p+".for_each", "for_each.kind", "a for_each step cannot wait for a signal")
	case a.Completion == CompletionManual:
		v.add(p+".for_each", "for_each.kind", "a for_each step cannot be completed manually")
	}
}

// EvalForEach answers the elements of the action's forEach list over v
// (docs/semantics.md#for-each). The error names the expression's path and
// what went wrong, never a value.
func (d *Definition) EvalForEach(a *Action, v Values) ([]json.RawMessage, error) {
	i := d.index(a)
	if i < 0 {
		return nil, &ExprError{Path: "forEach", Message: "the step is not in the definition"}
	}
	path := actionPath(i) + ".for_each"
	p, err := d.runtimeProgram(i, a.ForEach, path, expr.List, false)
	if err != nil {
		return nil, runtimeError(path, err)
	}
	items, err := p.EvalList(d.vars(i, false, p.Steps(), v))
	if err != nil {
		return nil, runtimeError(path, err)
	}
	return items, nil
}

// FanOutCapError is the error of a forEach list longer than the
// deployment's cap.
func (d *Definition) FanOutCapError(a *Action, n, limit int) error {
	return &ExprError{Path: yamlSpelling(actionPath(d.index(a)) + ".for_each"),
		Message: "the list has " + strconv.Itoa(n) + " items, more than the fan-out cap of " + strconv.Itoa(limit) + " (weftd --max-fan-out)"}
}

// ResolveItemInput answers the input of the item at index of the fan-out
// a, whose element is item: the step's input with each ${{ }} replaced by
// its value over v, item and index (docs/semantics.md#for-each).
func (d *Definition) ResolveItemInput(a *Action, index int, item json.RawMessage, v Values) (json.RawMessage, error) {
	raw := a.Input
	if a.Workflow != nil {
		raw = a.Workflow.Input
	}
	key := ".input"
	if a.Workflow != nil {
		key = ".workflow.input"
	}
	i := d.index(a)
	if i < 0 || !hasTemplate(raw) {
		return raw, nil
	}
	path := actionPath(i) + key
	t, err := d.runtimeItemTemplate(i, raw, path)
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
	vars := d.vars(i, false, reads, v)
	vars.Item, vars.Index = item, index
	out, err := t.Eval(vars)
	if err != nil {
		return nil, runtimeError(path, err)
	}
	return out, nil
}

// runtimeItemTemplate is runtimeTemplate for a fan-out's input, compiled
// with item and index declared.
func (d *Definition) runtimeItemTemplate(i int, raw json.RawMessage, path string) (*expr.Template, error) {
	key := programKey{tmpl: true, runtime: true, fanOut: true, path: path, src: string(raw)}
	if t, ok := cached(key, expr.Scope{}); ok {
		return t.(*expr.Template), nil
	}
	s := d.scope(i, false)
	s.FanOut = true
	t, err := exprEnv.CompileTemplate(raw, path, s)
	if err != nil {
		return nil, err
	}
	keep(key, programEntry{prog: t})
	return t, nil
}
