package server

import (
	"context"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// SignalService serves weft.v1.SignalService over an engine.
type SignalService struct {
	eng *engine.Engine
}

var _ weftv1connect.SignalServiceHandler = (*SignalService)(nil)

// NewSignalService answers the SignalService handler over eng.
func NewSignalService(eng *engine.Engine) *SignalService { return &SignalService{eng: eng} }

// SignalRun accepts a named signal; a duplicate signal_id answers the
// original AcceptedSignalResult with duplicate set.
func (s *SignalService) SignalRun(ctx context.Context, req *connect.Request[weftv1.SignalRunRequest]) (*connect.Response[weftv1.SignalRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	payload, err := jsonField(m.GetPayload(), "payload")
	if err != nil {
		return nil, err
	}
	res, err := s.eng.SignalRun(ctx, engine.SignalParams{TenantID: who.tenant, RunID: m.GetRunId(),
		SignalName: m.GetSignalName(), SignalID: m.SignalId, Payload: payload, Actor: who.principal})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.SignalRunResponse{Result: acceptedProto(res.Result), Duplicate: res.Duplicate}), nil
}

// CompleteManualAction completes a step waiting for a person; a duplicate
// (run, action, token) answers the original result with duplicate set.
func (s *SignalService) CompleteManualAction(ctx context.Context, req *connect.Request[weftv1.CompleteManualActionRequest]) (*connect.Response[weftv1.CompleteManualActionResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	output, err := jsonField(m.GetOutput(), "output")
	if err != nil {
		return nil, err
	}
	res, err := s.eng.CompleteManualAction(ctx, engine.ManualCompletionParams{TenantID: who.tenant, RunID: m.GetRunId(),
		ActionID: m.GetActionId(), CompletionToken: m.GetCompletionToken(), Outcome: manualOutcomes.Engine(m.GetOutcome()),
		ActorUserID: m.GetActorUserId(), Principal: who.authenticatedPrincipal(), CompletedAt: timeOf(m.GetCompletedAt()), Notes: m.GetNotes(),
		EvidenceRefs: m.GetEvidenceRefs(), Output: output})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.CompleteManualActionResponse{Result: eventpb.ManualResult(res.Result),
		Duplicate: res.Duplicate}), nil
}
