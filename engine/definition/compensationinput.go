package definition

import "encoding/json"

// checkCompensationInputs compiles the ${{ }} expressions of each
// compensation hook's input (docs/semantics.md#compensation-input), in the
// scope of the step it undoes and that step itself.
func (v *violations) checkCompensationInputs(d *Definition) {
	for i := range d.Actions {
		if c := d.Actions[i].Compensation; c != nil && hasTemplate(c.Input) && json.Valid(c.Input) {
			_, err := compileTemplate(c.Input, actionPath(i)+".compensation.input", d.scope(i, true))
			v.exprErr(err)
		}
	}
}

// ResolveCompensationInput answers the action's compensation hook's input
// with each ${{ }} replaced by its value over v, which holds the action's
// own output (docs/semantics.md#compensation-input); an input without one is
// answered as it is.
func (d *Definition) ResolveCompensationInput(a *Action, v Values) (json.RawMessage, error) {
	if a.Compensation == nil {
		return nil, nil
	}
	return d.resolveTemplateIn(a, a.Compensation.Input, ".compensation.input", true, v)
}
