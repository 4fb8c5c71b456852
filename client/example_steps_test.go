package client_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// A step's input from data, a condition, a bounded loop and a durable sleep
// (docs/semantics.md#input-expressions, #when, #repeat, #sleep): charge reads
// the run's input through ${{ }}, gift-wrap runs only when input.gift holds,
// poll runs again until its own output says done (at most five times), and
// settle sleeps 50 ms.
func ExampleClient_SubmitRun_expressions() {
	url, stop := startServer()
	defer stop()
	ctx := context.Background()
	c := client.New(url)
	w := worker.New(c, worker.Options{PollWait: 100 * time.Millisecond})
	worker.Register(w, "charge", func(_ context.Context, in map[string]any) (any, error) { return in, nil })
	worker.Register(w, "wrap", func(context.Context, any) (string, error) { return "wrapped", nil })
	worker.Register(w, "poll", func(ctx context.Context, _ any) (map[string]any, error) {
		prev, _, _ := worker.Upstream[map[string]float64](ctx, "poll") // the previous iteration's output
		n := prev["n"] + 1
		return map[string]any{"n": n, "done": n >= 3}, nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(workerCtx) }()
	defer func() { stopWorker(); <-done }()

	input, _ := structpb.NewValue(map[string]any{"amount": 12.5, "gift": false})
	chargeIn, _ := structpb.NewValue(map[string]any{"cents": "${{ int(input.amount * 100.0) }}"})
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Input: input, Definition: &weftv1.WorkflowDefinition{
		PlanId: "order", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "charge", Order: 1, Activity: "charge", Input: chargeIn},
			{Id: "gift-wrap", Order: 2, Activity: "wrap", When: "input.gift"},
			{Id: "poll", Order: 3, Activity: "poll", Repeat: &weftv1.StepRepeat{Until: "steps.poll.output.done", MaxIterations: 5}},
			{Id: "settle", Order: 4, SleepMs: proto.Uint32(50)},
		}}})
	if err != nil {
		fmt.Println("submit:", err)
		return
	}
	run, err := c.AwaitRun(ctx, res.GetRun().GetRunId())
	if err != nil {
		fmt.Println("await:", err)
		return
	}
	fmt.Println(run.GetStatus())
	for _, s := range run.GetSteps() {
		fmt.Println(s.GetActionId(), s.GetStatus(), s.GetReason(), s.GetIteration(), s.GetWakeAt() != nil)
	}
	fmt.Println(run.GetSteps()[0].GetInput().GetStructValue().GetFields()["cents"].GetNumberValue())
	// Output:
	// RUN_STATUS_COMPLETED
	// charge STEP_STATUS_SUCCEEDED  0 false
	// gift-wrap STEP_STATUS_SKIPPED condition 0 false
	// poll STEP_STATUS_SUCCEEDED  3 false
	// settle STEP_STATUS_SUCCEEDED  0 true
	// 1250
}
