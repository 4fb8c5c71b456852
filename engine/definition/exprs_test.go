package definition

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A step's expressions are compiled and type-checked when the definition is
// validated: each mistake is a violation at the expression's YAML path, with
// the expression rule broken and the CEL error (docs/semantics.md#input-expressions,
// #when, #repeat, #sleep).
func TestExpressions_AMistakeIsRefusedAtItsYAMLPath(t *testing.T) {
	cases := []struct {
		name, yaml, path, rule, says string
	}{
		{"when: an undeclared name", "  - name: a\n  - name: b\n    dependsOn: a\n    when: inptu.amount > 0\n", "steps[1].when", "expression_type", "inptu"},
		{"when: not a bool", "  - name: a\n    when: input.amount + 1\n", "steps[0].when", "expression_result_type", "bool"},
		{"when: a syntax error", "  - name: a\n    when: input.amount >\n", "steps[0].when", "expression_syntax", "column"},
		{"when: a step downstream", "  - name: a\n    when: steps.b.output.ok\n  - name: b\n", "steps[0].when", "expression_not_upstream", "b"},
		{"when: a step that does not exist", "  - name: a\n  - name: b\n    when: steps.nope.output.ok\n", "steps[1].when", "expression_unknown_step", "nope"},
		{"input: a member's expression", "  - name: a\n  - name: b\n    dependsOn: a\n    input:\n      order:\n        id: ${{ steps.a.output.id + }}\n", "steps[1].input.order.id", "expression_syntax", "column"},
		{"input: item outside a forEach", "  - name: a\n    input: {x: '${{ item }}'}\n", "steps[0].input.x", "expression_fan_out_only", "item"},
		{"sleepUntil: not a timestamp", "  - name: a\n    sleepUntil: ${{ input.when }}\n  - name: b\n    sleepUntil: ${{ 'soon' }}\n", "steps[1].sleepUntil", "expression_result_type", "timestamp"},
		{"repeat.until: reads a later step", "  - name: a\n    repeat: {until: steps.b.output.done, maxIterations: 3}\n  - name: b\n", "steps[0].repeat.until", "expression_not_upstream", "b"},
		{"repeat.until: required", "  - name: a\n    repeat: {maxIterations: 3}\n", "steps[0].repeat.until", "repeat.until_required", "until"},
		{"repeat.maxIterations: required", "  - name: a\n    repeat: {until: 'true'}\n", "steps[0].repeat.maxIterations", "repeat.max_iterations_range", "required"},
		{"repeat.maxIterations: at most 1000", "  - name: a\n    repeat: {until: 'true', maxIterations: 1001}\n", "steps[0].repeat.maxIterations", "repeat.max_iterations_range", "1000"},
		{"sleep and sleepUntil", "  - name: a\n    sleep: 1m\n    sleepUntil: ${{ timestamp('2030-01-01T00:00:00Z') }}\n", "steps[0]", "sleep.one_of", "not both"},
		{"sleep with an activity", "  - name: a\n    activity: x\n    sleep: 1m\n", "steps[0]", "sleep.kind", "no activity"},
		{"compensation.input: a syntax error", "  - name: a\n  - name: b\ncompensation:\n  - step: b\n    operation: undo\n    input: {charge: '${{ steps.b.output.id + }}'}\n", "compensation[0].input.charge", "expression_syntax", "column"},
		{"compensation.input: a step downstream", "  - name: a\n  - name: b\ncompensation:\n  - step: a\n    operation: undo\n    input: {x: '${{ steps.b.output.id }}'}\n", "compensation[0].input.x", "expression_not_upstream", "b"},
		{"compensation.input: item outside a forEach", "  - name: a\ncompensation:\n  - step: a\n    operation: undo\n    input: {x: '${{ item.id }}'}\n", "compensation[0].input.x", "expression_fan_out_only", "item"},
		{"compensation.input: an undeclared name", "  - name: a\ncompensation:\n  - step: a\n    operation: undo\n    input: {x: '${{ inptu.id }}'}\n", "compensation[0].input.x", "expression_type", "inptu"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadYAML([]byte("planId: p\nsteps:\n" + c.yaml))
			var e *Error
			require.ErrorAs(t, err, &e)
			var found []string
			for _, v := range e.Violations {
				p := v.Field
				found = append(found, p+" "+v.Rule+": "+v.Message)
				if p == c.path && v.Rule == c.rule {
					require.Contains(t, v.Message, c.says)
					return
				}
			}
			t.Fatalf("no %s violation at %s; got %q", c.rule, c.path, found)
		})
	}
}

func TestExpressions_ValidOnesPass(t *testing.T) {
	d, err := LoadYAML([]byte(`planId: p
steps:
  - name: a
    input: {who: '${{ input.user }}', run: '${{ run.id }}', lit: '$${{ x }}'}
  - name: b
    dependsOn: a
    when: input.amount > 0 && steps.a.output.ok
    input: {total: '${{ steps.a.output.n * 2 }}'}
  - name: nap
    sleep: 10m
  - name: until
    sleepUntil: ${{ timestamp(input.at) }}
  - name: poll
    repeat: {until: steps.poll.output.done, maxIterations: 5}
compensation:
  - step: b
    operation: refund
    input: {charge: '${{ steps.b.output.id }}', from: '${{ steps.a.output.who }}', order: '${{ input.order }}', run: '${{ run.id }}'}
`))
	require.NoError(t, err)
	require.Equal(t, 10*time.Minute, d.Actions[2].Sleep.D())
	require.Empty(t, d.Actions[2].Activity, "a sleep step has no activity")
	require.Equal(t, &Repeat{Until: "steps.poll.output.done", MaxIterations: 5}, d.Actions[4].Repeat)
}

// An evaluation error names the expression by its YAML path and never
// quotes a value it read.
func TestExpressions_AnEvaluationErrorNamesItsPathAndNoValue(t *testing.T) {
	d := Definition{PlanID: "p", PlanVersion: "1", Actions: []Action{
		{ID: "a", Order: 1, Activity: "x"},
		{ID: "b", Order: 2, Activity: "x", When: "int(steps.a.output.n) > 0", Input: json.RawMessage(`{"k":"${{ steps.a.output.missing }}"}`)},
	}}
	require.NoError(t, d.Validate())
	v := Values{Input: json.RawMessage(`{}`), RunID: "r", Output: func(id string) json.RawMessage { return json.RawMessage(`{"n":"secret"}`) }}
	_, err := d.EvalWhen(&d.Actions[1], v)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "steps[1].when: "), err.Error())
	require.NotContains(t, err.Error(), "secret")
	_, err = d.ResolveInput(&d.Actions[1], v)
	require.True(t, strings.HasPrefix(err.Error(), "steps[1].input.k: "), err.Error())
}
