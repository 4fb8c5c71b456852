package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestConsole_AQueuedRunShowsItsConcurrencyKeyAndWhyItWaitsInChromium: the
// run page of a run with a concurrency key (docs/semantics.md#run-concurrency)
// shows the key, the runs of the key started of its limit, the strategy
// and, while the run is QUEUED, why it waits, as GetRun says it — in
// headless Chromium against a real weftd (console/test/concurrency.ts). Two
// runs of key customer-42 with limit 1: the second waits QUEUED; its page
// says "concurrency key customer-42 at 1/1"; the holder's page, in a second
// tab, shows 1/1 and no wait, and a signal sent there ends it; the queued
// run's page, left open, then shows it started, holding the slot, with no
// wait. The Queues page lists the plan's key at 1/1 with one run queued,
// then none (DescribeRunConcurrency).
func TestConsole_AQueuedRunShowsItsConcurrencyKeyAndWhyItWaitsInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	d := startWeftdIn(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client.New(d.URL)
	def := &weftv1.WorkflowDefinition{PlanId: "charges", PlanVersion: "1",
		Concurrency: &weftv1.RunConcurrency{Key: "input.customer", Limit: 1},
		Actions:     []*weftv1.Action{{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}
	input, err := structpb.NewValue(map[string]any{"customer": "customer-42"})
	require.NoError(t, err)
	var runs []string
	for range 2 {
		res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Definition: def, Start: true, Input: input})
		require.NoError(t, err)
		runs = append(runs, res.GetRun().GetRunId())
	}
	var queued *weftv1.Run
	require.Eventually(t, func() bool {
		holder, err := c.GetRun(ctx, runs[0])
		require.NoError(t, err)
		queued, err = c.GetRun(ctx, runs[1])
		require.NoError(t, err)
		return holder.GetStatus() == weftv1.RunStatus_RUN_STATUS_BLOCKED && queued.GetStatus() == weftv1.RunStatus_RUN_STATUS_QUEUED
	}, time.Minute, 50*time.Millisecond, "the first run holds the key's slot, waiting for its signal; the second waits QUEUED")
	require.NotEmpty(t, queued.GetConcurrency().GetWait())

	cfg := map[string]string{"url": d.URL, "shots": consoleShots(t), "holderRun": runs[0], "queuedRun": runs[1],
		"key": "customer-42", "wait": queued.GetConcurrency().GetWait(), "plan": "charges"}
	require.Equal(t, "ok", runConsoleDriver(t, ctx, node, browser, "concurrency", cfg, d))

	run, err := c.GetRun(ctx, runs[1])
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, run.GetStatus(), "the queued run started once the signal sent from the console ended the holder")
}
