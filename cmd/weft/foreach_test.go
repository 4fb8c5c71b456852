package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit"
)

const forEachYAML = `planId: cli-fan-out
steps:
  - name: ship
    activity: echo
    forEach: input.lines
    maxConcurrency: 2
    input: {sku: '${{ item }}', at: '${{ index }}'}
`

// TestBinary_AForEachShowsEachItemAndItsProgressInWeftGetAndEvents: the
// weft binary against a real weftd runs a fan-out of three items; weft get
// lists each item (step[index], its parent and index) right after its
// forEach step, which shows the fan-out's progress, and the output list in
// item order; weft events names StepFannedOut and each item's events; a
// forEach combined with a sleep is refused at submit naming its YAML path
// (docs/semantics.md#for-each).
func TestBinary_AForEachShowsEachItemAndItsProgressInWeftGetAndEvents(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds weft and weftd")
	}
	url := testkit.StartWeftd(t, nil).URL
	weft := binaryWeft(t, url)
	registryWorker(t, url)

	r := weft("submit", writeFile(t, "fan.yaml", forEachYAML), "--start", "--wait", "--input", `{"lines": ["a", "b", "c"]}`)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	run := ""
	for _, line := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "run" {
			run = f[1]
		}
	}
	require.NotEmpty(t, run, r.stdout)
	r = weft("get", run)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^ship\s+SUCCEEDED\s+1\.0\s+fan-out: 3/3 succeeded, 0 in flight \(at most 2\), 0 pending$`, r.stdout)
	require.Regexp(t, `(?s)ship\s+SUCCEEDED.*\nship\[0\]\s+SUCCEEDED\s+1\.1\s+item 0 of ship\nship\[1\]\s+SUCCEEDED\s+1\.1\s+item 1 of ship\nship\[2\]`, r.stdout,
		"each item right after its step, in index order")

	r = weft("get", run, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"parent_step": "ship"`)
	require.Contains(t, r.stdout, `"item_index": 2`)
	require.Regexp(t, `"output":\s*\[\s*\{\s*"at":\s*0,\s*"sku":\s*"a"\s*\},\s*\{\s*"at":\s*1,\s*"sku":\s*"b"\s*\},\s*\{\s*"at":\s*2,\s*"sku":\s*"c"`, r.stdout)

	r = weft("events", run)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `StepFannedOut.*fanned out over 3 items, at most 2 at once`, r.stdout)
	require.Regexp(t, `ship\[1\].*StepCompleted|StepCompleted.*ship\[1\]`, r.stdout)

	bad := strings.Replace(forEachYAML, "    maxConcurrency: 2\n", "    sleep: 1m\n", 1)
	r = weft("submit", writeFile(t, "bad.yaml", bad), "--start")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "steps[0].forEach")
}
