package definition

import (
	"encoding/json"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SubWorkflow makes an action start a child run and finish with the
// child's result (docs/semantics.md#sub-workflows): a stored definition,
// PlanID and PlanVersion (the version is pinned when the parent is
// submitted), or an inline Definition; Input is the child's input.
type SubWorkflow struct {
	PlanID      string          `json:"plan_id,omitempty"`
	PlanVersion string          `json:"plan_version,omitempty"`
	Definition  *Definition     `json:"definition,omitempty"`
	Input       json.RawMessage `json:"input,omitempty"`
}

// ParentClose is what a child run does when its parent no longer waits for
// it (the parent ended, or the step was cancelled).
type ParentClose string

// The parent-close policies.
const (
	ParentCloseCancel  ParentClose = "cancel"  // the child is cancelled (the default)
	ParentCloseAbandon ParentClose = "abandon" // the child runs on
)

// MaxInlineDepth bounds how deeply inline sub-workflows nest in one
// definition; the runtime depth of runs is weftd's --max-workflow-depth.
const MaxInlineDepth = 8

// nameInline names every inline child of d that has no plan id or version
// (withDefaults' names), the deepest from their parents' names.
func nameInline(d *Definition) {
	for i := range d.Actions {
		if w := d.Actions[i].Workflow; w != nil && w.Definition != nil {
			inlineName(w.Definition, d, d.Actions[i].ID)
			nameInline(w.Definition)
		}
	}
}

// inlineName names child, the inline definition of parent's step stepID,
// when it has no plan id or version of its own.
func inlineName(child, parent *Definition, stepID string) {
	if child.PlanID == "" && parent.PlanID != "" {
		child.PlanID = parent.PlanID + "." + stepID
	}
	if child.PlanVersion == "" {
		child.PlanVersion = parent.PlanVersion
	}
}

// withDefaults fills in a sub-workflow action's child: an inline
// definition's plan id (the parent's plan id, a dot and the step's id) and
// version (the parent's), and its own defaults.
func (w *SubWorkflow) withDefaults(parent *Definition, stepID string) {
	if w == nil || w.Definition == nil {
		return
	}
	child := w.Definition.WithDefaults()
	inlineName(&child, parent, stepID)
	w.Definition = &child
}

// clone answers a deep copy.
func (w *SubWorkflow) clone() *SubWorkflow {
	if w == nil {
		return nil
	}
	c := *w
	c.Input = cloneRaw(w.Input)
	if w.Definition != nil {
		d := w.Definition.Clone()
		c.Definition = &d
	}
	return &c
}

// equalSubWorkflow reports whether two sub-workflows are the same.
func equalSubWorkflow(a, b *SubWorkflow) bool {
	return a.PlanID == b.PlanID && a.PlanVersion == b.PlanVersion && equalRaw(a.Input, b.Input) &&
		equalPtr(a.Definition, b.Definition, Equal)
}

// subWorkflow hashes a sub-workflow (Hash).
func (h *hasher) subWorkflow(w *SubWorkflow, parentClose ParentClose) {
	h.str(string(parentClose))
	h.bool(w != nil)
	if w == nil {
		return
	}
	h.str(w.PlanID)
	h.str(w.PlanVersion)
	h.raw(w.Input)
	h.bool(w.Definition != nil)
	if w.Definition != nil {
		b, _ := json.Marshal(w.Definition) // deterministic; Equal decides a match
		h.raw(b)
	}
}

// checkSubWorkflow checks a sub-workflow action: exactly one of a plan
// reference and an inline definition, valid itself (its problems named
// under p.workflow.definition), no activity, signal wait, manual
// completion or compensation hook of its own.
func (v *violations) checkSubWorkflow(p string, a Action) {
	known(v, p+".parent_close", "action.parent_close_known", a.ParentClose, ParentCloseCancel, ParentCloseAbandon)
	w := a.Workflow
	if w == nil {
		if a.ParentClose != "" {
			v.add(p+".parent_close", "action.parent_close_workflow", "parent_close applies only to a sub-workflow action")
		}
		return
	}
	wp := p + ".workflow"
	switch {
	case a.Activity != "" || a.WaitForSignal != nil || a.Completion == CompletionManual || a.Sleeps():
		v.add(p, "action.workflow_kind", "a sub-workflow action has no activity, wait_for_signal, manual completion or sleep of its own")
	case a.Compensation != nil:
		v.add(p+".compensation", "action.workflow_compensation", "a sub-workflow action has no compensation hook: the child's own compensation undoes its steps")
	}
	v.json(wp+".input", "workflow.input_json", w.Input)
	switch {
	case (w.PlanID == "") == (w.Definition == nil):
		v.add(wp, "workflow.one_of", "a sub-workflow needs exactly one of a stored definition (its plan id) or an inline definition")
	case w.Definition != nil:
		if w.PlanVersion != "" {
			v.add(wp+".plan_version", "workflow.inline_version", "plan_version names a stored definition's version; an inline definition has its own")
		}
		if v.depth >= MaxInlineDepth {
			v.add(wp+".definition", "workflow.inline_depth", "inline sub-workflows may nest at most %d deep", MaxInlineDepth)
			return
		}
		inner := &violations{depth: v.depth + 1}
		inner.checkDefinition(w.Definition.WithDefaults())
		for _, x := range inner.list {
			x.Field = join(wp+".definition", x.Field)
			v.add(x.Field, x.Rule, "%s", x.Message)
		}
	default:
		v.text(wp+".plan_id", textRule{prefix: "workflow.plan_id", required: true, maxLen: 128, pattern: idPattern}, w.PlanID)
		v.text(wp+".plan_version", textRule{prefix: "workflow.plan_version", maxLen: 64, pattern: versionPattern}, w.PlanVersion)
	}
}

// subWorkflowKeys are the keys of a step's workflow block: a plan
// reference (plan, version), an inline definition (steps, compensation,
// result, timeout), and the child's input.
var subWorkflowKeys = groupKeys("steps[].workflow")

// groupKeys answers the key names of the key table's group at path.
func groupKeys(path string) []string {
	for _, g := range yamlKeyGroups {
		if g.Path == path {
			return keyNames(g)
		}
	}
	panic("definition: no YAML key group " + path)
}

// childStep reads a step's workflow and parentClose keys.
func (l *yamlLoader) childStep(n *yaml.Node, path string, index int, a *Action) {
	if v := get(n, "workflow"); v != nil {
		a.Workflow = l.subWorkflow(v, path+".workflow", index)
	}
	if v := get(n, "parentClose"); v != nil {
		a.ParentClose = l.parentClose(v, path+".parentClose")
	}
}

// inlineKeys are the workflow block's keys that belong to an inline definition.
var inlineKeys = []string{"steps", "compensation", "result", "timeout"}

// subWorkflow reads a step's workflow block. An inline definition is read
// as a document of its own, its problems named under path.
func (l *yamlLoader) subWorkflow(n *yaml.Node, path string, index int) *SubWorkflow {
	if n.Kind != yaml.MappingNode {
		l.fail(path, "yaml.type", "workflow must be a mapping of plan and version, or of steps")
		return nil
	}
	l.knownKeys(n, path, subWorkflowKeys)
	w := &SubWorkflow{PlanID: l.first(field{n, path, "plan"}), PlanVersion: l.first(field{n, path, "version"})}
	if v := get(n, "input"); v != nil {
		w.Input = l.input(v, path+".input")
	}
	inline := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, key := range inlineKeys {
		if v := get(n, key); v != nil {
			inline.Content = append(inline.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
		}
	}
	if len(inline.Content) == 0 {
		return w
	}
	if l.depth >= MaxInlineDepth {
		l.fail(path, "yaml.workflow_depth", "inline sub-workflows may nest at most %d deep", MaxInlineDepth)
		return w
	}
	child := newYAMLLoader()
	child.budget, child.depth = l.budget, l.depth+1
	child.paths.prefix = path
	d := child.definition(inline)
	d.DAG = true
	l.budget = child.budget
	for _, x := range child.v.list {
		l.v.add(join(path, x.Field), x.Rule, "%s", x.Message)
	}
	w.Definition = &d
	if l.paths.children == nil {
		l.paths.children = map[int]*PathMap{}
	}
	l.paths.children[index] = child.paths
	return w
}

// checkWorkflowInputs compiles the ${{ }} expressions of each sub-workflow
// step's input (docs/semantics.md#input-expressions), as a step's input's.
func (v *violations) checkWorkflowInputs(d *Definition) {
	for i := range d.Actions {
		if w := d.Actions[i].Workflow; w != nil && hasTemplate(w.Input) && json.Valid(w.Input) {
			s := d.scope(i, false)
			s.FanOut = d.Actions[i].ForEach != "" // each item's child input reads item and index (docs/semantics.md#for-each)
			_, err := compileTemplate(w.Input, actionPath(i)+".workflow.input", s)
			v.exprErr(err)
		}
	}
}

// ResolveWorkflowInput answers a sub-workflow step's child input with each
// ${{ }} replaced by its value over v, as ResolveInput does a step's input.
func (d *Definition) ResolveWorkflowInput(a *Action, v Values) (json.RawMessage, error) {
	if a.Workflow == nil {
		return nil, nil
	}
	return d.resolveTemplate(a, a.Workflow.Input, ".workflow.input", v)
}

// parentClose reads parentClose.
func (l *yamlLoader) parentClose(n *yaml.Node, path string) ParentClose {
	s := ParentClose(strings.ToLower(l.str(n, path)))
	switch s {
	case ParentCloseCancel, ParentCloseAbandon:
		return s
	}
	l.fail(path, "yaml.parent_close", "parentClose must be one of cancel, abandon, got %s", short(string(s)))
	return ""
}

// childYAMLPath places an API path inside a step's inline workflow
// ("workflow.definition.actions[0].timeout_ms") in the document.
func (m *PathMap) childYAMLPath(step int, tail string) (string, bool) {
	rest, ok := strings.CutPrefix(tail, "workflow.definition")
	if !ok || m.children == nil {
		return "", false
	}
	child, ok := m.children[step]
	if !ok {
		return "", false
	}
	rest = strings.TrimPrefix(rest, ".")
	if rest == "" {
		return child.prefix, true
	}
	return child.YAMLPath(rest), true
}
