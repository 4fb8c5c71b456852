package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const mod = "example.com/m"

func TestMatches_PatternKinds(t *testing.T) {
	g := graph{module: mod}
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{std, "context", true},
		{std, "net/http", true},
		{std, "github.com/x/y", false},
		{std, mod + "/store", false},
		{"store", mod + "/store", true},
		{"store", mod + "/store/memstore", false},
		{"store/...", mod + "/store", true},
		{"store/...", mod + "/store/memstore", true},
		{"store/...", mod + "/storex", false},
		{"engine", mod + "/engine/definition", false},
		{"github.com/redis/go-redis/v9/...", "github.com/redis/go-redis/v9", true},
		{"github.com/redis/go-redis/v9/...", "github.com/redis/go-redis/v9/internal", true},
		{"github.com/redis/go-redis/v9", "github.com/redis/go-redis/v9/internal", false},
		{"...", mod + "/anything", true},
	} {
		require.Equal(t, tc.want, g.matches(tc.pattern, tc.path), "%s ~ %s", tc.pattern, tc.path)
	}
}

func TestRuleFor_FirstMatchingRowWins(t *testing.T) {
	g := graph{module: mod}
	table := []rule{{pkg: "engine/definition", deny: list("store")}, {pkg: "engine/...", allow: list(std)}, {pkg: "...", deny: list("server")}}
	r, ok := g.ruleFor(table, mod+"/engine/definition")
	require.True(t, ok)
	require.Equal(t, "engine/definition", r.pkg)
	r, _ = g.ruleFor(table, mod+"/engine/runstate")
	require.Equal(t, "engine/...", r.pkg)
	r, _ = g.ruleFor(table, mod+"/schedule")
	require.Equal(t, "...", r.pkg)
	_, ok = g.ruleFor(table[:2], mod+"/schedule")
	require.False(t, ok)
}

// fixture: server → engine → store; engine's tests import server.
func fixture() []pkg {
	return []pkg{
		{ImportPath: mod + "/store", Imports: []string{"context"}},
		{ImportPath: mod + "/engine", Imports: []string{"context", mod + "/store"}, TestImports: []string{mod + "/server"}},
		{ImportPath: mod + "/server", Imports: []string{mod + "/engine", "connectrpc.com/connect"}},
		{ImportPath: mod + "/bad", Imports: []string{mod + "/engine"}},
	}
}

func messages(fs []finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

func TestCheckImports_AnImportOutsideTheAllowListFails(t *testing.T) {
	table := []rule{{pkg: "store", allow: list(std)}, {pkg: "engine", allow: list(std)}, {pkg: "..."}}
	fs := checkImports(fixture(), mod, table, nil)
	require.Len(t, fs, 1, messages(fs))
	require.Equal(t, "engine", fs[0].where)
	require.Contains(t, fs[0].msg, "imports example.com/m/store, which its rule (engine in tools/weftlint/rules.go) does not allow")
	require.False(t, fs[0].warning)
}

func TestCheckImports_ADeniedPackageReachedThroughAnotherFailsWithTheChain(t *testing.T) {
	table := []rule{{pkg: "bad", deny: list("store/...")}, {pkg: "..."}}
	fs := checkImports(fixture(), mod, table, nil)
	require.Len(t, fs, 1, messages(fs))
	require.Equal(t, "bad", fs[0].where)
	require.Contains(t, fs[0].msg, "its code reach store (via engine → store)")
}

func TestCheckImports_DenyCoversTests(t *testing.T) {
	table := []rule{{pkg: "engine", deny: list("server")}, {pkg: "..."}}
	fs := checkImports(fixture(), mod, table, nil)
	require.Len(t, fs, 1, messages(fs))
	require.Contains(t, fs[0].msg, "its tests reach server")
	require.False(t, fs[0].warning)
}

func TestCheckImports_APendingExceptionWarnsAndAStaleOneIsReported(t *testing.T) {
	table := []rule{{pkg: "engine", deny: list("server")}, {pkg: "..."}}
	known := []exception{{pkg: "engine", imports: "server", tests: true, why: "moving"}, {pkg: "store", imports: "server", why: "gone"}}
	fs := checkImports(fixture(), mod, table, known)
	require.Len(t, fs, 2, messages(fs))
	require.True(t, fs[0].warning)
	require.Contains(t, fs[0].msg, "(pending: moving)")
	require.True(t, fs[1].warning)
	require.Contains(t, fs[1].msg, "no longer happens")
	// An exception for the package's code does not cover its tests.
	fs = checkImports(fixture(), mod, table, []exception{{pkg: "engine", imports: "server", why: "code only"}})
	require.False(t, fs[0].warning, messages(fs))
}

func TestCheckImports_APackageNoRowNamesFails(t *testing.T) {
	fs := checkImports(fixture(), mod, []rule{{pkg: "store"}, {pkg: "engine"}, {pkg: "server"}}, nil)
	require.Len(t, fs, 1, messages(fs))
	require.Equal(t, "bad", fs[0].where)
	require.Contains(t, fs[0].msg, "no import rule names this package")
}

func TestRules_EveryRowIsReachable(t *testing.T) {
	g := graph{module: mod}
	for i, r := range rules {
		path := mod + "/" + r.pkg
		if base, ok := strings.CutSuffix(r.pkg, "..."); ok {
			path = mod + "/" + base + "zz-probe" // a package below it no earlier row names
		}
		got, ok := g.ruleFor(rules, path)
		require.True(t, ok, r.pkg)
		require.Equal(t, r.pkg, got.pkg, "row %d (%s) is shadowed by an earlier row", i, r.pkg)
	}
}

// TestRules_TheLayersPointDown pins the rules the issue names, so that a row
// edited to let them slip fails here too.
func TestRules_TheLayersPointDown(t *testing.T) {
	g := graph{module: mod}
	denied := func(pkg, target string) bool {
		r, ok := g.ruleFor(rules, mod+"/"+pkg)
		require.True(t, ok, pkg)
		for _, d := range r.deny {
			if g.matches(d, mod+"/"+target) {
				return true
			}
		}
		if r.allow == nil {
			return false
		}
		for _, a := range r.allow {
			if g.matches(a, mod+"/"+target) {
				return false
			}
		}
		return true
	}
	for _, tc := range []struct{ pkg, target string }{
		{"engine", "server"}, {"engine/dispatch", "server"}, {"engine/internal/dispatch", "server"},
		{"engine/definition", "store"}, {"engine/definition", "engine"}, {"engine/runstate", "store"}, {"engine/runstate", "engine"},
		{"engine", "store/pebblestore"}, {"engine", "store/sqlstore"},
		{"store", "engine"}, {"store", "server"}, {"store/memstore", "engine"},
		{"lease", "store"}, {"wake", "engine"}, {"client", "engine"}, {"client", "server"}, {"client/worker", "store"},
		{"schedule", "server"},
	} {
		require.True(t, denied(tc.pkg, tc.target), "%s may import %s", tc.pkg, tc.target)
	}
	for _, pkg := range []string{"engine", "engine/definition", "engine/runstate", "engine/eventpb", "engine/internal/dispatch", "engine/anything-new"} {
		r, _ := g.ruleFor(rules, mod+"/"+pkg)
		require.True(t, slices.ContainsFunc(r.deny, func(d string) bool { return g.matches(d, mod+"/server") }),
			"%s's tests may reach the server", pkg)
	}
	require.False(t, denied("server", "engine"), "server → engine")
	require.False(t, denied("engine", "store"), "engine → store")
}
