package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestConsole_LinksAParentRunAndItsChildBothWaysInChromium: the run page
// of a run whose sub-workflow step started a child links to the child, and
// the child's page links back to its parent and names the step
// (docs/semantics.md#sub-workflows), in headless Chromium against a real
// weftd.
func TestConsole_LinksAParentRunAndItsChildBothWaysInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	d := startWeftdIn(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := client.New(d.URL)
	child := waitDefinition("restock.notify", "1")
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "restock", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "notify", Order: 1, Workflow: &weftv1.SubWorkflow{Definition: child}},
		}}})
	require.NoError(t, err)
	parent := res.GetRun().GetRunId()
	var childID string
	require.Eventually(t, func() bool {
		run, err := c.GetRun(ctx, parent)
		require.NoError(t, err)
		childID = run.GetSteps()[0].GetChildRunId()
		return childID != ""
	}, time.Minute, 50*time.Millisecond, "the child run is started by weftd's timer loop")
	cfg := map[string]string{"url": d.URL, "parent": parent, "child": childID, "step": "notify", "shots": consoleShots(t)}
	require.JSONEq(t, `{"ok":true}`, runConsoleDriver(t, ctx, node, browser, "subworkflow", cfg, d))
}
