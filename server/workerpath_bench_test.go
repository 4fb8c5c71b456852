package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// cannedWorkers answers every CompleteTask with the same next task, so that
// a benchmark measures what the server does around a worker's call —
// transport, codec and interceptors — and nothing of the engine.
type cannedWorkers struct {
	weftv1connect.UnimplementedWorkerServiceHandler
	task *weftv1.Task
}

func (c cannedWorkers) CompleteTask(context.Context, *connect.Request[weftv1.CompleteTaskRequest]) (*connect.Response[weftv1.CompleteTaskResponse], error) {
	return connect.NewResponse(&weftv1.CompleteTaskResponse{Tasks: []*weftv1.Task{c.task}}), nil
}

// BenchmarkWorkerPath_CompleteTaskServerOverhead is one worker completion
// that asks for its next task, in the binary Connect protocol the SDK
// speaks, through the whole handler weftd serves (the request's byte
// limits, the interceptors, the codec), answered by a handler that does no
// work. Its time and allocations are the server's cost per worker call.
func BenchmarkWorkerPath_CompleteTaskServerOverhead(b *testing.B) {
	logger := slog.New(slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	task := &weftv1.Task{TaskToken: "task-01#abcdef", TaskId: "task-01", RunId: "run-01", TenantId: "default",
		ActionId: "s2", Activity: "bench.noop", TaskType: weftv1.TaskType_TASK_TYPE_ACTIVITY,
		OperationId: "run-01:s2:1", IdempotencyKey: "run-01:s2", LogicalAttemptId: 1, EngineAttemptId: 1}
	h, err := New(Config{Logger: logger, Workers: cannedWorkers{task: task}})
	if err != nil {
		b.Fatal(err)
	}
	body, err := proto.Marshal(&weftv1.CompleteTaskRequest{TaskToken: "task-00#abcdef", WorkerId: "bench-worker-0",
		Output: structpb.NewStructValue(&structpb.Struct{}),
		NextTasks: &weftv1.PollTasksRequest{WorkerId: "bench-worker-0", Queue: "default", MaxTasks: 1,
			Activities: []*weftv1.ActivityRegistration{{Name: "bench.noop"}}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, weftv1connect.WorkerServiceCompleteTaskProcedure, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/proto")
		req.Header.Set("Connect-Protocol-Version", "1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
