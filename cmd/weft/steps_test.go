package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit"
)

const stepsYAML = `planId: cli-steps
steps:
  - name: charge
    activity: echo
    input: {cents: '${{ input.amount * 100 }}', note: '$${{ literal }}'}
  - name: gift-wrap
    activity: echo
    dependsOn: charge
    when: input.gift
  - name: cool-off
    dependsOn: charge
    sleep: 1h
`

// TestBinary_ConditionSkipsSleepsAndInputExpressionsShowInWeftGet: the weft
// binary against a real weftd runs a workflow whose input is an expression,
// whose gift-wrap step its when skips and whose cool-off step sleeps; weft get
// says the step was skipped by its condition and when the sleep wakes, its -o
// json shows the evaluated input, weft events shows the StepSleeping, and a
// mistake in an expression is refused at submit naming its YAML path.
func TestBinary_ConditionSkipsSleepsAndInputExpressionsShowInWeftGet(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds weft and weftd")
	}
	url := testkit.StartWeftd(t, nil).URL
	weft := binaryWeft(t, url)
	registryWorker(t, url)

	r := weft("submit", writeFile(t, "steps.yaml", stepsYAML), "--start", "-q", "--input", `{"amount": 2, "gift": false}`)
	require.Equal(t, 0, r.code, r.stderr)
	run := strings.TrimSpace(r.stdout)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.stdout, "sleeping until") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		r = weft("get", run)
		require.Equal(t, 0, r.code, r.stderr)
	}
	require.Regexp(t, `gift-wrap\s+SKIPPED\s+1\.0\s+skipped by condition \(when was false\)`, r.stdout)
	require.Regexp(t, `cool-off\s+RUNNING\s+1\.0\s+sleeping until 20\d\d-\d\d-\d\dT`, r.stdout)
	require.Regexp(t, `(?m)^status\s+RUNNING$`, r.stdout, "a sleeping run is not blocked: it moves on by itself")
	require.Regexp(t, `(?m)^waiting on\s+sleep of step cool-off: wakes by itself at 20\d\d-`, r.stdout)
	r = weft("list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, run+`.*sleep of step cool-off`, r.stdout)

	r = weft("get", run, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"cents": 200`)
	require.Contains(t, r.stdout, `"note": "${{ literal }}"`)
	require.Contains(t, r.stdout, `"wake_at"`)

	r = weft("events", run)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `StepSleeping.*sleeping until`, r.stdout)
	require.Regexp(t, `StepSkipped.*condition`, r.stdout)

	bad := strings.Replace(stepsYAML, "when: input.gift", "when: inptu.gift", 1)
	r = weft("submit", writeFile(t, "bad.yaml", bad), "--start")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "steps[1].when")
	require.Contains(t, r.stderr, "inptu")
}
