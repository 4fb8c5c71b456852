package expr

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testEnv is the environment the tests compile with.
func testEnv(t testing.TB) *Env {
	t.Helper()
	e, err := NewEnv(Limits{})
	require.NoError(t, err)
	return e
}

// scope is a definition's steps charge → ship → notify, as seen from notify's neighbour ship.
var (
	known    = []string{"charge", "ship", "notify"}
	atShip   = Scope{Steps: []string{"charge"}, Known: known}
	atFanOut = Scope{Steps: []string{"charge"}, Known: known, FanOut: true}
)

func TestCompile_EachRuleNamesPathRuleAndPosition(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	cases := []struct {
		name   string
		src    string
		kind   Kind
		scope  Scope
		rule   string // "" compiles
		line   int
		column int
		says   string
	}{
		{name: "a bool over the input", src: `input.amount > 0`, kind: Bool},
		{name: "a syntax error at its column", src: `input.amount >`, kind: Bool, rule: RuleSyntax, line: 1, column: 15},
		{name: "an undeclared name", src: `inptu.amount > 0`, kind: Bool, rule: RuleType, line: 1, column: 1, says: "undeclared reference to 'inptu'"},
		{name: "now() does not exist", src: `now() > timestamp("2026-01-01T00:00:00Z")`, kind: Bool, rule: RuleType, says: "undeclared reference to 'now'"},
		{name: "an upstream step's output", src: `steps.charge.output.ok`, kind: Bool, scope: atShip},
		{name: "an upstream step by index", src: `steps["charge"].output.ok == true`, kind: Bool, scope: atShip},
		{name: "has() of an upstream step", src: `has(steps.charge)`, kind: Bool, scope: atShip},
		{name: "has() of its output", src: `has(steps.charge.output)`, kind: Bool, scope: atShip},
		{name: "an unknown step is named", src: `steps.chrage.output`, scope: atShip, rule: RuleUnknownStep, line: 1, column: 7, says: `no step has the id "chrage"`},
		{name: "a step that is not upstream is named", src: `1 + steps.notify.output.n`, scope: atShip, rule: RuleNotUpstream, column: 11, says: `step "notify" is not upstream`},
		{name: "definition level sees no step", src: `steps.charge.output`, scope: Scope{Known: known}, rule: RuleNotUpstream},
		{name: "steps alone", src: `size(steps) > 0`, kind: Bool, scope: atShip, rule: RuleStepShape, column: 6},
		{name: "a step without .output", src: `steps.charge`, scope: atShip, rule: RuleStepShape},
		{name: "a field other than output", src: `steps.charge.result`, scope: atShip, rule: RuleStepShape, says: "only .output, not .result"},
		{name: "a computed step id", src: `steps[input.k].output`, scope: atShip, rule: RuleStepShape, says: "cannot be computed"},
		{name: "a comprehension variable shadows steps", src: `input.list.map(steps, steps + 1)`, scope: atShip},
		{name: "item outside a fan-out", src: `item.sku`, rule: RuleFanOutOnly, column: 1, says: "only in a forEach"},
		{name: "index outside a fan-out", src: `index`, kind: Number, rule: RuleFanOutOnly},
		{name: "item in a fan-out", src: `item.sku + "-" + string(index)`, kind: String, scope: atFanOut},
		{name: "run.id is a string", src: `"k-" + run.id`, kind: String},
		{name: "run has only id", src: `run.name`, rule: RuleType},
		{name: "a bool key given an int", src: `1 + 1`, kind: Bool, rule: RuleResultType, says: "must be a bool, and is int"},
		{name: "a list key given a map", src: `{"a": 1}`, kind: List, rule: RuleResultType},
		{name: "a string key given a bool", src: `true`, kind: String, rule: RuleResultType},
		{name: "a number key given a string", src: `"1"`, kind: Number, rule: RuleResultType},
		{name: "a number may be an int", src: `2`, kind: Number},
		{name: "a number may be a double", src: `0.5`, kind: Number},
		{name: "a timestamp key given a string", src: `"2026-01-01T00:00:00Z"`, kind: Timestamp, rule: RuleResultType},
		{name: "a timestamp", src: `timestamp("2026-01-01T00:00:00Z") + duration("24h")`, kind: Timestamp},
		{name: "a bad timestamp literal", src: `timestamp("tomorrow")`, kind: Timestamp, rule: RuleType},
		{name: "a bad regex literal", src: `input.s.matches("(")`, kind: Bool, rule: RuleType},
		{name: "bytes have no JSON form", src: `b"abc"`, rule: RuleResultType},
		{name: "dyn results are checked when evaluated", src: `input.flag`, kind: Bool},
		{name: "an empty expression", src: "  ", rule: RuleEmpty},
		{name: "too long", src: strings.Repeat("1+", 3000) + "1", rule: RuleSyntax},
		{name: "nested too deeply", src: strings.Repeat("(", 40) + "1" + strings.Repeat(")", 40), rule: RuleSyntax},
		{name: "comprehensions nested too deeply", src: `[[[[1]]]].all(a, a.all(b, b.all(c, c.all(d, d > 0))))`, kind: Bool, rule: RuleType},
		{name: "the second line's position", src: "input.a &&\n  inptu.b", kind: Bool, rule: RuleType, line: 2, column: 3},
		{name: "optional syntax", src: `input.?x.orValue(1)`, kind: JSON},
		{name: "string extensions", src: `input.name.lowerAscii().trim()`, kind: String},
		{name: "math extensions", src: `math.greatest(1, 2.5)`, kind: Number},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			const path = "steps[2].when"
			_, err := env.Compile(c.src, path, c.kind, c.scope)
			if c.rule == "" {
				require.NoError(t, err)
				return
			}
			var errs Errors
			require.True(t, errors.As(err, &errs), "error %v", err)
			first := errs[0]
			require.Equal(t, path, first.Path)
			require.Equal(t, c.rule, first.Rule, first.Error())
			if c.column > 0 {
				require.Equal(t, c.column, first.Column, first.Error())
			}
			if c.line > 0 {
				require.Equal(t, c.line, first.Line, first.Error())
			}
			require.Contains(t, first.Message, c.says)
			require.True(t, strings.HasPrefix(err.Error(), path+": "), err.Error())
		})
	}
}

func TestCompile_ReportsEveryStepProblemAtOnce(t *testing.T) {
	t.Parallel()
	_, err := testEnv(t).Compile(`steps.a.output + steps.notify.output + item`, "steps[1].input.x", JSON, atShip)
	var errs Errors
	require.True(t, errors.As(err, &errs))
	rules := []string{}
	for _, e := range errs {
		rules = append(rules, e.Rule)
	}
	require.Equal(t, []string{RuleUnknownStep, RuleNotUpstream, RuleFanOutOnly}, rules)
}

func TestCompile_RecordsTheStepsItReads(t *testing.T) {
	t.Parallel()
	p, err := testEnv(t).Compile(`steps.charge.output.id + steps["ship"].output.id`, "p", String,
		Scope{Steps: []string{"charge", "ship"}, Known: known})
	require.NoError(t, err)
	require.Equal(t, []string{"charge", "ship"}, p.Steps())
	require.Equal(t, "p", p.Path())
}

func TestCompileKey_BareCELOrATemplate(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	for _, s := range []string{`timestamp(input.at)`, `${{ timestamp(input.at) }}`} {
		p, err := env.CompileKey(s, "steps[4].sleepUntil", Timestamp, Scope{})
		require.NoError(t, err, s)
		_, err = p.EvalTimestamp(Vars{Input: []byte(`{"at": "2026-11-29T09:00:00Z"}`)})
		require.NoError(t, err)
	}
	_, err := env.CompileKey(`${{ inptu.at }}`, "steps[4].sleepUntil", Timestamp, Scope{})
	var errs Errors
	require.True(t, errors.As(err, &errs))
	require.Equal(t, 5, errs[0].Column, "the column counts the ${{")
	_, err = env.CompileKey(`inptu.at`, "steps[4].when", Bool, Scope{})
	require.True(t, errors.As(err, &errs))
	require.Equal(t, 1, errs[0].Column)
}
