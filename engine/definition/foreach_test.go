package definition

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A forEach step's mistakes are refused when the definition is validated,
// each at its YAML path with the rule it breaks (docs/semantics.md#for-each):
// its list expression compiled and type-checked, maxConcurrency's range,
// and the keys it cannot be combined with.
func TestForEach_AMistakeIsRefusedAtItsYAMLPath(t *testing.T) {
	cases := []struct {
		name, yaml, path, rule, says string
	}{
		{"forEach: an undeclared name", "  - name: a\n    forEach: inptu.lines\n", "steps[0].forEach", "expression_type", "inptu"},
		{"forEach: not a list", "  - name: a\n    forEach: input.n + 1\n", "steps[0].forEach", "expression_result_type", "list"},
		{"forEach: a syntax error", "  - name: a\n    forEach: '${{ [1, }}'\n", "steps[0].forEach", "expression_syntax", "column"},
		{"forEach: a step downstream", "  - name: a\n    forEach: steps.b.output\n  - name: b\n", "steps[0].forEach", "expression_not_upstream", "b"},
		{"forEach: its own item", "  - name: a\n    forEach: '[item]'\n", "steps[0].forEach", "expression_fan_out_only", "item"},
		{"forEach: empty", "  - name: a\n    forEach: ' '\n", "steps[0].forEach", "for_each.required", "list"},
		{"maxConcurrency: zero", "  - name: a\n    forEach: '[1]'\n    maxConcurrency: 0\n", "steps[0].maxConcurrency", "for_each.max_concurrency_range", "between 1 and 1000"},
		{"maxConcurrency: over 1000", "  - name: a\n    forEach: '[1]'\n    maxConcurrency: 1001\n", "steps[0].maxConcurrency", "for_each.max_concurrency_range", "1001"},
		{"maxConcurrency without forEach", "  - name: a\n    maxConcurrency: 3\n", "steps[0].maxConcurrency", "for_each.max_concurrency_without", "only"},
		{"forEach with sleep", "  - name: a\n    forEach: '[1]'\n    sleep: 1m\n", "steps[0].forEach", "for_each.kind", "sleep"},
		{"forEach with sleepUntil", "  - name: a\n    forEach: '[1]'\n    sleepUntil: ${{ timestamp('2030-01-01T00:00:00Z') }}\n", "steps[0].forEach", "for_each.kind", "sleep"},
		{"forEach with repeat", "  - name: a\n    forEach: '[1]'\n    repeat: {until: 'true', maxIterations: 2}\n", "steps[0].forEach", "for_each.kind", "repeat"},
		{"forEach with waitForSignal", "  - name: a\n    forEach: '[1]'\n    waitForSignal: go\n", "steps[0].forEach", "for_each.kind", "signal"},
		{"forEach with manual", "  - name: a\n    forEach: '[1]'\n    manual: true\n", "steps[0].forEach", "for_each.kind", "manual"},
		{"forEach: an id too long for its items", "  - name: " + strings.Repeat("x", MaxForEachIDLen+1) + "\n    forEach: '[1]'\n", "steps[0].name", "for_each.id_length", "120"},
		{"input: item outside a forEach", "  - name: a\n    input: {x: '${{ index }}'}\n", "steps[0].input.x", "expression_fan_out_only", "index"},
		{"input: an item's mistake", "  - name: a\n    forEach: '[1]'\n    input: {x: '${{ item + }}'}\n", "steps[0].input.x", "expression_syntax", "column"},
		{"compensation input: item outside a forEach", "  - name: a\ncompensation:\n  - step: a\n    operation: undo\n    input: {x: '${{ item }}'}\n", "compensation[0].input.x", "expression_fan_out_only", "item"},
		{"workflow input: item outside a forEach", "  - name: a\n    workflow: {steps: [{name: c}], input: {x: '${{ item }}'}}\n", "steps[0].workflow.input.x", "expression_fan_out_only", "item"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadYAML([]byte("planId: p\nsteps:\n" + c.yaml))
			var e *Error
			require.ErrorAs(t, err, &e)
			var found []string
			for _, v := range e.Violations {
				found = append(found, v.Field+" "+v.Rule+": "+v.Message)
				if v.Field == c.path && v.Rule == c.rule {
					require.Contains(t, v.Message, c.says)
					return
				}
			}
			t.Fatalf("no %s violation at %s; got %q", c.rule, c.path, found)
		})
	}
}

func TestForEach_ValidOnesPass(t *testing.T) {
	d, err := LoadYAML([]byte(`planId: p
steps:
  - name: lines
  - name: ship
    dependsOn: lines
    forEach: ${{ steps.lines.output.items }}
    maxConcurrency: 3
    input: {sku: '${{ item.sku }}', at: '${{ index }}', who: '${{ input.user }}'}
  - name: notify
    dependsOn: ship
    forEach: input.emails
    workflow:
      steps: [{name: send}]
      input: {to: '${{ item }}', n: '${{ index + 1 }}'}
compensation:
  - step: ship
    operation: unship
    input: {sku: '${{ item.sku }}', at: '${{ index }}', receipt: '${{ steps.ship.output.id }}'}
`))
	require.NoError(t, err)
	require.Equal(t, "${{ steps.lines.output.items }}", d.Actions[1].ForEach)
	require.Equal(t, 3, d.Actions[1].MaxConcurrency)
	require.Equal(t, DefaultMaxConcurrency, d.WithDefaults().Actions[2].MaxConcurrency, "maxConcurrency defaults to 10")
	require.Zero(t, d.WithDefaults().Actions[0].MaxConcurrency, "a step without forEach has none")
}

// An item id is the step's id and its index in brackets, and nothing else
// parses as one; an item's action is the step's, without forEach.
func TestForEach_ItemIDsAndActions(t *testing.T) {
	for i, id := range []string{"ship[0]", "ship[7]", "a.b-c[123]"} {
		parent, index, ok := ParseItemID(id)
		require.True(t, ok, id)
		require.Equal(t, id, ItemID(parent, index), "%d", i)
	}
	for _, id := range []string{"ship", "ship[]", "ship[01]", "ship[-1]", "[3]", "ship[x]", "ship[3", "ship[99999999999999999999]"} {
		_, _, ok := ParseItemID(id)
		require.False(t, ok, id)
	}
	d := Definition{PlanID: "p", PlanVersion: "1", Actions: []Action{{ID: "ship", Order: 1, Activity: "x", ForEach: "[1]", MaxConcurrency: 2, When: "true"}}}
	a := d.Action("ship[4]")
	require.NotNil(t, a)
	require.Equal(t, "ship[4]", a.ID)
	require.Equal(t, "x", a.Activity)
	require.Empty(t, a.ForEach)
	require.Empty(t, a.When, "the step's when is evaluated once, for the step")
	require.Equal(t, "ship", d.Actions[0].ID, "the definition is not changed")
	require.Nil(t, d.Action("other[1]"))
	d.Actions[0].ForEach = ""
	require.Nil(t, d.Action("ship[1]"), "only a forEach step has items")
}

// The list and each item's input are evaluated over the run's values;
// a failure names the expression's path and never a value it read.
func TestForEach_EvaluationNamesItsPathAndNoValue(t *testing.T) {
	d := Definition{PlanID: "p", PlanVersion: "1", Actions: []Action{
		{ID: "ship", Order: 1, Activity: "x", ForEach: "input.lines", Input: json.RawMessage(`{"sku":"${{ item.sku }}","at":"${{ index }}"}`)},
	}}
	require.NoError(t, d.Validate())
	v := Values{Input: json.RawMessage(`{"lines":[{"sku":"a"},{"sku":"b"}]}`), RunID: "r", Output: func(string) json.RawMessage { return nil }}
	list, err := d.EvalForEach(&d.Actions[0], v)
	require.NoError(t, err)
	require.Len(t, list, 2)
	in, err := d.ResolveItemInput(&d.Actions[0], 1, list[1], v)
	require.NoError(t, err)
	require.JSONEq(t, `{"sku":"b","at":1}`, string(in))
	for _, input := range []string{`{"lines":"secret"}`, `{"nolines":"secret"}`} {
		_, err = d.EvalForEach(&d.Actions[0], Values{Input: json.RawMessage(input), Output: v.Output})
		var xe *ExprError
		require.True(t, errors.As(err, &xe), "%v", err)
		require.Equal(t, "steps[0].forEach", xe.Path)
		require.NotContains(t, err.Error(), "secret")
	}
	_, err = d.ResolveItemInput(&d.Actions[0], 0, json.RawMessage(`"secret"`), v)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "steps[0].input.sku: "), err.Error())
	require.NotContains(t, err.Error(), "secret")
	capErr := d.FanOutCapError(&d.Actions[0], 1001, 1000)
	require.Equal(t, "steps[0].forEach: the list has 1001 items, more than the fan-out cap of 1000 (weftd --max-fan-out)", capErr.Error())
}

// FuzzForEach validates a fan-out over any list expression and item input,
// and evaluates it over any run input: never a panic, every error naming
// the expression's path (never an unnamed failure the server would answer
// with a 5xx).
func FuzzForEach(f *testing.F) {
	for _, s := range []struct{ list, input string }{
		{"input.lines", `{"sku":"${{ item.sku }}","at":"${{ index }}"}`},
		{"lists.range(input.n)", `"${{ item * index }}"`},
		{"${{ input.lines.map(l, l.sku) }}", `["${{ item }}", "${{ index }}"]`},
		{"[1, 'a', null, [2]]", `{"x":"${{ item[0] }}"}`},
		{"input.lines.filter(l, l.n > 1)", `"${{ item.n / index }}"`},
		{"{'a': 1}", `"${{ item }}"`},
		{"lists.range(100000)", `"${{ index }}"`},
	} {
		f.Add(s.list, []byte(s.input), []byte(`{"lines":[{"sku":"a","n":2},{"sku":"b","n":0}],"n":3}`))
	}
	f.Fuzz(func(t *testing.T, list string, itemInput, runInput []byte) {
		if !json.Valid(itemInput) {
			return
		}
		d := Definition{PlanID: "p", PlanVersion: "1", Actions: []Action{
			{ID: "ship", Order: 1, Activity: "x", ForEach: list, Input: json.RawMessage(itemInput)},
		}}
		if err := d.Validate(); err != nil {
			var e *Error
			require.ErrorAs(t, err, &e)
			for _, v := range e.Violations {
				require.NotEmpty(t, v.Rule, "%+v", v)
			}
			return
		}
		v := Values{Input: runInput, RunID: "r", Output: func(string) json.RawMessage { return nil }}
		items, err := d.EvalForEach(&d.Actions[0], v)
		if err != nil {
			var xe *ExprError
			require.True(t, errors.As(err, &xe), "%v", err)
			require.Equal(t, "steps[0].forEach", xe.Path)
			return
		}
		for i, item := range items[:min(len(items), 20)] {
			require.True(t, json.Valid(item), "item %d", i)
			out, err := d.ResolveItemInput(&d.Actions[0], i, item, v)
			if err != nil {
				var xe *ExprError
				require.True(t, errors.As(err, &xe), "%v", err)
				require.True(t, strings.HasPrefix(xe.Path, "steps[0].input"), xe.Path)
				continue
			}
			require.True(t, json.Valid(out), "item %d's input", i)
		}
	})
}
