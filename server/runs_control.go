package server

import (
	"context"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// controlFunc is one of the engine's steering calls.
type controlFunc func(context.Context, engine.ControlParams) (*engine.ControlResult, error)

// controlRequest is what every steering request has in common.
type controlRequest interface {
	GetRunId() string
	GetReason() string
}

// control runs one steering call for the caller. actionID is empty for
// run-level calls; signalID is the request's optional signal_id.
func control(ctx context.Context, m controlRequest, actionID string, signalID *string, call controlFunc) (*engine.ControlResult, error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	return call(ctx, engine.ControlParams{TenantID: who.tenant, RunID: m.GetRunId(), ActionID: actionID,
		SignalID: signalID, Reason: m.GetReason(), Actor: who.principal})
}

// ApproveRun approves a PENDING run that requires approval.
func (s *RunService) ApproveRun(ctx context.Context, req *connect.Request[weftv1.ApproveRunRequest]) (*connect.Response[weftv1.ApproveRunResponse], error) {
	res, err := control(ctx, req.Msg, "", req.Msg.SignalId, s.eng.ApproveRun)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.ApproveRunResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}

// CancelRun ends a non-terminal run CANCELLED, compensating first when the
// request asks (docs/semantics.md#cancel-compensation).
func (s *RunService) CancelRun(ctx context.Context, req *connect.Request[weftv1.CancelRunRequest]) (*connect.Response[weftv1.CancelRunResponse], error) {
	res, err := control(ctx, req.Msg, "", req.Msg.SignalId, func(ctx context.Context, p engine.ControlParams) (*engine.ControlResult, error) {
		p.Compensate = req.Msg.GetCompensate()
		return s.eng.CancelRun(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.CancelRunResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}

// PauseRun stops new scheduling; in-flight tasks drain.
func (s *RunService) PauseRun(ctx context.Context, req *connect.Request[weftv1.PauseRunRequest]) (*connect.Response[weftv1.PauseRunResponse], error) {
	res, err := control(ctx, req.Msg, "", req.Msg.SignalId, s.eng.PauseRun)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.PauseRunResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}

// ResumeRun resumes a PAUSED run.
func (s *RunService) ResumeRun(ctx context.Context, req *connect.Request[weftv1.ResumeRunRequest]) (*connect.Response[weftv1.ResumeRunResponse], error) {
	res, err := control(ctx, req.Msg, "", req.Msg.SignalId, s.eng.ResumeRun)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.ResumeRunResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}

// RetryStep opens a new logical attempt for the failed step a held run waits on.
func (s *RunService) RetryStep(ctx context.Context, req *connect.Request[weftv1.RetryStepRequest]) (*connect.Response[weftv1.RetryStepResponse], error) {
	res, err := control(ctx, req.Msg, req.Msg.GetActionId(), req.Msg.SignalId, s.eng.RetryStep)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.RetryStepResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}

// SkipStep skips a PENDING step, or the failed step a held run waits on.
func (s *RunService) SkipStep(ctx context.Context, req *connect.Request[weftv1.SkipStepRequest]) (*connect.Response[weftv1.SkipStepResponse], error) {
	res, err := control(ctx, req.Msg, req.Msg.GetActionId(), req.Msg.SignalId, s.eng.SkipStep)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.SkipStepResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}

// DeleteRun removes a finished run of the caller's tenant and every record
// it owns (docs/semantics.md#delete-run).
func (s *RunService) DeleteRun(ctx context.Context, req *connect.Request[weftv1.DeleteRunRequest]) (*connect.Response[weftv1.DeleteRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.eng.DeleteRun(ctx, engine.DeleteRunParams{TenantID: who.tenant, RunID: req.Msg.GetRunId(), Actor: who.principal})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.DeleteRunResponse{RunId: req.Msg.GetRunId(), Removed: res.Removed}), nil
}

// RerunRun takes an ended run back to RUNNING from a step (docs/semantics.md#rerun).
func (s *RunService) RerunRun(ctx context.Context, req *connect.Request[weftv1.RerunRunRequest]) (*connect.Response[weftv1.RerunRunResponse], error) {
	res, err := control(ctx, req.Msg, req.Msg.GetFromStep(), req.Msg.SignalId, s.eng.RerunRun)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.RerunRunResponse{Result: acceptedProto(res.Result), Run: runProto(res.Run)}), nil
}
