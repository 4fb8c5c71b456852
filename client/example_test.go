package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// Submit a workflow, run its activity on a worker, and wait for the result.
func Example() {
	url, stop := startServer() // an in-process weftd; use http://127.0.0.1:7400 for `make run`
	defer stop()
	ctx := context.Background()
	c := client.New(url)

	// A worker runs the "greet" activity with typed JSON input and output.
	type greeting struct {
		Name string `json:"name"`
	}
	w := worker.New(c, worker.Options{Queue: "default", Concurrency: 2, PollWait: time.Second})
	worker.Register(w, "greet", func(ctx context.Context, in greeting) (string, error) {
		return "hello, " + in.Name, nil
	})
	workerCtx, stopWorker := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(workerCtx) }()
	defer func() { stopWorker(); <-done }()

	input, _ := structpb.NewValue(map[string]any{"name": "Ada"})
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{
		Start:        true,
		RunRequestId: "greet-ada", // makes the submission idempotent, and so retried
		Definition: &weftv1.WorkflowDefinition{PlanId: "hello", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "greet", Order: 1, Activity: "greet", Input: input},
		}},
	})
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
	fmt.Println(run.GetSteps()[0].GetOutput().GetStringValue())
	// Output:
	// RUN_STATUS_COMPLETED
	// hello, Ada
}

// Send a signal: the client makes one signal_id and reuses it on its own
// retries, so a retried signal is delivered once.
func ExampleClient_SignalRun() {
	url, stop := startServer()
	defer stop()
	ctx := context.Background()
	c := client.New(url)
	res, _ := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "approval", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "approved"}},
		}}})
	runID := res.GetRun().GetRunId()

	id := "approval-42" // optional: without it, SignalRun makes a UUID
	for range 2 {
		sig, err := c.SignalRun(ctx, &weftv1.SignalRunRequest{RunId: runID, SignalName: "approved", SignalId: &id,
			Payload: structpb.NewStringValue("ok")})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("accepted:", sig.GetResult().GetAccepted(), "duplicate:", sig.GetDuplicate())
	}
	run, _ := c.AwaitRun(ctx, runID)
	fmt.Println(run.GetStatus(), run.GetSteps()[0].GetOutput().GetStringValue())
	// Output:
	// accepted: true duplicate: false
	// accepted: true duplicate: true
	// RUN_STATUS_COMPLETED ok
}

// Faults are *client.Error values with a stable Code.
func ExampleIsCode() {
	url, stop := startServer()
	defer stop()
	c := client.New(url)
	_, err := c.GetRun(context.Background(), "run-that-does-not-exist")
	fmt.Println(client.IsCode(err, client.CodeNotFound))
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Fault.GetRunId(), e.CorrelationID != "")
	}
	// Output:
	// true
	// NotFound run-that-does-not-exist true
}
