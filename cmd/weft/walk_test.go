package main

// The scripted walk of issue 37: a new user's path through the README and
// docs/definitions.md, with weft and weftd as real processes. (The README's
// quickstart is walked by TestBinary_QuickstartAgainstRealWeftdAndExampleWorker;
// the console by console/test/e2e.ts.)

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// inputComment is an example's line saying the input it is submitted with.
var inputComment = regexp.MustCompile(`(?m)^# input: (.*)$`)

// TestWalk_EveryExampleOfDocsDefinitionsIsSubmittedByWeft: each YAML block
// of the page, written to a file, is accepted by weft submit — with the
// input its "# input: {…}" comment line gives, when it has one (a
// flow-control key over the input is evaluated at submission).
func TestWalk_EveryExampleOfDocsDefinitionsIsSubmittedByWeft(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("../../docs/definitions.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(page), -1)
	require.Greater(t, len(blocks), 50, "a block per key")
	r := startReal(t)
	dir := t.TempDir()
	// The stored definitions the sub-workflow examples name (docs/semantics.md#sub-workflows).
	for _, stored := range []string{"refund\nversion: \"2\"", "refund\nversion: \"3\"", "audit-trail"} {
		file := filepath.Join(dir, "stored.yaml")
		require.NoError(t, os.WriteFile(file, []byte("planId: "+stored+"\nsteps:\n  - name: a\n"), 0o600))
		require.Equal(t, 0, r.weft("definition", "put", file).code, stored)
	}
	for i, b := range blocks {
		file := filepath.Join(dir, "example.yaml")
		require.NoError(t, os.WriteFile(file, []byte(b[1]), 0o600))
		args := []string{"submit", "-q", file}
		if m := inputComment.FindStringSubmatch(b[1]); m != nil {
			args = append(args, "--input", m[1])
		}
		res := r.weft(args...)
		require.Equal(t, 0, res.code, "example %d:\n%s\n%s", i, b[1], res.stderr)
		require.Regexp(t, `^run-`, res.stdout)
	}
}

// TestWalk_EveryWeftCommandTheReadmeNamesExistsAndHasHelp: a command the
// README mentions (weft NAME, weft schedule NAME) answers --help with exit
// 0; the README links the definitions reference.
func TestWalk_EveryWeftCommandTheReadmeNamesExistsAndHasHelp(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.True(t, strings.Contains(string(readme), "docs/definitions.md"), "the README links the definitions reference")
	r := &real{t: t, bin: built(t), url: "http://127.0.0.1:1"}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile("`weft (schedule )?([a-z][a-z-]+)").FindAllStringSubmatch(string(readme), -1) {
		args := strings.Fields(m[1] + m[2])
		if seen[strings.Join(args, " ")] {
			continue
		}
		seen[strings.Join(args, " ")] = true
		res := r.weft(append(args, "--help")...)
		require.Equal(t, 0, res.code, "the README names weft %v: %s", args, res.stderr)
	}
	require.NotEmpty(t, seen)
}

// TestWalk_EveryWeftdFlagTheReadmeNamesReadsTheEnvironmentVariableItSays:
// each "--flag (`WEFT_X`" of the README is a flag of weftd that reads WEFT_X.
func TestWalk_EveryWeftdFlagTheReadmeNamesReadsTheEnvironmentVariableItSays(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("../weftd/main.go")
	require.NoError(t, err)
	pairs := regexp.MustCompile("`--([a-z-]+)` \\(`(WEFT_[A-Z_]+)`").FindAllStringSubmatch(string(readme), -1)
	require.Greater(t, len(pairs), 15)
	for _, p := range pairs {
		line := regexp.MustCompile(`(?m)^.*fs\.\w+\("` + regexp.QuoteMeta(p[1]) + `".*$`).FindString(string(src))
		require.NotEmpty(t, line, "weftd has no flag --%s", p[1])
		require.Contains(t, line, `"`+p[2]+`"`, "--%s reads %s", p[1], p[2])
	}
}
