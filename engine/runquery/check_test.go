package runquery

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testSchema declares customer (keyword), attempts (int), score (double),
// vip (bool) and dueAt (time).
func testSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := NewSchema(map[string]Type{"customer": Keyword, "attempts": Int, "score": Double, "vip": Bool, "dueAt": Time})
	require.NoError(t, err)
	return s
}

func TestCheck_TypesAndTheirOperators(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	cases := []struct {
		src  string
		want string // "" checks
		col  int
	}{
		{src: `status = "FAILED" AND plan = "order-fulfilment" AND customer = "acme" AND failedStep = "charge" AND createdAt > "2026-11-28T10:00:00Z"`},
		{src: `status IN ("FAILED", "CANCELLED") AND planVersion != "3" AND submittedBy STARTS_WITH "ops-"`},
		{src: `attempts >= 2 AND score < 0.5 AND vip = TRUE AND dueAt <= "2026-11-28T10:00:00.5+01:00"`},
		{src: `attempts > 1.5 AND score = 2`},
		{src: `parentRunId = NULL OR endedAt != NULL`},
		{src: `custmer = "acme"`, want: `unknown field 'custmer' (a built-in field or a declared search attribute) at column 1`, col: 1},
		{src: `status = "FIALED"`, want: `status is one of PENDING, APPROVED, QUEUED, RUNNING, BLOCKED, PAUSED, COMPENSATING, COMPLETED, FAILED, CANCELLED at column 10`, col: 10},
		{src: `status < "FAILED"`, want: `status (one of its values) does not support <; it supports =, !=, IN, NOT IN at column 8`, col: 8},
		{src: `status STARTS_WITH "F"`, want: `status (one of its values) does not support STARTS_WITH; it supports =, !=, IN, NOT IN at column 8`, col: 8},
		{src: `plan = 3`, want: `plan is a keyword: compare it with a string at column 8`, col: 8},
		{src: `attempts = "2"`, want: `attempts is an int: compare it with an integer at column 12`, col: 12},
		{src: `attempts STARTS_WITH "2"`, want: `attempts (an int) does not support STARTS_WITH; it supports =, !=, <, <=, >, >=, IN, NOT IN at column 10`, col: 10},
		{src: `vip > FALSE`, want: `vip (a bool) does not support >; it supports =, != at column 5`, col: 5},
		{src: `vip = "yes"`, want: `vip is a bool: compare it with TRUE or FALSE at column 7`, col: 7},
		{src: `createdAt > "yesterday"`, want: `createdAt is a time: compare it with an RFC 3339 time such as "2026-11-28T10:00:00Z" at column 13`, col: 13},
		{src: `createdAt > 5`, want: `createdAt is a time: compare it with an RFC 3339 time such as "2026-11-28T10:00:00Z" at column 13`, col: 13},
		{src: `score > 1e999`, want: `the number is out of range at column 9`, col: 9},
		{src: `endedAt > NULL`, want: `NULL is compared only with = and != at column 11`, col: 11},
		{src: `customer IN ("a", NULL)`, want: `customer is a keyword: compare it with a string at column 19`, col: 19},
		{src: `runId STARTS_WITH ""`, want: `STARTS_WITH needs a prefix that is not empty at column 19`, col: 19},
		{src: `a = 1 OR (b = 2 AND NOT plan = 1)`, want: `unknown field 'a' (a built-in field or a declared search attribute) at column 1`, col: 1},
		{src: `plan = "x" OR NOT (customer = "y" AND attempts = "z")`, want: `attempts is an int: compare it with an integer at column 50`, col: 50},
	}
	for _, c := range cases {
		_, err := Compile(c.src, schema)
		if c.want == "" {
			require.NoError(t, err, c.src)
			continue
		}
		var e *Error
		require.True(t, errors.As(err, &e), c.src)
		require.Equal(t, c.want, e.Error(), c.src)
		require.Equal(t, c.col, e.Column)
	}
}

func TestSchema_AttributeNamesAndTypes(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "1x", "a-b", "status", "runId", "and", "Starts_With", "x y", string(make([]byte, 65))} {
		_, err := NewSchema(map[string]Type{bad: Keyword})
		require.Error(t, err, "%q", bad)
	}
	_, err := NewSchema(map[string]Type{"customer": 0})
	require.Error(t, err)
	for _, name := range []string{"keyword", "int", "double", "bool", "time"} {
		typ, err := ParseType(name)
		require.NoError(t, err)
		require.Equal(t, name, typ.String())
	}
	_, err = ParseType("string")
	require.Error(t, err)
	many := map[string]Type{}
	for i := range MaxAttributes + 1 {
		many["a"+string(rune('a'+i%26))+string(rune('a'+i/26))] = Int
	}
	_, err = NewSchema(many)
	require.Error(t, err)
}

func TestAttributeValue_ReadsJSONByType(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	ok := []struct {
		t    Type
		raw  string
		want Value
	}{
		{Keyword, `"acme"`, KeywordValue("acme")},
		{Int, `42`, IntValue(42)},
		{Int, `9007199254740993`, IntValue(9007199254740993)},
		{Double, `2.5`, DoubleValue(2.5)},
		{Double, `2`, DoubleValue(2)},
		{Bool, `true`, BoolValue(true)},
		{Time, `"2026-11-28T10:00:00+01:00"`, TimeValue(at)},
	}
	for _, c := range ok {
		v, err := AttributeValue(c.t, []byte(c.raw))
		require.NoError(t, err, c.raw)
		require.Equal(t, c.want.Type, v.Type)
		o, same := compare(v, c.want)
		require.True(t, same && o == 0, c.raw)
	}
	for _, c := range []struct {
		t   Type
		raw string
	}{{Keyword, `1`}, {Int, `1.5`}, {Int, `"1"`}, {Double, `"x"`}, {Bool, `1`}, {Time, `"soon"`}, {Keyword, `"a" "b"`}, {Int, `{`},
		{Keyword, `"` + string(make([]byte, 0)) + stringsRepeat("x", MaxKeyword+1) + `"`}} {
		_, err := AttributeValue(c.t, []byte(c.raw))
		require.Error(t, err, c.raw)
		require.NotContains(t, err.Error(), "soon", "no value quoted")
	}
}

func stringsRepeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestMatch_AbsentFieldsAndNull(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	run := Values{FieldStatus: KeywordValue("RUNNING"), FieldPlan: KeywordValue("order")} // no endedAt, no customer
	cases := map[string]bool{
		`endedAt = NULL`:                   true,
		`endedAt != NULL`:                  false,
		`plan != NULL`:                     true,
		`customer = "acme"`:                false,
		`customer != "acme"`:               true,
		`NOT customer = "acme"`:            true,
		`customer IN ("acme")`:             false,
		`customer NOT IN ("acme")`:         true,
		`customer STARTS_WITH "a"`:         false,
		`endedAt > "2000-01-01T00:00:00Z"`: false,
		`endedAt < "2000-01-01T00:00:00Z"`: false,
		`status = "RUNNING" AND plan = "order" AND NOT (customer = "x" OR endedAt != NULL)`: true,
	}
	for src, want := range cases {
		q, err := Compile(src, schema)
		require.NoError(t, err, src)
		require.Equal(t, want, q.Match(run), src)
	}
}

func TestSchema_GroupBy(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	for _, ok := range []string{"status", "plan", "failedStep", "customer", "vip", "attempts"} {
		_, err := schema.GroupField(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"createdAt", "runId", "score", "dueAt", "nope"} {
		_, err := schema.GroupField(bad)
		require.Error(t, err, bad)
	}
}
