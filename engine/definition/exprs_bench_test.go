package definition

import (
	"encoding/json"
	"fmt"
	"testing"
)

// chainOf answers a sequence of n steps whose last reads the one before it
// in its when and its input.
func chainOf(n int) *Definition {
	d := &Definition{PlanID: "p", PlanVersion: "1"}
	for i := range n {
		d.Actions = append(d.Actions, Action{ID: fmt.Sprintf("s%d", i), Order: i + 1, Activity: "x"})
	}
	last := &d.Actions[n-1]
	prev := d.Actions[n-2].ID
	last.When = "steps." + prev + ".output.ok && input.amount > 0"
	last.Input = json.RawMessage(`{"total":"${{ steps.` + prev + `.output.n * 2 }}","who":"${{ input.user }}","lit":"x"}`)
	return d
}

func benchValues() Values {
	out := json.RawMessage(`{"ok":true,"n":21}`)
	return Values{Input: json.RawMessage(`{"amount":5,"user":"ada"}`), RunID: "run-1",
		Output: func(string) json.RawMessage { return out }}
}

// What a step's when and input expressions cost a decision, on a sequence
// of 10 and of 1000 steps (the compiled programs are kept; the scope is
// worked out each time).
func BenchmarkExpressions_EvalWhen(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			d, v := chainOf(n), benchValues()
			a := &d.Actions[n-1]
			b.ReportAllocs()
			for b.Loop() {
				if ok, err := d.EvalWhen(a, v); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

func BenchmarkExpressions_ResolveInput(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			d, v := chainOf(n), benchValues()
			a := &d.Actions[n-1]
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.ResolveInput(a, v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// What validating a definition of 1000 steps costs when each step has a
// when and an input expression reading the step before it (the programs are
// compiled anew: each iteration's expressions differ).
func BenchmarkExpressions_Validate1000Steps(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := chainOf(1000)
		for j := 1; j < len(d.Actions); j++ {
			prev := d.Actions[j-1].ID
			d.Actions[j].When = fmt.Sprintf("steps.%s.output.n > %d", prev, i)
			d.Actions[j].Input = json.RawMessage(fmt.Sprintf(`{"n":"${{ steps.%s.output.n + %d }}"}`, prev, i))
		}
		if err := d.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
