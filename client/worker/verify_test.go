package worker_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit"
)

// fakeWorkers hands out scripted tasks once and records every request.
type fakeWorkers struct {
	weftv1connect.UnimplementedWorkerServiceHandler
	mu           sync.Mutex
	tasks        []*weftv1.Task
	polls        []*weftv1.PollTasksRequest
	completes    []*weftv1.CompleteTaskRequest
	verification []*weftv1.ReportVerificationRequest
}

func (f *fakeWorkers) PollTasks(ctx context.Context, req *connect.Request[weftv1.PollTasksRequest]) (*connect.Response[weftv1.PollTasksResponse], error) {
	f.mu.Lock()
	f.polls = append(f.polls, req.Msg)
	n := min(int(req.Msg.GetMaxTasks()), len(f.tasks))
	out := f.tasks[:n]
	f.tasks = f.tasks[n:]
	f.mu.Unlock()
	if n == 0 {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return connect.NewResponse(&weftv1.PollTasksResponse{Tasks: out}), nil
}

func (f *fakeWorkers) CompleteTask(_ context.Context, req *connect.Request[weftv1.CompleteTaskRequest]) (*connect.Response[weftv1.CompleteTaskResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completes = append(f.completes, req.Msg)
	return connect.NewResponse(&weftv1.CompleteTaskResponse{}), nil
}

func (f *fakeWorkers) ReportVerification(_ context.Context, req *connect.Request[weftv1.ReportVerificationRequest]) (*connect.Response[weftv1.ReportVerificationResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verification = append(f.verification, req.Msg)
	return connect.NewResponse(&weftv1.ReportVerificationResponse{}), nil
}

func TestVerifiableActivity_IsAnnouncedAndReportsItsReconciliationKey(t *testing.T) {
	t.Parallel()
	fake := &fakeWorkers{tasks: []*weftv1.Task{
		{TaskToken: "t1", TaskType: weftv1.TaskType_TASK_TYPE_ACTIVITY, Activity: "charge",
			Input: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"sku": structpb.NewStringValue("W1")}})},
		{TaskToken: "t2", TaskType: weftv1.TaskType_TASK_TYPE_VERIFY, Activity: "charge", ReconciliationKey: "key-W1"},
	}}
	mux := http.NewServeMux()
	mux.Handle(weftv1connect.NewWorkerServiceHandler(fake))
	w := worker.New(client.New(testkit.Serve(t, mux)), worker.Options{WorkerID: "w", Queue: "payments", Concurrency: 3, PollWait: 50 * time.Millisecond})
	worker.Register(w, "charge", func(ctx context.Context, in order) (string, error) { return "charged", nil },
		worker.WithIdempotencyKey(func(in order) string { return "key-" + in.SKU }),
		worker.WithVerify(func(ctx context.Context, key string) (worker.VerifyResult, error) {
			return worker.VerifyResult{State: worker.VerifyCompletedWithResult, Result: "charged " + key}, nil
		}))
	worker.Register(w, "plain", func(ctx context.Context, in struct{}) (string, error) { return "", nil })
	worker.RegisterCompensation(w, "refund", func(ctx context.Context, in struct{}) error { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Eventually(t, func() bool {
		fake.mu.Lock()
		defer fake.mu.Unlock()
		return len(fake.completes) == 1 && len(fake.verification) == 1
	}, 5*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	fake.mu.Lock()
	defer fake.mu.Unlock()
	poll := fake.polls[0]
	require.Equal(t, "payments", poll.GetQueue())
	require.Equal(t, uint32(3), poll.GetMaxTasks())
	require.Equal(t, []string{"refund"}, poll.GetCompensations())
	require.Len(t, poll.GetActivities(), 2)
	require.Equal(t, "charge", poll.GetActivities()[0].GetName())
	require.True(t, poll.GetActivities()[0].GetVerifiable())
	require.False(t, poll.GetActivities()[1].GetVerifiable())
	require.Equal(t, "key-W1", fake.completes[0].GetReconciliationKey())
	require.Equal(t, "charged", fake.completes[0].GetOutput().GetStringValue())
	require.Equal(t, worker.VerifyCompletedWithResult, fake.verification[0].GetState())
	require.Equal(t, "charged key-W1", fake.verification[0].GetResult().GetStringValue())
	for _, p := range fake.polls {
		require.LessOrEqual(t, p.GetMaxTasks(), uint32(3), "polls ask only for free slots")
	}
}
