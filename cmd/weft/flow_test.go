package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// flowYAML is a step limited to one task in flight per customer.
const flowYAML = `planId: charges
steps:
  - name: charge
    activity: flow.charge
    concurrency: {key: input.customer, limit: 1}
`

// TestFlow_QueueShowsAKeysSlotsAndGetSaysWhyAStepWaits: with one of a
// customer's two tasks claimed, `weft queue default` shows the key at 1/1
// with one waiting, and `weft get` of the other run says it waits on the
// concurrency key; a limit of 0 in the file is refused naming its YAML path.
func TestFlow_QueueShowsAKeysSlotsAndGetSaysWhyAStepWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	first := b.submitFile("f.yaml", flowYAML, "--start", "--input", `{"customer": "c-7"}`)
	second := b.submitFile("f.yaml", flowYAML, "--start", "--input", `{"customer": "c-7"}`)
	res, err := b.c.PollTasks(context.Background(), &weftv1.PollTasksRequest{WorkerId: "cli-test",
		Activities: []*weftv1.ActivityRegistration{{Name: "flow.charge"}}, MaxTasks: 5})
	require.NoError(t, err)
	require.Len(t, res.GetTasks(), 1, "one task of c-7 at a time")
	waiting := second
	if res.GetTasks()[0].GetRunId() == second {
		waiting = first
	}

	out := b.ok("queue", "default")
	require.Regexp(t, `(?m)^FLOW KEY\s+KIND\s+SCOPE\s+WAITING\s+IN USE\s+TOKENS\s+NEXT RELEASE$`, out)
	require.Regexp(t, `(?m)^c-7\s+concurrency\s+plan:charges\s+1\s+1/1\s+-\s+-$`, out)
	got := b.ok("get", waiting)
	require.Contains(t, got, "waiting: concurrency key c-7 at 1/1")

	bad := strings.Replace(flowYAML, "limit: 1", "limit: 0", 1)
	r := b.weft("submit", writeFile(t, "bad.yaml", bad))
	require.Equal(t, 1, r.code, "%s", r.stderr)
	require.Contains(t, r.stderr+r.stdout+errText(r.err), "steps[0].concurrency.limit")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSubmit_PriorityFlagSetsTheRunsPriority: --priority 1 gives the run
// priority 1 over its definition's; out of 1–5 it is a usage error.
func TestSubmit_PriorityFlagSetsTheRunsPriority(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.submitFile("f.yaml", "planId: p\npriority: 4\nsteps:\n  - name: a\n", "--priority", "1")
	run := b.eventually(id, func(*weftv1.Run) bool { return true })
	require.EqualValues(t, 1, run.GetPriority())
	other := b.submitFile("f.yaml", "planId: p\npriority: 4\nsteps:\n  - name: a\n")
	require.EqualValues(t, 4, b.eventually(other, func(*weftv1.Run) bool { return true }).GetPriority(), "the definition's")
	r := b.weft("submit", "--priority", "7", writeFile(t, "g.yaml", "planId: p\nsteps:\n  - name: a\n"))
	require.Equal(t, 2, r.code)
}
