package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// A fan-out over data (docs/semantics.md#for-each): ship runs once per line
// of the run's input, two at a time, each item's input reading item and
// index, and its activity reading them from worker.Info too; the step's
// output is the items' outputs in item order, and each item is a step of
// the run, step[index], with its parent and index.
func ExampleClient_SubmitRun_forEach() {
	url, stop := startServer()
	defer stop()
	ctx := context.Background()
	c := client.New(url)
	w := worker.New(c, worker.Options{PollWait: 100 * time.Millisecond})
	worker.Register(w, "ship", func(ctx context.Context, in map[string]any) (string, error) {
		info := worker.Info(ctx) // info.Item is the line as JSON, info.Index its position
		var line map[string]any
		_ = json.Unmarshal(info.Item, &line)
		return fmt.Sprintf("%v×%v shipped (item %d)", in["qty"], line["sku"], info.Index), nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(workerCtx) }()
	defer func() { stopWorker(); <-done }()

	input, _ := structpb.NewValue(map[string]any{"lines": []any{
		map[string]any{"sku": "tea", "qty": 2}, map[string]any{"sku": "cup", "qty": 1}, map[string]any{"sku": "pot", "qty": 1}}})
	shipIn, _ := structpb.NewValue(map[string]any{"qty": "${{ item.qty }}", "position": "${{ index }}"})
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Input: input, Definition: &weftv1.WorkflowDefinition{
		PlanId: "shipping", PlanVersion: "1", ResultActionId: "ship", Actions: []*weftv1.Action{
			{Id: "ship", Order: 1, Activity: "ship", ForEach: "input.lines", MaxConcurrency: proto.Uint32(2), Input: shipIn},
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
		if f := s.GetFanOut(); f != nil {
			fmt.Println(s.GetActionId(), s.GetStatus(), f.GetSucceeded(), "of", f.GetItems())
			continue
		}
		fmt.Println(s.GetActionId(), s.GetStatus(), s.GetParentStep(), s.GetItemIndex())
	}
	for _, v := range run.GetResult().GetListValue().GetValues() {
		fmt.Println(v.GetStringValue())
	}
	// Output:
	// RUN_STATUS_COMPLETED
	// ship STEP_STATUS_SUCCEEDED 3 of 3
	// ship[0] STEP_STATUS_SUCCEEDED ship 0
	// ship[1] STEP_STATUS_SUCCEEDED ship 1
	// ship[2] STEP_STATUS_SUCCEEDED ship 2
	// 2×tea shipped (item 0)
	// 1×cup shipped (item 1)
	// 1×pot shipped (item 2)
}
