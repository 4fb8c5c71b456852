package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// cannedWorkers answers every CompleteTask and PollTasks with the same
// claimed task (none when task is nil), converted as the WorkerService
// converts the engine's, so that a benchmark measures what the server does
// around a worker's call — transport, codec, interceptors and conversion —
// and nothing of the engine.
type cannedWorkers struct {
	weftv1connect.UnimplementedWorkerServiceHandler
	task *engine.Task
}

func (c cannedWorkers) tasks() []*weftv1.Task {
	if c.task == nil {
		return nil
	}
	return tasksProto([]*engine.Task{c.task})
}

func (c cannedWorkers) CompleteTask(_ context.Context, req *connect.Request[weftv1.CompleteTaskRequest]) (*connect.Response[weftv1.CompleteTaskResponse], error) {
	if req.Msg.GetNextTasks() != nil {
		_ = pollParams(DefaultTenant, req.Msg.GetNextTasks())
	}
	return connect.NewResponse(&weftv1.CompleteTaskResponse{Tasks: c.tasks()}), nil
}

func (c cannedWorkers) PollTasks(_ context.Context, req *connect.Request[weftv1.PollTasksRequest]) (*connect.Response[weftv1.PollTasksResponse], error) {
	_ = pollParams(DefaultTenant, req.Msg)
	return connect.NewResponse(&weftv1.PollTasksResponse{Tasks: c.tasks()}), nil
}

// cannedRuns answers every SubmitRun with the same snapshot, after
// converting the request as the RunService does.
type cannedRuns struct {
	weftv1connect.UnimplementedRunServiceHandler
	snap *runstate.Snapshot
}

func (c cannedRuns) SubmitRun(_ context.Context, req *connect.Request[weftv1.SubmitRunRequest]) (*connect.Response[weftv1.SubmitRunResponse], error) {
	if _, err := submitParamsOf(req.Msg, caller{tenant: DefaultTenant, principal: AnonymousCaller}); err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.SubmitRunResponse{Run: runProto(c.snap)}), nil
}

// benchTask is a claimed activity task as weftbench's workers get one.
func benchTask() *engine.Task {
	return &engine.Task{Token: "task-01#abcdef", TaskID: "task-01", RunID: "run-01", TenantID: "default",
		ActionID: "s2", Activity: "bench.noop", Kind: engine.TaskActivity, OperationID: "run-01:s2:1",
		IdempotencyKey: "run-01:s2", LogicalAttempt: 1, EngineAttempt: 1, Input: json.RawMessage(`{}`),
		Deadline: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)}
}

// benchSnapshot is a five-step run ended COMPLETED, as weftbench's
// SubmitRun (with await_ms) answers it.
func benchSnapshot(def *weftv1.WorkflowDefinition) *runstate.Snapshot {
	p, err := submitParamsOf(&weftv1.SubmitRunRequest{Definition: def}, caller{tenant: DefaultTenant})
	if err != nil {
		panic(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	snap := &runstate.Snapshot{RunID: "run-01", TenantID: "default", PlanID: def.GetPlanId(), PlanVersion: def.GetPlanVersion(),
		RunRequestID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", SubmittedBy: AnonymousCaller, TriggerSource: "api",
		Status: runstate.RunCompleted, CreatedAt: at, StartedAt: at, CompletedAt: at.Add(time.Second),
		TotalDuration: time.Second, LastEventSeq: 17, Definition: p.Definition}
	for _, a := range p.Definition.Actions {
		snap.Steps = append(snap.Steps, runstate.StepState{ActionID: a.ID, Status: runstate.StepSucceeded,
			LogicalAttempt: 1, EngineAttempt: 1, ScheduledAt: at, StartedAt: at, CompletedAt: at,
			Output: json.RawMessage(`{}`), Attempts: []runstate.Attempt{{LogicalAttempt: 1, EngineAttempt: 1,
				Outcome: runstate.AttemptSucceeded, StartedAt: at, CompletedAt: at, WorkerID: "bench-worker-0"}}})
	}
	return snap
}

// benchDefinition is weftbench's five-step workflow.
func benchDefinition() *weftv1.WorkflowDefinition {
	def := &weftv1.WorkflowDefinition{PlanId: "bench", PlanVersion: "1"}
	for i := range 5 {
		def.Actions = append(def.Actions, &weftv1.Action{Id: "step-" + strconv.Itoa(i+1), Order: uint32(i + 1), Activity: "bench.noop"})
	}
	return def
}

// benchHandler is the whole handler weftd serves over canned services.
func benchHandler(b testing.TB, cfg Config) http.Handler {
	cfg.Logger = slog.New(slog.NewTextHandler(discard{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// benchCalls calls procedure with msg in the binary Connect protocol the
// SDK speaks, through h, once per iteration.
func benchCalls(b *testing.B, h http.Handler, procedure string, msg proto.Message) {
	body, err := proto.Marshal(msg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, procedure, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/proto")
		req.Header.Set("Connect-Protocol-Version", "1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
}

// BenchmarkWorkerPath_CompleteTaskServerOverhead is one worker completion
// that asks for its next task, through the whole handler weftd serves (the
// request's byte limits, the interceptors, the codec, the conversions),
// answered by a handler that does no other work. Its time and allocations
// are the server's cost per worker call.
func BenchmarkWorkerPath_CompleteTaskServerOverhead(b *testing.B) {
	h := benchHandler(b, Config{Workers: cannedWorkers{task: benchTask()}})
	benchCalls(b, h, weftv1connect.WorkerServiceCompleteTaskProcedure, &weftv1.CompleteTaskRequest{
		TaskToken: "task-00#abcdef", WorkerId: "bench-worker-0", Output: structpb.NewStructValue(&structpb.Struct{}),
		NextTasks: &weftv1.PollTasksRequest{WorkerId: "bench-worker-0", Queue: "default", MaxTasks: 1,
			Activities: []*weftv1.ActivityRegistration{{Name: "bench.noop"}}}})
}

// BenchmarkWorkerPath_PollTasksServerOverhead is one poll answered with a
// task, as BenchmarkWorkerPath_CompleteTaskServerOverhead.
func BenchmarkWorkerPath_PollTasksServerOverhead(b *testing.B) {
	h := benchHandler(b, Config{Workers: cannedWorkers{task: benchTask()}})
	benchCalls(b, h, weftv1connect.WorkerServicePollTasksProcedure, &weftv1.PollTasksRequest{
		WorkerId: "bench-worker-0", Queue: "default", MaxTasks: 1, WaitMs: 5000,
		Activities: []*weftv1.ActivityRegistration{{Name: "bench.noop"}}})
}

// BenchmarkSubmit_SubmitRunServerOverhead is one submission of weftbench's
// five-step workflow answered with the run ended, as
// BenchmarkWorkerPath_CompleteTaskServerOverhead.
func BenchmarkSubmit_SubmitRunServerOverhead(b *testing.B) {
	def := benchDefinition()
	h := benchHandler(b, Config{Runs: cannedRuns{snap: benchSnapshot(def)}})
	benchCalls(b, h, weftv1connect.RunServiceSubmitRunProcedure, &weftv1.SubmitRunRequest{Definition: def,
		RunRequestId: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", Start: true, AwaitMs: 30000})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
