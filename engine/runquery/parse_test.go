package runquery

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse_TheGrammar(t *testing.T) {
	t.Parallel()
	cases := []struct{ src, canonical string }{
		{`status = "FAILED"`, `status = "FAILED"`},
		{`status="FAILED"`, `status = "FAILED"`},
		{`status = 'FAILED'`, `status = "FAILED"`},
		{`a != 1 and b < 2.5 AND c <= -3 And d > 1e3 AND e >= 0`, `a != 1 AND b < 2.5 AND c <= -3 AND d > 1e3 AND e >= 0`},
		{`a = 1 OR b = 2 AND c = 3`, `a = 1 OR (b = 2 AND c = 3)`},
		{`(a = 1 OR b = 2) AND c = 3`, `(a = 1 OR b = 2) AND c = 3`},
		{`NOT a = 1`, `NOT a = 1`},
		{`not not (a = 1 or b = 2)`, `NOT NOT (a = 1 OR b = 2)`},
		{`status IN ("FAILED", "CANCELLED")`, `status IN ("FAILED", "CANCELLED")`},
		{`status not in ("FAILED")`, `status NOT IN ("FAILED")`},
		{`runId STARTS_WITH "r-"`, `runId STARTS_WITH "r-"`},
		{`vip = true AND gone = FALSE AND parentRunId = null`, `vip = TRUE AND gone = FALSE AND parentRunId = NULL`},
		{`s = "a \"quoted\" \\ \n\t\u00e9"`, `s = "a \"quoted\" \\ \n\té"`},
		{`s = 'it''s'`, ``},
		{"  a = 1\n\tAND b = 2  ", `a = 1 AND b = 2`},
		{`customer = "日本" AND x = 1`, `customer = "日本" AND x = 1`},
	}
	for _, c := range cases {
		e, err := Parse(c.src)
		if c.canonical == "" {
			require.Error(t, err, c.src)
			continue
		}
		require.NoError(t, err, c.src)
		require.Equal(t, c.canonical, e.String(), c.src)
		again, err := Parse(e.String())
		require.NoError(t, err)
		require.Equal(t, e.String(), again.String(), "the canonical form parses to itself")
	}
}

func TestParse_ErrorsNameTheColumnAndTheProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src  string
		want string
		col  int
	}{
		{`status = "FAILED" AND plan =`, `expected a value after '=' at column 29, found the end`, 29},
		{`plan = `, `expected a value after '=' at column 8, found the end`, 8},
		{`plan = order`, `expected a value after '=' at column 8, found 'order' (quote a string: "…")`, 8},
		{``, `the query is empty at column 1`, 1},
		{`   `, `the query is empty at column 1`, 1},
		{`= "x"`, `expected a field name at column 1, found '='`, 1},
		{`plan "x"`, `expected an operator after 'plan' (=, !=, <, <=, >, >=, IN, NOT IN, STARTS_WITH) at column 6, found a string`, 6},
		{`plan == "x"`, `'==' is written '=' at column 6`, 6},
		{`plan <> "x"`, `'<>' is written '!=' at column 6`, 6},
		{`plan ! "x"`, `unexpected character '!' (not equal is '!=', negation NOT) at column 6`, 6},
		{`plan = "x" plan = "y"`, `expected AND, OR or the end at column 12, found 'plan'`, 12},
		{`(plan = "x"`, `expected ')' to close the '(' of column 1 at column 12, found the end`, 12},
		{`plan = "x")`, `unexpected ')' without its '(' at column 11`, 11},
		{`plan = "x`, `an unterminated string starting at column 8`, 8},
		{`plan = "\q"`, `a bad escape in the string starting at column 8`, 8},
		{`status IN "FAILED"`, `expected '(' after IN at column 11, found a string`, 11},
		{`status IN ("A" "B")`, `expected ',' or ')' in the list of IN at column 16, found a string`, 16},
		{`status IN ()`, `expected a value after 'IN' at column 12, found ')'`, 12},
		{`status NOT = "A"`, `expected IN after NOT in a comparison at column 12, found '='`, 12},
		{`n = -`, `expected digits after '-' at column 5`, 5},
		{`n = 1.`, `expected digits after the decimal point at column 5`, 5},
		{`n = 12abc`, `a number runs into a name at column 5`, 5},
		{`customer = "日本" AND # = 1`, `unexpected character '#' at column 21`, 21},
		{`a = 1 AND`, `expected a field name at column 10, found the end`, 10},
	}
	for _, c := range cases {
		_, err := Parse(c.src)
		var e *Error
		require.True(t, errors.As(err, &e), c.src)
		require.Equal(t, c.want, e.Error(), c.src)
		require.Equal(t, c.col, e.Column, c.src)
	}
}

func TestParse_Bounds(t *testing.T) {
	t.Parallel()
	deep := ""
	for range MaxDepth + 1 {
		deep += "("
	}
	_, err := Parse(deep + "a = 1")
	require.ErrorContains(t, err, "nests deeper")
	long := make([]byte, MaxLength+1)
	for i := range long {
		long[i] = ' '
	}
	_, err = Parse(string(long))
	require.ErrorContains(t, err, "longer than")
	many := "a = 1"
	for range MaxTerms {
		many += " OR a = 1"
	}
	_, err = Parse(many)
	require.ErrorContains(t, err, "more than 200 comparisons")
}
