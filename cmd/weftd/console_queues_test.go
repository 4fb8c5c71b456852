package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestConsole_QueuesPageShowsEachFlowKeysSlotsWaitingAndTokensInChromium
// clicks to the console's Queues page in headless Chromium against a real
// weftd: a customer's step limited to one in flight has one task claimed
// and one waiting, and a throttle of 1/1h has let one task go and holds
// the next; the page shows the concurrency key at 1/1 with one waiting and
// the throttle key at 0 tokens with its next release ahead
// (console/test/queues.ts).
func TestConsole_QueuesPageShowsEachFlowKeysSlotsWaitingAndTokensInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	d := startWeftdIn(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client.New(d.URL)
	def := &weftv1.WorkflowDefinition{PlanId: "charges", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "charge", Order: 1, Activity: "charge",
		Concurrency: &weftv1.StepConcurrency{Key: "input.customer", Limit: 1}}}}
	calls := &weftv1.WorkflowDefinition{PlanId: "calls", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "call", Order: 1, Activity: "call",
		Throttle: &weftv1.StepThrottle{Key: "'psp'", Rate: "1/1h"}}}}
	input, err := structpb.NewValue(map[string]any{"customer": "customer-42"})
	require.NoError(t, err)
	for _, d := range []*weftv1.WorkflowDefinition{def, def, calls, calls} {
		_, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Definition: d, Start: true, Input: input})
		require.NoError(t, err)
	}
	res, err := c.PollTasks(ctx, &weftv1.PollTasksRequest{WorkerId: "w", MaxTasks: 10,
		Activities: []*weftv1.ActivityRegistration{{Name: "charge"}, {Name: "call"}}})
	require.NoError(t, err)
	require.Len(t, res.GetTasks(), 2, "one of each: the other two are held")

	cfg := map[string]string{"url": d.URL, "concurrencyKey": "customer-42", "throttleKey": "psp", "shots": os.Getenv("WEFT_CONSOLE_SHOTS")}
	require.Equal(t, "ok", runConsoleDriver(t, ctx, node, browser, "queues", cfg, d))
}
