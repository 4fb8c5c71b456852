package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBinary_ASubWorkflowStepShowsItsChildTheChildItsParentAndTheParentAwaitsIt
// drives a run whose step starts a child run with real weft and weftd
// processes (docs/semantics.md#sub-workflows): weft get shows the parent's
// step's child and the child's parent, the child's result becomes the
// step's output once a signal ends the child, and weft await answers the
// parent COMPLETED. A plan the registry does not hold is refused at its
// YAML path.
func TestBinary_ASubWorkflowStepShowsItsChildTheChildItsParentAndTheParentAwaitsIt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds weft and weftd")
	}
	r := startReal(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "order.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`planId: order
result: approve
steps:
  - name: approve
    workflow:
      result: go-ahead
      input: {order: A-1}
      steps:
        - name: go-ahead
          waitForSignal: go
`), 0o600))
	res := r.weft("submit", file, "--start", "-q")
	require.Equal(t, 0, res.code, res.stderr)
	parent := strings.TrimSpace(res.stdout)
	var child string
	require.Eventually(t, func() bool {
		out := r.weft("get", parent).stdout
		m := regexp.MustCompile(`approve\s+RUNNING\s+\S+\s+child run (run-\S+)`).FindStringSubmatch(out)
		if m != nil {
			child = m[1]
		}
		return m != nil
	}, 30*time.Second, 100*time.Millisecond, "weft get shows the step's child run")
	res = r.weft("get", child)
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `parent\s+`+parent+` \(step approve\)`, res.stdout)
	require.Regexp(t, `plan\s+order.approve@1`, res.stdout)
	res = r.weft("signal", child, "go", "--payload", `{"ok":true}`)
	require.Equal(t, 0, res.code, res.stderr)
	res = r.weft("await", parent, "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"status": "RUN_STATUS_COMPLETED"`)
	require.Regexp(t, `"result":\s*\{\s*"ok":\s*true\s*\}`, res.stdout, "the child's result is the step's output and the run's result")
	res = r.weft("events", parent)
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "ChildRunEnded")
	require.Contains(t, res.stdout, "child run "+child+" COMPLETED")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("planId: p\nsteps:\n  - name: refund\n    workflow: {plan: refund, version: \"7\"}\n"), 0o600))
	res = r.weft("submit", bad)
	require.Equal(t, 1, res.code)
	require.Contains(t, res.stderr, "steps[0].workflow.version: the sub-workflow names plan refund version 7, which the definition registry does not hold")
}
