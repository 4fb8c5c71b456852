package definition

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSubWorkflowYAML_ReadsAPlanReferenceAndAnInlineDefinition(t *testing.T) {
	d, _, err := ReadYAML([]byte(`planId: order
steps:
  - name: refund
    parentClose: abandon
    workflow: {plan: refund, version: "2", input: {amount: 10}}
  - name: notify
    dependsOn: [refund]
    workflow:
      result: email
      timeout: 5m
      steps:
        - name: email
`))
	require.NoError(t, err)
	a := d.Actions[0]
	require.Empty(t, a.Activity, "a sub-workflow step has no activity")
	require.Equal(t, ParentCloseAbandon, a.ParentClose)
	require.Equal(t, &SubWorkflow{PlanID: "refund", PlanVersion: "2", Input: []byte(`{"amount":10}`)}, a.Workflow)
	inline := d.Actions[1].Workflow.Definition
	require.NotNil(t, inline)
	require.Equal(t, "email", inline.ResultActionID)
	require.True(t, inline.DAG)
	require.Equal(t, "email", inline.Actions[0].Activity)
	require.Equal(t, "order.notify", inline.PlanID, "named when read, so that the API's definition carries it")
	def := d.WithDefaults()
	require.Equal(t, ParentCloseCancel, def.Actions[1].ParentClose, "parentClose defaults to cancel")
	require.Equal(t, "order.notify", def.Actions[1].Workflow.Definition.PlanID, "an inline child's plan id")
	require.Equal(t, "1", def.Actions[1].Workflow.Definition.PlanVersion)
	require.NoError(t, def.Validate())
}

// A bad sub-workflow is refused by its YAML path, inline ones at any depth.
func TestSubWorkflowYAML_ABadSubWorkflowIsRefusedByItsYAMLPath(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, field, rule string
	}{
		{"plan and steps", "planId: p\nsteps:\n  - name: s\n    workflow: {plan: x, steps: [{name: a}]}\n", "steps[0].workflow", "workflow.one_of"},
		{"neither", "planId: p\nsteps:\n  - name: s\n    workflow: {input: 1}\n", "steps[0].workflow", "workflow.one_of"},
		{"unknown key", "planId: p\nsteps:\n  - name: s\n    workflow: {plan: x, versoin: \"1\"}\n", "steps[0].workflow.versoin", "yaml.unknown_key"},
		{"not a mapping", "planId: p\nsteps:\n  - name: s\n    workflow: refund\n", "steps[0].workflow", "yaml.type"},
		{"parentClose", "planId: p\nsteps:\n  - name: s\n    parentClose: detach\n    workflow: {plan: x}\n", "steps[0].parentClose", "yaml.parent_close"},
		{"parentClose without workflow", "planId: p\nsteps:\n  - name: s\n    parentClose: cancel\n", "steps[0].parentClose", "action.parent_close_workflow"},
		{"activity too", "planId: p\nsteps:\n  - name: s\n    activity: x\n    workflow: {plan: x}\n", "steps[0]", "action.workflow_kind"},
		{"inline step timeout", "planId: p\nsteps:\n  - name: s\n    workflow:\n      steps:\n        - name: a\n          timeout: 5\n", "steps[0].workflow.steps[0].timeout", "yaml.duration"},
		{"inline dependency", "planId: p\nsteps:\n  - name: s\n    workflow:\n      steps:\n        - name: a\n          dependsOn: [zz]\n", "steps[0].workflow.steps[0].dependsOn[0]", "dag.dependency_exists"},
		{"nested inline", "planId: p\nspec:\n  steps:\n    - name: s\n      workflow:\n        steps:\n          - name: t\n            workflow:\n              steps:\n                - name: u\n                  retryPolicy: {maxAttempts: 99}\n", "spec.steps[0].workflow.steps[0].workflow.steps[0].retryPolicy.maxAttempts", "yaml.max_attempts"},
		{"inline result", "planId: p\nsteps:\n  - name: s\n    workflow:\n      result: nope\n      steps:\n        - name: a\n", "steps[0].workflow.result", "plan.result_action_exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadYAML([]byte(tc.yaml))
			var e *Error
			require.True(t, errors.As(err, &e), "%v", err)
			found := false
			for _, v := range e.Violations {
				found = found || (v.Field == tc.field && v.Rule == tc.rule)
			}
			require.True(t, found, "want %s %s, got %+v", tc.field, tc.rule, e.Violations)
		})
	}
}

// Inline sub-workflows nest at most MaxInlineDepth deep.
func TestSubWorkflow_InlineNestingIsCapped(t *testing.T) {
	leaf := Definition{PlanID: "leaf", PlanVersion: "1", Actions: []Action{{ID: "a", Order: 1, Activity: "x"}}}
	d := leaf
	for range MaxInlineDepth + 1 {
		inner := d
		d = Definition{PlanID: "p", PlanVersion: "1", Actions: []Action{{ID: "s", Order: 1, Workflow: &SubWorkflow{Definition: &inner}}}}
	}
	var e *Error
	require.ErrorAs(t, d.WithDefaults().Validate(), &e)
	require.Equal(t, "workflow.inline_depth", e.Violations[0].Rule)
}
