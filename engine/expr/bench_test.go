package expr

import (
	"encoding/json"
	"testing"
)

func BenchmarkNewEnv(b *testing.B) {
	for b.Loop() {
		if _, err := NewEnv(Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	env := testEnv(b)
	for b.Loop() {
		if _, err := env.Compile(`input.amount > 0 && steps.charge.output.status == "ok"`, "steps[1].when", Bool, atShip); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalBool(b *testing.B) {
	env := testEnv(b)
	p, err := env.Compile(`input.amount > 0 && steps.charge.output.status == "ok"`, "steps[1].when", Bool, atShip)
	if err != nil {
		b.Fatal(err)
	}
	vars := Vars{Input: json.RawMessage(`{"amount": 12.5, "customer": "acme", "lines": [{"sku": "a"}, {"sku": "b"}]}`),
		Steps: map[string]json.RawMessage{"charge": json.RawMessage(`{"status": "ok", "id": "ch_1"}`)}}
	for b.Loop() {
		if ok, err := p.EvalBool(vars); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkTemplateEval(b *testing.B) {
	env := testEnv(b)
	tpl, err := env.CompileTemplate(json.RawMessage(`{"customer": "${{ input.customer }}", "cents": "${{ int(input.amount * 100.0) }}", "charge": "${{ steps.charge.output.id }}", "note": "fixed"}`),
		"steps[1].input", atShip)
	if err != nil {
		b.Fatal(err)
	}
	vars := Vars{Input: json.RawMessage(`{"amount": 12.5, "customer": "acme"}`), Steps: map[string]json.RawMessage{"charge": json.RawMessage(`{"id": "ch_1"}`)}}
	for b.Loop() {
		if _, err := tpl.Eval(vars); err != nil {
			b.Fatal(err)
		}
	}
}
