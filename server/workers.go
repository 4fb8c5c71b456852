package server

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// WorkerService serves weft.v1.WorkerService over an engine.
type WorkerService struct {
	eng *engine.Engine
}

var _ weftv1connect.WorkerServiceHandler = (*WorkerService)(nil)

// NewWorkerService answers the WorkerService handler over eng.
func NewWorkerService(eng *engine.Engine) *WorkerService { return &WorkerService{eng: eng} }

// PollTasks long-polls the queue for tasks of the worker's activities and
// compensations, for up to wait_ms.
func (s *WorkerService) PollTasks(ctx context.Context, req *connect.Request[weftv1.PollTasksRequest]) (*connect.Response[weftv1.PollTasksResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	tasks, err := s.eng.PollTasks(ctx, pollParams(who.tenant, req.Msg))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.PollTasksResponse{Tasks: tasksProto(tasks)}), nil
}

// pollParams answers the engine's form of a request for tasks.
func pollParams(tenant string, m *weftv1.PollTasksRequest) engine.PollParams {
	p := engine.PollParams{TenantID: tenant, WorkerID: m.GetWorkerId(), Queue: m.GetQueue(),
		Compensations: m.GetCompensations(), MaxTasks: int(m.GetMaxTasks()),
		Wait: time.Duration(m.GetWaitMs()) * time.Millisecond}
	if activities := m.GetActivities(); len(activities) > 0 {
		p.Activities = make([]string, 0, len(activities))
	}
	for _, a := range m.GetActivities() {
		p.Activities = append(p.Activities, a.GetName())
		if a.GetVerifiable() {
			p.Verifiable = append(p.Verifiable, a.GetName())
		}
	}
	return p
}

// CompleteTask records a task's result durably before it answers.
func (s *WorkerService) CompleteTask(ctx context.Context, req *connect.Request[weftv1.CompleteTaskRequest]) (*connect.Response[weftv1.CompleteTaskResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	output, err := jsonField(m.GetOutput(), "output")
	if err != nil {
		return nil, err
	}
	report := engine.ReportParams{TenantID: who.tenant, Token: m.GetTaskToken(),
		WorkerID: m.GetWorkerId(), Output: output, Artifacts: artifactsOf(m.GetArtifacts()),
		ReconciliationKey: m.GetReconciliationKey(), CorrelationID: CorrelationID(ctx)}
	if report.SearchAttributes, err = searchAttributesOf(m.GetSearchAttributes(), "search_attributes"); err != nil {
		return nil, err
	}
	if m.GetNextTasks() != nil {
		next := pollParams(who.tenant, m.GetNextTasks())
		report.Next = &next
	}
	res, err := s.eng.CompleteTask(ctx, report)
	if err != nil {
		return nil, err
	}
	out := &weftv1.CompleteTaskResponse{Duplicate: res.Duplicate}
	if len(res.Tasks) > 0 {
		out.Tasks = tasksProto(res.Tasks)
	}
	return connect.NewResponse(out), nil
}

// FailTask records a task's failure; the action's policy decides what follows.
func (s *WorkerService) FailTask(ctx context.Context, req *connect.Request[weftv1.FailTaskRequest]) (*connect.Response[weftv1.FailTaskResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	res, err := s.eng.FailTask(ctx, engine.ReportParams{TenantID: who.tenant, Token: m.GetTaskToken(),
		WorkerID: m.GetWorkerId(), ErrorClass: errorClasses.Engine(m.GetErrorClass()), Code: m.GetCode(),
		Message: m.GetMessage(), SideEffectPossible: m.GetSideEffectPossible(), ReconciliationKey: m.GetReconciliationKey(),
		RetryAfter: time.Duration(m.GetRetryAfterMs()) * time.Millisecond, CorrelationID: CorrelationID(ctx)})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.FailTaskResponse{Duplicate: res.Duplicate, WillRetry: res.WillRetry}), nil
}

// HeartbeatTask keeps a claim alive and says whether the worker should stop.
func (s *WorkerService) HeartbeatTask(ctx context.Context, req *connect.Request[weftv1.HeartbeatTaskRequest]) (*connect.Response[weftv1.HeartbeatTaskResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	details, err := jsonField(req.Msg.GetDetails(), "details")
	if err != nil {
		return nil, err
	}
	res, err := s.eng.HeartbeatTask(ctx, engine.HeartbeatParams{TenantID: who.tenant, Token: req.Msg.GetTaskToken(), Details: details})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.HeartbeatTaskResponse{CancelRequested: res.CancelRequested,
		Deadline: eventpb.Timestamp(res.Deadline)}), nil
}

// ReportVerification answers a verify task with a VerifyState (docs/semantics.md#reconciliation).
func (s *WorkerService) ReportVerification(ctx context.Context, req *connect.Request[weftv1.ReportVerificationRequest]) (*connect.Response[weftv1.ReportVerificationResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	result, err := jsonField(m.GetResult(), "result")
	if err != nil {
		return nil, err
	}
	res, err := s.eng.ReportVerification(ctx, engine.VerifyParams{TenantID: who.tenant, Token: m.GetTaskToken(),
		WorkerID: m.GetWorkerId(), State: verifyStates.Engine(m.GetState()), Result: result, Diagnostic: m.GetDiagnostic()})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.ReportVerificationResponse{Duplicate: res.Duplicate}), nil
}
