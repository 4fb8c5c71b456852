package expr

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestExpression_TheTemplateRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s       string
		expr    bool
		src     string
		literal string
	}{
		{s: "${{ input.x }}", expr: true, src: " input.x "},
		{s: "${{input.x}}", expr: true, src: "input.x"},
		{s: "${{\n  input.x\n}}", expr: true, src: "\n  input.x\n"},
		{s: "${{ {'a': {'b': 1}} }}", expr: true, src: " {'a': {'b': 1}} "},
		{s: "${{}}", expr: true, src: ""},
		{s: " ${{ input.x }}", literal: " ${{ input.x }}"},
		{s: "${{ input.x }} ", literal: "${{ input.x }} "},
		{s: "order ${{ input.id }}", literal: "order ${{ input.id }}"},
		{s: "${{ input.x", literal: "${{ input.x"},
		{s: "${ input.x }}", literal: "${ input.x }}"},
		{s: "{{ input.x }}", literal: "{{ input.x }}"},
		{s: "${{}", literal: "${{}"},
		{s: "$${{ input.x }}", literal: "${{ input.x }}"},
		{s: "$$${{ input.x }}", literal: "$${{ input.x }}"},
		{s: "$$ money", literal: "$$ money"},
		{s: "$", literal: "$"},
		{s: "", literal: ""},
	}
	for _, c := range cases {
		src, _, ok := Expression(c.s)
		require.Equal(t, c.expr, ok, "%q", c.s)
		if ok {
			require.Equal(t, c.src, src)
			continue
		}
		require.Equal(t, c.literal, Literal(c.s), "%q", c.s)
	}
}

func TestEscape_WritesAnyTextAsALiteral(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOf(rapid.SampledFrom([]string{"$", "${{", "}}", " ", "x", "{", "}", "$$"})).Draw(t, "parts")
		s := ""
		for _, p := range parts {
			s += p
		}
		esc := Escape(s)
		if _, _, ok := Expression(esc); ok {
			t.Fatalf("Escape(%q) = %q reads as an expression", s, esc)
		}
		if got := Literal(esc); got != s {
			t.Fatalf("Literal(Escape(%q)) = %q", s, got)
		}
	})
}

func TestTemplate_ReplacesExpressionsKeepsLiterals(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	doc := `{
	  "amount": "${{ input.amount * 100 }}",
	  "customer": {"id": "${{ input.customer }}", "tier": "gold"},
	  "text": "order ${{ input.id }}",
	  "escaped": "$${{ input.amount }}",
	  "lines": ["${{ steps.charge.output.id }}", 1.0, 10, null, true, "${{ [1, 2.5] }}"],
	  "z-first": 1, "a last": 2
	}`
	tpl, err := env.CompileTemplate(json.RawMessage(doc), "steps[1].input", atShip)
	require.NoError(t, err)
	require.False(t, tpl.Static())
	require.Len(t, tpl.Programs(), 4)
	got, err := tpl.Eval(Vars{Input: json.RawMessage(`{"amount": 12, "customer": "acme", "id": 7}`),
		Steps: map[string]json.RawMessage{"charge": json.RawMessage(`{"id":"ch_1"}`)}})
	require.NoError(t, err)
	require.Equal(t, `{"amount":1200,"customer":{"id":"acme","tier":"gold"},"text":"order ${{ input.id }}","escaped":"${{ input.amount }}",`+
		`"lines":["ch_1",1.0,10,null,true,[1,2.5]],"z-first":1,"a last":2}`, string(got))

	static, err := env.CompileTemplate(json.RawMessage(`{"a": [1, "x"]}`), "steps[0].input", Scope{})
	require.NoError(t, err)
	require.True(t, static.Static())
	got, err = static.Eval(Vars{})
	require.NoError(t, err)
	require.Equal(t, `{"a":[1,"x"]}`, string(got))
}

func TestTemplate_EveryErrorNamesItsPath(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	cases := []struct {
		name   string
		doc    string
		path   string
		rule   string
		column int
	}{
		{name: "an error deep in the value", doc: `{"lines": [{"sku": "x"}, {"sku": "${{ inptu.sku }}"}]}`, path: "steps[1].input.lines[1].sku", rule: RuleType, column: 5},
		{name: "a key a path cannot dot", doc: `{"a b": "${{ nope }}"}`, path: `steps[1].input["a b"]`, rule: RuleType},
		{name: "an unknown step", doc: `["${{ steps.refund.output }}"]`, path: "steps[1].input[0]", rule: RuleUnknownStep, column: 11},
		{name: "an empty expression", doc: `{"x": "${{  }}"}`, path: "steps[1].input.x", rule: RuleEmpty},
		{name: "two expressions in one string", doc: `{"x": "${{ input.a }} and ${{ input.b }}"}`, path: "steps[1].input.x", rule: RuleSyntax},
		{name: "malformed JSON", doc: `{"x": `, path: "steps[1].input", rule: RuleJSON},
		{name: "two values", doc: `{} {}`, path: "steps[1].input", rule: RuleJSON},
		{name: "a duplicate key", doc: `{"x": 1, "x": 2}`, path: "steps[1].input", rule: RuleJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := env.CompileTemplate(json.RawMessage(c.doc), "steps[1].input", atShip)
			var errs Errors
			require.True(t, errors.As(err, &errs), "%v", err)
			require.Equal(t, c.path, errs[0].Path)
			require.Equal(t, c.rule, errs[0].Rule, errs.Error())
			if c.column > 0 {
				require.Equal(t, c.column, errs[0].Column, errs.Error())
			}
		})
	}
}

func TestTemplate_AllProblemsAtOnce(t *testing.T) {
	t.Parallel()
	_, err := testEnv(t).CompileTemplate(json.RawMessage(`{"a": "${{ x }}", "b": ["${{ item }}"], "c": "${{ 1 + }}"}`), "steps[0].input", Scope{})
	var errs Errors
	require.True(t, errors.As(err, &errs))
	paths := []string{}
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	require.Equal(t, []string{"steps[0].input.a", "steps[0].input.b[0]", "steps[0].input.c"}, paths)
}

func TestTemplate_EvalErrorNamesTheExpressionsPath(t *testing.T) {
	t.Parallel()
	tpl, err := testEnv(t).CompileTemplate(json.RawMessage(`{"a": {"b": "${{ input.missing }}"}}`), "steps[3].input", Scope{})
	require.NoError(t, err)
	_, err = tpl.Eval(Vars{Input: json.RawMessage(`{}`)})
	var e *Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, "steps[3].input.a.b", e.Path)
	require.Equal(t, RuleEval, e.Rule)
}
