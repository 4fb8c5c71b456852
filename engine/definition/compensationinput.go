package definition

import (
	"encoding/json"

	"github.com/weft-dev/weft/engine/expr"
)

// A compensation hook's input takes ${{ }} expressions
// (docs/semantics.md#compensation-input): in the scope of the step it
// undoes and that step itself, and, for a forEach step, item and index (an
// item's hook undoes that item).

// compensationPath is the API path of the hook input of the action at i.
func compensationPath(i int) string { return actionPath(i) + ".compensation.input" }

// compensationScope is the scope a hook's input of the action at i is
// compiled in.
func (d *Definition) compensationScope(i int) expr.Scope {
	s := d.scope(i, true)
	s.FanOut = d.Actions[i].FanOut()
	return s
}

// checkCompensationInputs compiles the ${{ }} expressions of each
// compensation hook's input.
func (v *violations) checkCompensationInputs(d *Definition) {
	for i := range d.Actions {
		if c := d.Actions[i].Compensation; c != nil && hasTemplate(c.Input) && json.Valid(c.Input) {
			_, err := compileTemplate(c.Input, compensationPath(i), d.compensationScope(i))
			v.exprErr(err)
		}
	}
}

// ResolveCompensationInput answers the hook input of action a (a step of
// the definition) with each ${{ }} replaced by its value over v, which
// holds a's own output; an input without one is answered as it is.
func (d *Definition) ResolveCompensationInput(a *Action, v Values) (json.RawMessage, error) {
	return d.resolveCompensation(a, nil, 0, v)
}

// ResolveItemCompensationInput answers the hook input of the item at index
// of the forEach step a, whose element is item: as ResolveCompensationInput,
// with item and index, and v's output of a being the item's own.
func (d *Definition) ResolveItemCompensationInput(a *Action, index int, item json.RawMessage, v Values) (json.RawMessage, error) {
	return d.resolveCompensation(a, item, index, v)
}

func (d *Definition) resolveCompensation(a *Action, item json.RawMessage, index int, v Values) (json.RawMessage, error) {
	if a.Compensation == nil {
		return nil, nil
	}
	raw := a.Compensation.Input
	i := d.index(a)
	if i < 0 || !hasTemplate(raw) {
		return raw, nil
	}
	path := compensationPath(i)
	key := programKey{tmpl: true, runtime: true, fanOut: d.Actions[i].FanOut(), path: path, src: string(raw)}
	var t *expr.Template
	if kept, ok := cached(key, expr.Scope{}); ok {
		t = kept.(*expr.Template)
	} else {
		var err error
		if t, err = exprEnv.CompileTemplate(raw, path, d.compensationScope(i)); err != nil {
			return nil, runtimeError(path, err)
		}
		keep(key, programEntry{prog: t})
	}
	if t.Static() {
		return raw, nil
	}
	var reads []string
	for _, p := range t.Programs() {
		reads = append(reads, p.Steps()...)
	}
	vars := d.vars(i, true, reads, v)
	if d.Actions[i].FanOut() {
		vars.Item, vars.Index = item, index
	}
	out, err := t.Eval(vars)
	if err != nil {
		return nil, runtimeError(path, err)
	}
	return out, nil
}
