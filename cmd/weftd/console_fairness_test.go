package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestConsole_QueuesPageShowsEachFairnessKeysBacklogWeightAndShareInChromium:
// the Queues page lists, per priority, the fairness keys of a queue's ready
// tasks (docs/semantics.md#fairness) with each key's backlog, weight and
// share of its priority's claims, in headless Chromium against a real
// weftd (console/test/fairness.ts). No worker runs the activity, so the
// tasks stay ready: three of key acme (weight 1) and one of globex (weight
// 3) at priority 3 — 25% and 75% of that priority's claims — and one of
// initech at priority 1, alone there. The run page of acme's third run
// says why its step waits, as GetRun's Step.flow_wait does ("waits its
// fair turn: key acme …"), beside the step and in the waiting line.
func TestConsole_QueuesPageShowsEachFairnessKeysBacklogWeightAndShareInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	d := startWeftdIn(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client.New(d.URL)
	def := &weftv1.WorkflowDefinition{PlanId: "invoices", PlanVersion: "1",
		Fairness: &weftv1.Fairness{Key: "input.customer", Weight: "input.weight"},
		Actions:  []*weftv1.Action{{Id: "render", Order: 1, Activity: "console.render"}}}
	var runs []string
	submit := func(customer string, weight float64, priority uint32) {
		input, err := structpb.NewValue(map[string]any{"customer": customer, "weight": weight})
		require.NoError(t, err)
		res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Definition: def, Start: true, Input: input, Priority: proto.Uint32(priority)})
		require.NoError(t, err)
		runs = append(runs, res.GetRun().GetRunId())
	}
	for range 3 {
		submit("acme", 1, 3)
	}
	submit("globex", 3, 3)
	submit("initech", 1, 1)

	var keys []*weftv1.FairnessKeyState
	require.Eventually(t, func() bool {
		res, err := c.DescribeQueue(ctx, &weftv1.DescribeQueueRequest{Queue: "default"})
		require.NoError(t, err)
		keys = res.GetQueue().GetFairnessKeys()
		return len(keys) == 3 && keys[1].GetBacklog() == 3
	}, time.Minute, 50*time.Millisecond, "the five tasks are ready under their keys")
	type row struct {
		Priority uint32 `json:"priority"`
		Key      string `json:"key"`
		Backlog  uint32 `json:"backlog"`
		Weight   string `json:"weight"`
		Share    string `json:"share"`
	}
	want := []row{{1, "initech", 1, "1", "100%"}, {3, "acme", 3, "1", "25%"}, {3, "globex", 1, "3", "75%"}}
	for i, k := range keys {
		require.Equal(t, want[i].Key, k.GetKey())
		require.Equal(t, want[i].Priority, k.GetPriority())
	}
	// acme's third task is behind older tasks of its key: its run page says so.
	run, err := c.GetRun(ctx, runs[2])
	require.NoError(t, err)
	wait := run.GetSteps()[0].GetFlowWait()
	require.Contains(t, wait, "waits its fair turn: key acme")
	cfg := map[string]any{"url": d.URL, "shots": consoleShots(t), "queue": "default", "keys": want, "waitingRun": runs[2], "wait": wait}
	require.Equal(t, "ok", runConsoleDriver(t, ctx, node, browser, "fairness", cfg, d))
}
