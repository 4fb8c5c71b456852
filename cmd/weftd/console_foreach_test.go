package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestConsole_AForEachIsOneGroupPagedAndFilteredByStatusInChromium: the
// run page shows a forEach step as one group (docs/semantics.md#for-each),
// in headless Chromium against a real weftd whose worker runs the items
// (console/test/foreach.ts). A fan-out of 30 sub-workflow items, maxConcurrency
// 5, whose item 12's child fails VALIDATION: one graph node with its
// progress, the group collapsed with the figures GetRun answers, expanded
// to its 30 items in index order with a count per state, filtered to the
// failed item, which opens like any step (its attempts, its child, no
// control naming it) and whose child run is followed there and back; the
// run's other forEach, skipped by its when, says "skipped: condition". A
// fan-out of 1,000 items no worker runs, its items' tasks under one
// fairness key: collapsed (no item drawn), one node, no timeline lane per
// item, pages of 50 in index order, the 990 pending ones filtered and paged
// to the last, the 10 in flight, each but the oldest saying it waits behind
// older tasks of its key, and the waiting line counting the 9.
func TestConsole_AForEachIsOneGroupPagedAndFilteredByStatusInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	d := startWeftdIn(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := client.New(d.URL)

	w := worker.New(c, worker.Options{Queue: "default", Concurrency: 5, PollWait: time.Second})
	worker.Register(w, "console.pack", func(ctx context.Context, _ struct{}) (map[string]any, error) {
		var in struct {
			At  int    `json:"at"`
			Sku string `json:"sku"`
		}
		if err := json.Unmarshal(worker.Info(ctx).RunInput, &in); err != nil {
			return nil, err
		}
		if in.At == 12 {
			return nil, worker.Fail(worker.ClassValidation, "sku_unknown", errors.New("the catalogue has no such sku"))
		}
		return map[string]any{"packed": in.Sku}, nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(workerCtx) }()
	t.Cleanup(func() { stopWorker(); <-workerDone })

	lines := make([]any, 30)
	for i := range lines {
		lines[i] = fmt.Sprintf("sku-%02d", i)
	}
	child := &weftv1.WorkflowDefinition{PlanId: "pack.one", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "pack-one", Order: 1, Activity: "console.pack"}}}
	childInput, err := structpb.NewValue(map[string]any{"sku": "${{ item }}", "at": "${{ index }}"})
	require.NoError(t, err)
	fanInput, err := structpb.NewValue(map[string]any{"lines": lines, "gift": false})
	require.NoError(t, err)
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Input: fanInput, Definition: &weftv1.WorkflowDefinition{
		PlanId: "packing", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "gift-wrap", Order: 1, Activity: "console.pack", ForEach: "input.lines", When: "input.gift"},
			{Id: "pack", Order: 2, ForEach: "input.lines", MaxConcurrency: proto.Uint32(5), Workflow: &weftv1.SubWorkflow{Definition: child, Input: childInput}},
		}}})
	require.NoError(t, err)
	fanRun := res.GetRun().GetRunId()

	big := make([]any, 1000)
	for i := range big {
		big[i] = i
	}
	bigInput, err := structpb.NewValue(map[string]any{"lines": big})
	require.NoError(t, err)
	res, err = c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Input: bigInput, Definition: &weftv1.WorkflowDefinition{
		PlanId: "shipping", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "ship", Order: 1, ForEach: "input.lines", Activity: "console.ship",
			Fairness: &weftv1.Fairness{Key: "'bulk'"}}}}})
	require.NoError(t, err)
	bigRun := res.GetRun().GetRunId()

	var fan *weftv1.Run
	require.Eventually(t, func() bool {
		fan, err = c.GetRun(ctx, fanRun)
		require.NoError(t, err)
		return fan.GetStatus() == weftv1.RunStatus_RUN_STATUS_FAILED
	}, 3*time.Minute, 100*time.Millisecond, "item 12's child fails the fan-out, and the run")
	var progress *weftv1.FanOutProgress
	var failed *weftv1.Step
	for _, s := range fan.GetSteps() {
		if s.GetActionId() == "pack" {
			progress = s.GetFanOut()
		}
		if s.GetParentStep() == "pack" && s.GetStatus() == weftv1.StepStatus_STEP_STATUS_FAILED {
			require.Nil(t, failed, "one item fails")
			failed = s
		}
	}
	require.NotNil(t, progress)
	require.NotNil(t, failed)
	require.Equal(t, "pack[12]", failed.GetActionId())
	require.NotEmpty(t, failed.GetChildRunId())

	var bigProgress *weftv1.FanOutProgress
	require.Eventually(t, func() bool {
		run, err := c.GetRun(ctx, bigRun)
		require.NoError(t, err)
		bigProgress = run.GetSteps()[0].GetFanOut()
		return bigProgress.GetInFlight() == 10
	}, time.Minute, 100*time.Millisecond, "the first 10 items are dispatched; no worker runs console.ship")

	// The items' tasks share fairness key bulk: all but the oldest wait
	// behind older tasks of their key, and GetRun says so per item.
	run, err := c.GetRun(ctx, bigRun)
	require.NoError(t, err)
	held := 0
	for _, s := range run.GetSteps() {
		if s.GetFlowWait() != "" {
			held++
		}
	}
	require.Equal(t, 9, held, "ship[1] to ship[9] wait behind ship[0]")
	require.Contains(t, run.GetSteps()[2].GetFlowWait(), "behind older tasks of its key")
	bigWait := run.GetSteps()[2].GetFlowWait()

	counts := func(f *weftv1.FanOutProgress) map[string]uint32 {
		return map[string]uint32{"succeeded": f.GetSucceeded(), "inFlight": f.GetInFlight(), "failed": f.GetFailed(), "pending": f.GetPending(), "cancelled": f.GetCancelled()}
	}
	cfg := map[string]any{
		"url": d.URL, "shots": consoleShots(t),
		"fanRun": fanRun, "fanStep": "pack", "fanItems": progress.GetItems(), "fanProgress": progressLine(progress), "fanCounts": counts(progress),
		"skippedStep": "gift-wrap", "failedItem": failed.GetActionId(), "failedChild": failed.GetChildRunId(),
		"bigRun": bigRun, "bigStep": "ship", "bigItems": bigProgress.GetItems(), "bigProgress": progressLine(bigProgress),
		"bigPending": bigProgress.GetPending(), "bigInFlight": bigProgress.GetInFlight(), "bigHeld": held, "bigWait": bigWait,
	}
	require.Equal(t, "ok", runConsoleDriver(t, ctx, node, browser, "foreach", cfg, d))
}

// progressLine is how the console's group states a fan-out's progress
// (console/src/fanout.ts progressText), from GetRun's figures.
func progressLine(f *weftv1.FanOutProgress) string {
	s := fmt.Sprintf("%d of %d succeeded · %d in flight · %d failed · %d pending", f.GetSucceeded(), f.GetItems(), f.GetInFlight(), f.GetFailed(), f.GetPending())
	if f.GetCancelled() > 0 {
		s += fmt.Sprintf(" · %d cancelled", f.GetCancelled())
	}
	return s + fmt.Sprintf(" · at most %d at once", f.GetMaxConcurrency())
}
