package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runConcYAML limits a plan's runs to one started per customer.
const runConcYAML = `planId: charges
concurrency: {key: input.customer, limit: 1}
steps:
  - name: charge
    activity: runconc.charge
`

// TestRunConcurrency_ConcurrencyListsTheKeysAndGetSaysWhyARunWaits: with a
// customer's first run started and its second QUEUED, `weft concurrency`
// shows the key at 1/1 with one waiting, `weft get` of the queued run says
// it waits on the key, and the file's limit 0 and unknown strategy are
// refused naming their YAML paths.
func TestRunConcurrency_ConcurrencyListsTheKeysAndGetSaysWhyARunWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.submitFile("r.yaml", runConcYAML, "--start", "--input", `{"customer": "c-9"}`)
	second := b.submitFile("r.yaml", runConcYAML, "--start", "--input", `{"customer": "c-9"}`)

	out := b.ok("concurrency")
	require.Regexp(t, `(?m)^PLAN\s+KEY\s+STARTED\s+WAITING$`, out)
	require.Regexp(t, `(?m)^charges\s+c-9\s+1/1\s+1$`, out)
	require.Contains(t, b.ok("concurrency", "--plan", "other"), "no run concurrency key")
	got := b.ok("get", second)
	require.Contains(t, got, "a slot: concurrency key c-9 at 1/1 (queued)")
	require.Contains(t, got, "key c-9: 1/1 started (queue)")

	for bad, path := range map[string]string{
		strings.Replace(runConcYAML, "limit: 1", "limit: 0", 1):                           "concurrency.limit",
		strings.Replace(runConcYAML, "limit: 1}", "limit: 1, strategy: cancelOldest}", 1): "concurrency.strategy",
		strings.Replace(runConcYAML, "input.customer", "steps.charge.output.id", 1):       "concurrency.key",
	} {
		r := b.weft("submit", writeFile(t, "bad.yaml", bad))
		require.Equal(t, 1, r.code, "%s", r.stderr)
		require.Contains(t, r.stderr+r.stdout+errText(r.err), path)
	}
}
