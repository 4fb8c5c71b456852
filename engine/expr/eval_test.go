package expr

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// evalCase is one evaluation: src over vars answers want (JSON) or fails by rule.
type evalCase struct {
	name  string
	src   string
	input string
	steps map[string]json.RawMessage
	item  string
	want  string
	rule  string
	hide  string // text of the input the error must not quote
	says  string // text the error's message holds
}

func TestEval_ValuesConvertExactly(t *testing.T) {
	t.Parallel()
	cases := []evalCase{
		{name: "an int stays an int", src: `input.n`, input: `{"n": 2}`, want: `2`},
		{name: "a double stays a double", src: `input.n`, input: `{"n": 2.0}`, want: `2.0`},
		{name: "an exponent is a double", src: `input.n`, input: `{"n": 1e3}`, want: `1000.0`},
		{name: "int arithmetic", src: `input.n + 1`, input: `{"n": 2}`, want: `3`},
		{name: "double arithmetic", src: `input.n * 2.0`, input: `{"n": 1.25}`, want: `2.5`},
		{name: "a large int is exact", src: `input.n + 1`, input: `{"n": 9007199254740993}`, want: `9007199254740994`},
		{name: "the largest int", src: `input.n`, input: `{"n": 9223372036854775807}`, want: `9223372036854775807`},
		{name: "above the int range is a uint", src: `input.n`, input: `{"n": 18446744073709551615}`, want: `18446744073709551615`},
		{name: "above the uint range is a double", src: `input.n`, input: `{"n": 18446744073709551616}`, want: `18446744073709552000.0`},
		{name: "a tiny double", src: `input.n`, input: `{"n": 1e-7}`, want: `1e-07`},
		{name: "a huge double", src: `input.n`, input: `{"n": 1e300}`, want: `1e+300`},
		{name: "a number beyond a double", src: `input.n`, input: `{"n": 1e400}`, rule: RuleJSON},
		{name: "null", src: `input.x`, input: `{"x": null}`, want: `null`},
		{name: "absent input is null", src: `input == null`, want: `true`},
		{name: "nested lists and maps, keys sorted", src: `{"b": [1, 2.5, null, {"z": true, "y": "s"}], "a": input}`, input: `{"q": [[]]}`,
			want: `{"a":{"q":[[]]},"b":[1,2.5,null,{"y":"s","z":true}]}`},
		{name: "a timestamp is RFC 3339 in UTC", src: `timestamp("2026-11-28T10:00:00+01:00") + duration("90m")`, want: `"2026-11-28T10:30:00Z"`},
		{name: "a timestamp keeps its nanoseconds", src: `timestamp("2026-11-28T10:00:00.123456789Z")`, want: `"2026-11-28T10:00:00.123456789Z"`},
		{name: "a duration is protobuf's JSON", src: `duration("1.5s")`, want: `"1.5s"`},
		{name: "a negative duration", src: `duration("-90m")`, want: `"-5400s"`},
		{name: "an int compared with a double", src: `input.amount > 0`, input: `{"amount": 0.5}`, want: `true`},
		{name: "a double equal to an int", src: `input.n == 2`, input: `{"n": 2.0}`, want: `true`},
		{name: "unicode strings", src: `input.s + "é"`, input: `{"s": "日本"}`, want: `"日本é"`},
		{name: "optional values", src: `input.?missing.orValue(7)`, input: `{}`, want: `7`},
		{name: "run.id", src: `"run-" + run.id`, want: `"run-r1"`},
		{name: "a step's output", src: `steps.charge.output.id`, steps: map[string]json.RawMessage{"charge": json.RawMessage(`{"id":"ch_1"}`)}, want: `"ch_1"`},
		{name: "a step that has no output", src: `steps.charge.output.id`, rule: RuleEval, says: "no such key: charge"},
		{name: "a missing key the expression names", src: `input.customer`, input: `{"cust": "acme"}`, rule: RuleEval, says: "no such key: customer"},
		{name: "a missing key by a literal", src: `input["the key"]`, input: `{}`, rule: RuleEval, says: "no such key: the key"},
		{name: "a missing key whose name is data", src: `input.m[input.k]`, input: `{"m": {}, "k": "s3cr3t-key"}`, rule: RuleEval, hide: "s3cr3t-key"},
		{name: "a conversion error quotes no input", src: `int(input.secret)`, input: `{"secret": "hunter2"}`, rule: RuleEval, hide: "hunter2"},
		{name: "a timestamp parse error quotes no input", src: `timestamp(input.at)`, input: `{"at": "hunter2-at"}`, rule: RuleEval, hide: "hunter2"},
		{name: "division by zero", src: `1 / input.n`, input: `{"n": 0}`, rule: RuleEval},
		{name: "NaN has no JSON form", src: `0.0 / 0.0`, rule: RuleEval},
		{name: "bytes have no JSON form", src: `dyn(b"abc")`, rule: RuleEval},
		{name: "a map with int keys has no JSON form", src: `{1: "a"}`, rule: RuleEval},
		{name: "the cost limit", src: `lists.range(5000).map(i, lists.range(5000).size())`, rule: RuleEval},
		{name: "malformed variable JSON", src: `input`, input: `{"a":`, rule: RuleJSON},
		{name: "a duplicate key in the input", src: `input`, input: `{"a":1,"a":2}`, rule: RuleJSON},
		{name: "an item in a fan-out", src: `{"sku": item.sku, "at": index}`, item: `{"sku": "A-1"}`, want: `{"at":3,"sku":"A-1"}`},
	}
	env := testEnv(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, err := env.Compile(c.src, "steps[1].input.x", JSON, Scope{Steps: []string{"charge"}, Known: known, FanOut: c.item != ""})
			require.NoError(t, err)
			got, err := p.EvalJSON(c.vars())
			if c.rule == "" {
				require.NoError(t, err)
				require.Equal(t, c.want, string(got))
				return
			}
			var e *Error
			require.True(t, errors.As(err, &e), "error %v", err)
			require.Equal(t, c.rule, e.Rule, e.Error())
			require.Equal(t, "steps[1].input.x", e.Path)
			if c.hide != "" {
				require.NotContains(t, e.Error(), c.hide)
			}
			require.Contains(t, e.Message, c.says)
		})
	}
}

// vars are the case's variables.
func (c evalCase) vars() Vars {
	v := Vars{RunID: "r1", Steps: c.steps, Index: 3}
	if c.input != "" {
		v.Input = json.RawMessage(c.input)
	}
	if c.item != "" {
		v.Item = json.RawMessage(c.item)
	}
	return v
}

func TestEval_EachKindAnswersItsGoType(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	vars := Vars{Input: json.RawMessage(`{"amount": 5, "flag": "yes", "at": "2026-11-28T09:00:00Z", "w": 2, "lines": [{"sku": "a"}, {"sku": "b"}]}`), RunID: "r1"}
	compile := func(src string, k Kind) *Program {
		p, err := env.Compile(src, "p", k, Scope{})
		require.NoError(t, err)
		return p
	}
	b, err := compile(`input.amount > 0`, Bool).EvalBool(vars)
	require.NoError(t, err)
	require.True(t, b)
	s, err := compile(`"customer-" + string(input.amount)`, String).EvalString(vars)
	require.NoError(t, err)
	require.Equal(t, "customer-5", s)
	n, err := compile(`input.w`, Number).EvalNumber(vars)
	require.NoError(t, err)
	require.Equal(t, 2.0, n)
	ts, err := compile(`timestamp(input.at) + duration("1h")`, Timestamp).EvalTimestamp(vars)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), ts)
	items, err := compile(`input.lines`, List).EvalList(vars)
	require.NoError(t, err)
	require.Equal(t, []json.RawMessage{json.RawMessage(`{"sku":"a"}`), json.RawMessage(`{"sku":"b"}`)}, items)

	_, err = compile(`input.flag`, Bool).EvalBool(vars)
	var e *Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, RuleResultType, e.Rule, "a dyn value of the wrong type fails when evaluated")
	_, err = compile(`1.0 / 0.0`, Number).EvalNumber(vars)
	require.True(t, errors.As(err, &e))
	require.Equal(t, RuleResultType, e.Rule, "an infinite weight is refused")
	_, err = compile(`true`, Bool).EvalString(vars)
	require.Error(t, err, "a program evaluates only as the kind it was compiled for")
}

func TestEval_MapsIterateInKeyOrder(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	input := json.RawMessage(`{"m": {"d": 4, "b": 2, "a": 1, "c": 3, "e": 5, "f": 6, "g": 7, "h": 8}}`)
	cases := map[string]string{
		`{"d": 4, "b": 2, "a": 1, "c": 3, "e": 5, "f": 6, "g": 7, "h": 8}.map(k, k)`: `["a","b","c","d","e","f","g","h"]`,
		`input.m.map(k, k)`:                                    `["a","b","c","d","e","f","g","h"]`,
		`input.m.transformList(k, v, k + string(v))`:           `["a1","b2","c3","d4","e5","f6","g7","h8"]`,
		`input.m.filter(k, input.m[k] > 4)`:                    `["e","f","g","h"]`,
		`{"z": 1, "y": 2}.transformMap(k, v, v * 2).map(k, k)`: `["y","z"]`,
	}
	for src, want := range cases {
		p, err := env.Compile(src, "p", JSON, Scope{})
		require.NoError(t, err, src)
		for range 50 {
			got, err := p.EvalJSON(Vars{Input: input})
			require.NoError(t, err, src)
			require.Equal(t, want, string(got), src)
		}
	}
}

func TestEval_ResultSizeIsBounded(t *testing.T) {
	t.Parallel()
	env, err := NewEnv(Limits{ResultBytes: 100})
	require.NoError(t, err)
	p, err := env.Compile(`lists.range(50).map(i, "abcdef")`, "steps[0].forEach", List, Scope{})
	require.NoError(t, err)
	_, err = p.EvalList(Vars{})
	var e *Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, RuleLimit, e.Rule)
	require.Equal(t, "steps[0].forEach", e.Path)

	p, err = env.Compile(`lists.range(50).map(i, "abcdef")`, "p", JSON, Scope{})
	require.NoError(t, err)
	_, err = p.EvalJSON(Vars{})
	require.True(t, errors.As(err, &e))
	require.Equal(t, RuleLimit, e.Rule)
}

func TestEval_IsDeterministic(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	p, err := env.Compile(`{"keys": input.m.map(k, k), "vals": input.m.transformList(k, v, v), "s": input.m.transformList(k, v, k).join(",")}`, "p", JSON, Scope{})
	require.NoError(t, err)
	vars := Vars{Input: json.RawMessage(`{"m": {"q": 1, "w": 2, "e": 3, "r": 4, "t": 5, "y": 6}}`)}
	first, err := p.EvalJSON(vars)
	require.NoError(t, err)
	for range 100 {
		got, err := p.EvalJSON(vars)
		require.NoError(t, err)
		require.Equal(t, string(first), string(got))
	}
}

func TestVars_SharedConvertsOnceAndAnswersTheSame(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	p, err := env.Compile(`{"c": input.customer, "id": steps.charge.output.id, "sku": item.sku, "i": index}`, "p", JSON, atFanOut)
	require.NoError(t, err)
	base := Vars{Input: json.RawMessage(`{"customer": "acme"}`), Steps: map[string]json.RawMessage{"charge": json.RawMessage(`{"id": "ch_1"}`)}}
	shared := base.Shared()
	for i, sku := range []string{"a", "b", "c"} {
		plain, shared := base, shared
		plain.Item, plain.Index = json.RawMessage(`{"sku":"`+sku+`"}`), i
		shared.Item, shared.Index = plain.Item, i
		want, err := p.EvalJSON(plain)
		require.NoError(t, err)
		got, err := p.EvalJSON(shared)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "the item and index are each copy's own")
	}
	require.NotNil(t, shared.cache.input, "the input was converted into the shared cache")
	require.Len(t, shared.cache.steps, 1)
}
