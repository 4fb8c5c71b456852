package expr

import (
	"encoding/json"
	"errors"
	"testing"
)

// checkNamesPath fails unless err is nil or every error in it names path
// (or, for a template, a path below it) and a rule.
func checkNamesPath(t *testing.T, err error, path string) {
	t.Helper()
	if err == nil {
		return
	}
	var errs Errors
	var one *Error
	switch {
	case errors.As(err, &errs):
	case errors.As(err, &one):
		errs = Errors{one}
	default:
		t.Fatalf("error of type %T: %v", err, err)
	}
	if len(errs) == 0 {
		t.Fatal("an empty Errors")
	}
	for _, e := range errs {
		if len(e.Path) < len(path) || e.Path[:len(path)] != path || e.Rule == "" || e.Message == "" {
			t.Fatalf("error %+v does not name %s and a rule", e, path)
		}
	}
}

// FuzzCompile compiles and evaluates any expression over any input: never
// a panic, and every error names the expression's path.
func FuzzCompile(f *testing.F) {
	seeds := []string{`input.amount > 0`, `steps.charge.output.id`, `item.sku + string(index)`, `{"a": [1, 2.5]}.map(k, k)`,
		`timestamp(input.at) + duration("1h")`, `input.?x.orValue(1)`, `lists.range(10).map(i, i * i)`, `1 / 0`, `"${{"`,
		`input.s.matches("a+")`, `steps[input.k].output`, `has(steps.charge)`, `[[[[1]]]].all(a, a.all(b, b > 0))`, `math.greatest(1, 2.5)`,
		// forEach lists (docs/semantics.md#for-each) and what an item's input reads
		`steps.charge.output.lines.map(l, l.sku)`, `lists.range(input.amount)`, `input.lines.filter(l, l.n > index)`,
		`[item, index, item.sku]`, `lists.range(100000)`, `input.lines[index]`, `{"a": 1}.map(k, item[k])`}
	for _, s := range seeds {
		f.Add(s, []byte(`{"amount": 5, "at": "2026-01-01T00:00:00Z", "s": "aaa", "k": "charge"}`))
	}
	env, err := NewEnv(Limits{})
	if err != nil {
		f.Fatal(err)
	}
	scope := Scope{Steps: []string{"charge"}, Known: []string{"charge", "ship"}, FanOut: true}
	f.Fuzz(func(t *testing.T, src string, input []byte) {
		const path = "steps[1].when"
		for _, k := range []Kind{JSON, Bool, List} {
			p, err := env.Compile(src, path, k, scope)
			checkNamesPath(t, err, path)
			if err != nil {
				continue
			}
			vars := Vars{Input: input, Steps: map[string]json.RawMessage{"charge": input}, Item: input, RunID: "r1"}
			switch k {
			case JSON:
				out, err := p.EvalJSON(vars)
				checkNamesPath(t, err, path)
				if err == nil && !json.Valid(out) {
					t.Fatalf("%q answered invalid JSON %q", src, out)
				}
			case Bool:
				_, err := p.EvalBool(vars)
				checkNamesPath(t, err, path)
			case List:
				_, err := p.EvalList(vars)
				checkNamesPath(t, err, path)
			}
		}
	})
}

// FuzzTemplate compiles and evaluates any JSON value as a template: never
// a panic, and every error names a path at or below the value's.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{`{"a": "${{ input.x }}", "b": ["$${{ y }}", 1.0]}`, `"${{ item }}"`, `[{"k": "${{ steps.charge.output }}"}]`,
		`{"a": 1, "a": 2}`, `{"x": "${{ 1 + }}"}`, `[[[[[]]]]]`, `"${{}}"`, `{"a b": "${{ nope }}"}`} {
		f.Add([]byte(s), []byte(`{"x": 1}`))
	}
	env, err := NewEnv(Limits{})
	if err != nil {
		f.Fatal(err)
	}
	scope := Scope{Steps: []string{"charge"}, Known: []string{"charge"}}
	f.Fuzz(func(t *testing.T, doc, input []byte) {
		const path = "steps[0].input"
		tpl, err := env.CompileTemplate(doc, path, scope)
		checkNamesPath(t, err, path)
		if err != nil {
			return
		}
		out, err := tpl.Eval(Vars{Input: input, Steps: map[string]json.RawMessage{"charge": input}})
		checkNamesPath(t, err, path)
		if err == nil && !json.Valid(out) {
			t.Fatalf("template answered invalid JSON %q", out)
		}
	})
}
