package server

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
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
		return nil, engineFault(err)
	}
	m := req.Msg
	p := engine.PollParams{TenantID: who.tenant, WorkerID: m.GetWorkerId(), Queue: m.GetQueue(),
		Compensations: m.GetCompensations(), MaxTasks: int(m.GetMaxTasks()),
		Wait: time.Duration(m.GetWaitMs()) * time.Millisecond}
	for _, a := range m.GetActivities() {
		p.Activities = append(p.Activities, a.GetName())
		if a.GetVerifiable() {
			p.Verifiable = append(p.Verifiable, a.GetName())
		}
	}
	tasks, err := s.eng.PollTasks(ctx, p)
	if err != nil {
		return nil, engineFault(err)
	}
	out := &weftv1.PollTasksResponse{}
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, taskProto(t))
	}
	return connect.NewResponse(out), nil
}

// CompleteTask records a task's result durably before it answers.
func (s *WorkerService) CompleteTask(ctx context.Context, req *connect.Request[weftv1.CompleteTaskRequest]) (*connect.Response[weftv1.CompleteTaskResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	m := req.Msg
	output, err := jsonField(m.GetOutput(), "output")
	if err != nil {
		return nil, engineFault(err)
	}
	res, err := s.eng.CompleteTask(ctx, engine.TaskReport{TenantID: who.tenant, Token: m.GetTaskToken(),
		WorkerID: m.GetWorkerId(), Output: output, Artifacts: artifactsOf(m.GetArtifacts()),
		ReconciliationKey: m.GetReconciliationKey()})
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.CompleteTaskResponse{Duplicate: res.Duplicate}), nil
}

// FailTask records a task's failure; the action's policy decides what follows.
func (s *WorkerService) FailTask(ctx context.Context, req *connect.Request[weftv1.FailTaskRequest]) (*connect.Response[weftv1.FailTaskResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	m := req.Msg
	res, err := s.eng.FailTask(ctx, engine.TaskReport{TenantID: who.tenant, Token: m.GetTaskToken(),
		WorkerID: m.GetWorkerId(), ErrorClass: errorClasses.engine(m.GetErrorClass()), Code: m.GetCode(),
		Message: m.GetMessage(), SideEffectPossible: m.GetSideEffectPossible(), ReconciliationKey: m.GetReconciliationKey()})
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.FailTaskResponse{Duplicate: res.Duplicate, WillRetry: res.WillRetry}), nil
}

// HeartbeatTask keeps a claim alive and says whether the worker should stop.
func (s *WorkerService) HeartbeatTask(ctx context.Context, req *connect.Request[weftv1.HeartbeatTaskRequest]) (*connect.Response[weftv1.HeartbeatTaskResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	res, err := s.eng.HeartbeatTask(ctx, who.tenant, req.Msg.GetTaskToken())
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.HeartbeatTaskResponse{CancelRequested: res.CancelRequested,
		Deadline: timestamp(res.Deadline)}), nil
}

// ReportVerification answers a verify task with spec 003's VerifyState.
func (s *WorkerService) ReportVerification(ctx context.Context, req *connect.Request[weftv1.ReportVerificationRequest]) (*connect.Response[weftv1.ReportVerificationResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	m := req.Msg
	result, err := jsonField(m.GetResult(), "result")
	if err != nil {
		return nil, engineFault(err)
	}
	res, err := s.eng.ReportVerification(ctx, engine.VerifyReport{TenantID: who.tenant, Token: m.GetTaskToken(),
		WorkerID: m.GetWorkerId(), State: verifyStates.engine(m.GetState()), Result: result, Diagnostic: m.GetDiagnostic()})
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.ReportVerificationResponse{Duplicate: res.Duplicate}), nil
}
