package server

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/batch"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// RunService serves weft.v1.RunService over an engine: it converts each
// request, calls the engine once, and converts the answer; its errors go back
// as the engine returned them, for the fault interceptor to map.
type RunService struct {
	eng *engine.Engine
	// batches serves the batch operations' calls; nil answers them unavailable.
	batches *batch.Batches
}

var _ weftv1connect.RunServiceHandler = (*RunService)(nil)

// NewRunService answers the RunService handler over eng.
func NewRunService(eng *engine.Engine) *RunService { return &RunService{eng: eng} }

// SubmitRun persists the run PENDING (and triggers it with start); with
// start and await_ms it then waits for the run to be terminal, as AwaitRun.
func (s *RunService) SubmitRun(ctx context.Context, req *connect.Request[weftv1.SubmitRunRequest]) (*connect.Response[weftv1.SubmitRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	p, err := submitParamsOf(req.Msg, who)
	if err != nil {
		return nil, err
	}
	res, err := s.eng.SubmitRun(ctx, p)
	if err != nil {
		return nil, err
	}
	snap := res.Run
	if wait := time.Duration(req.Msg.GetAwaitMs()) * time.Millisecond; wait > 0 && p.Start {
		snap = s.awaitSubmitted(ctx, who, res, wait)
	}
	return connect.NewResponse(&weftv1.SubmitRunResponse{Run: runProto(snap), Existing: res.Existing}), nil
}

// awaitSubmitted waits up to wait for a submitted run to be terminal and
// answers its snapshot then. The run is persisted whatever happens here, so
// a failed wait answers the submission's own snapshot, not an error: the
// caller sees a run that is not terminal yet and awaits it with AwaitRun.
//
// The wait starts from the version the submission committed (res.Version):
// its first look takes the engine's cached checkpoint rather than reading
// the store back.
func (s *RunService) awaitSubmitted(ctx context.Context, who caller, res *engine.SubmitResult, wait time.Duration) *runstate.Snapshot {
	snap, err := s.eng.AwaitRun(ctx, engine.AwaitParams{TenantID: who.tenant, RunID: res.Run.RunID, Wait: wait, Seen: res.Version})
	if err != nil {
		return res.Run
	}
	return snap
}

// submitParamsOf converts a submission.
func submitParamsOf(m *weftv1.SubmitRunRequest, who caller) (engine.SubmitParams, error) {
	p := engine.SubmitParams{TenantID: who.tenant, ProjectID: m.GetProjectId(), EnvironmentID: m.GetEnvironmentId(),
		RunRequestID: m.GetRunRequestId(), Start: m.GetStart(), SubmittedBy: who.principal, Priority: int(m.GetPriority())}
	switch {
	case m.Definition != nil && m.DefinitionRef != nil:
		return p, definitionChoice("give either definition or definition_ref, not both")
	case m.DefinitionRef != nil:
		ref := definitionRefOf(m.DefinitionRef)
		p.Ref = &ref
	case m.Definition != nil:
		def, err := definitionOf(m.Definition, "definition")
		if err != nil {
			return p, err
		}
		p.Definition = def
	default:
		return p, definitionChoice("one of definition (inline) and definition_ref (a stored one) is required")
	}
	input, err := jsonField(m.GetInput(), "input")
	if err != nil {
		return p, err
	}
	p.Input = input
	if p.SearchAttributes, err = searchAttributesOf(m.GetSearchAttributes(), "search_attributes"); err != nil {
		return p, err
	}
	return p, nil
}

// definitionChoice refuses a submission that gives neither or both of
// definition and definition_ref.
func definitionChoice(message string) error {
	return &engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid request",
		Violations: []engine.FieldViolation{{Field: "definition", Rule: "definition.one_of", Message: message}}}
}

// StartRun triggers a PENDING or APPROVED run.
func (s *RunService) StartRun(ctx context.Context, req *connect.Request[weftv1.StartRunRequest]) (*connect.Response[weftv1.StartRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := s.eng.StartRun(ctx, engine.StartParams{TenantID: who.tenant, RunID: req.Msg.GetRunId(), Actor: who.principal})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.StartRunResponse{Run: runProto(snap)}), nil
}

// GetRun answers the run's snapshot.
func (s *RunService) GetRun(ctx context.Context, req *connect.Request[weftv1.GetRunRequest]) (*connect.Response[weftv1.GetRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := s.eng.GetRun(ctx, engine.GetRunParams{TenantID: who.tenant, RunID: req.Msg.GetRunId()})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.GetRunResponse{Run: runProto(snap)}), nil
}

// AwaitRun answers the run's snapshot once it is terminal, or when wait_ms
// passes.
func (s *RunService) AwaitRun(ctx context.Context, req *connect.Request[weftv1.AwaitRunRequest]) (*connect.Response[weftv1.AwaitRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	wait := time.Duration(req.Msg.GetWaitMs()) * time.Millisecond
	snap, err := s.eng.AwaitRun(ctx, engine.AwaitParams{TenantID: who.tenant, RunID: req.Msg.GetRunId(), Wait: wait})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.AwaitRunResponse{Run: runProto(snap)}), nil
}

// ListRuns pages the caller's runs, newest first.
func (s *RunService) ListRuns(ctx context.Context, req *connect.Request[weftv1.ListRunsRequest]) (*connect.Response[weftv1.ListRunsResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	p := engine.ListRunsParams{TenantID: who.tenant, PlanID: m.GetPlanId(), PlanVersion: m.GetPlanVersion(),
		ProjectID: m.GetProjectId(), EnvironmentID: m.GetEnvironmentId(), RunIDContains: m.GetRunIdContains(),
		CreatedAfter:  timeOf(m.GetCreatedAfter()),
		CreatedBefore: timeOf(m.GetCreatedBefore()), Query: m.GetQuery(), PageSize: int(m.GetPageSize()), PageToken: m.GetPageToken()}
	for _, st := range m.GetStatuses() {
		p.Statuses = append(p.Statuses, runStatuses.Engine(st))
	}
	res, err := s.eng.Queries().ListRuns(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListRunsResponse{NextPageToken: res.NextPageToken}
	for _, snap := range res.Runs {
		out.Runs = append(out.Runs, runProto(snap))
	}
	return connect.NewResponse(out), nil
}
