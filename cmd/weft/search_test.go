package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit"
)

// TestBinary_SubmitWithAttributesThenListAndCountByQuery: the weft binary
// against a real weftd submits runs with typed --attr values, lists them
// with --query (a bad query exits 1 naming the column and the problem, a
// bad --attr exits 2), counts them in total and grouped, and shows a run's
// attributes.
func TestBinary_SubmitWithAttributesThenListAndCountByQuery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds weft and weftd")
	}
	url := testkit.StartWeftd(t, nil).URL
	weft := binaryWeft(t, url)
	submit := func(args ...string) string {
		t.Helper()
		r := weft(append([]string{"submit", registryFile(t, "1", "ship", "echo"), "-q"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	acme1 := submit("--attr", "customer=acme", "--attr", "attempts:int=3", "--attr", "vip:bool=true")
	acme2 := submit("--attr", "customer=acme", "--attr", "attempts:int=1", "--attr", "due:time=2026-11-28T10:00:00Z")
	globex := submit("--attr", "customer=globex", "--attr", "score:double=2.5")
	plain := submit()

	r := weft("list", "--query", `customer = "acme" AND attempts > 1`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, acme1)
	for _, id := range []string{acme2, globex, plain} {
		require.NotContains(t, r.stdout, id)
	}
	r = weft("list", "--query", `customer IN ("acme", "globex") OR score >= 2`, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	for _, id := range []string{acme1, acme2, globex} {
		require.Contains(t, r.stdout, id)
	}
	require.NotContains(t, r.stdout, plain)

	r = weft("count", "--query", `customer STARTS_WITH "ac"`)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2\n", r.stdout)
	r = weft("count", "--group-by", "customer")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^acme\s+2$`, r.stdout)
	require.Regexp(t, `(?m)^globex\s+1$`, r.stdout)
	require.Regexp(t, `(?m)^\(none\)\s+1$`, r.stdout)
	require.Regexp(t, `(?m)^total\s+4$`, r.stdout)

	r = weft("get", acme1)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `attributes\s+attempts=3 customer=acme vip=true`, r.stdout)

	r = weft("list", "--query", `customer = `)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "column 12")
	r = weft("list", "--query", `nosuch = "x"`)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "nosuch")
	r = weft("submit", registryFile(t, "1", "ship", "echo"), "--attr", "attempts:int=three")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "an int is a whole number")
	r = weft("submit", registryFile(t, "1", "ship", "echo"), "--attr", "customer:int=4")
	require.Equal(t, 1, r.code, "customer is a keyword in this tenant")
	require.Contains(t, r.stderr, "search attribute customer is a keyword in this tenant")
	r = weft("count", "--group-by", "score")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "not by score")
}
