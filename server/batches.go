package server

import (
	"context"
	"strings"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/batch"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// batchOperations maps the API's batch operations to the batch package's.
var batchOperations = map[weftv1.BatchOperation]batch.Operation{
	weftv1.BatchOperation_BATCH_OPERATION_CANCEL:     batch.OpCancel,
	weftv1.BatchOperation_BATCH_OPERATION_PAUSE:      batch.OpPause,
	weftv1.BatchOperation_BATCH_OPERATION_RESUME:     batch.OpResume,
	weftv1.BatchOperation_BATCH_OPERATION_RERUN_FROM: batch.OpRerunFrom,
	weftv1.BatchOperation_BATCH_OPERATION_RETRY_STEP: batch.OpRetryStep,
	weftv1.BatchOperation_BATCH_OPERATION_SIGNAL:     batch.OpSignal,
	weftv1.BatchOperation_BATCH_OPERATION_DELETE:     batch.OpDelete,
}

// batchesOrUnavailable answers the batches the RunService drives, or the
// fault that this weftd serves none.
func (s *RunService) batchesOrUnavailable() (*batch.Batches, error) {
	if s.batches == nil {
		return nil, engineFault(&engine.Error{Code: engine.CodeCapabilityUnavailable, Capability: "batches",
			Message: "this server runs no batch operations"})
	}
	return s.batches, nil
}

// StartBatch stores a batch operation and answers it (docs/semantics.md#batches).
func (s *RunService) StartBatch(ctx context.Context, req *connect.Request[weftv1.StartBatchRequest]) (*connect.Response[weftv1.StartBatchResponse], error) {
	b, err := s.batchesOrUnavailable()
	if err != nil {
		return nil, err
	}
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	m := req.Msg
	op := batchOperations[m.GetOperation()]
	if op == batch.OpDelete && !who.perms.has(PermRunsDelete) {
		return nil, engineFault(&engine.Error{Code: engine.CodePermissionDenied,
			Message: "a delete batch needs the runs.delete permission"})
	}
	payload, err := jsonField(m.GetPayload(), "payload")
	if err != nil {
		return nil, engineFault(err)
	}
	v, existing, err := b.Start(ctx, batch.StartParams{TenantID: who.tenant, BatchID: m.GetBatchId(), Operation: op,
		Args: batch.Args{FromStep: m.GetFromStep(), ActionID: m.GetActionId(), SignalName: m.GetSignalName(), Payload: payload,
			Reason: m.GetReason(), Compensate: m.GetCompensate()},
		RunIDs: m.GetRunIds(), Query: m.GetQuery(), Rate: m.GetRate(), CreatedBy: who.principal})
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.StartBatchResponse{Batch: batchProto(v), Existing: existing}), nil
}

// DescribeBatch answers a batch and a page of its runs.
func (s *RunService) DescribeBatch(ctx context.Context, req *connect.Request[weftv1.DescribeBatchRequest]) (*connect.Response[weftv1.DescribeBatchResponse], error) {
	b, err := s.batchesOrUnavailable()
	if err != nil {
		return nil, err
	}
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	v, runs, next, err := b.Describe(ctx, who.tenant, req.Msg.GetBatchId(), int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
	if err != nil {
		return nil, engineFault(err)
	}
	out := &weftv1.DescribeBatchResponse{Batch: batchProto(v), NextPageToken: next, Runs: make([]*weftv1.BatchRun, 0, len(runs))}
	for _, r := range runs {
		out.Runs = append(out.Runs, &weftv1.BatchRun{RunId: r.RunID, Outcome: batchOutcomeProto(r.Outcome), Code: r.Code,
			Message: r.Message, At: eventpb.Timestamp(r.At)})
	}
	return connect.NewResponse(out), nil
}

// CancelBatch stops a batch.
func (s *RunService) CancelBatch(ctx context.Context, req *connect.Request[weftv1.CancelBatchRequest]) (*connect.Response[weftv1.CancelBatchResponse], error) {
	b, err := s.batchesOrUnavailable()
	if err != nil {
		return nil, err
	}
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	v, err := b.Cancel(ctx, who.tenant, req.Msg.GetBatchId())
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.CancelBatchResponse{Batch: batchProto(v)}), nil
}

// ListBatches answers a page of the caller's batches.
func (s *RunService) ListBatches(ctx context.Context, req *connect.Request[weftv1.ListBatchesRequest]) (*connect.Response[weftv1.ListBatchesResponse], error) {
	b, err := s.batchesOrUnavailable()
	if err != nil {
		return nil, err
	}
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	views, next, err := b.List(ctx, who.tenant, int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
	if err != nil {
		return nil, engineFault(err)
	}
	out := &weftv1.ListBatchesResponse{NextPageToken: next}
	for _, v := range views {
		out.Batches = append(out.Batches, batchProto(v))
	}
	return connect.NewResponse(out), nil
}

// batchProto converts a batch.
func batchProto(v *batch.View) *weftv1.Batch {
	out := &weftv1.Batch{BatchId: v.BatchID, State: weftv1.BatchState(weftv1.BatchState_value["BATCH_STATE_"+string(v.State)]),
		Query: v.Query, Rate: v.Rate, Total: uint32(v.Total), Done: uint32(v.Done), Succeeded: uint32(v.Succeeded),
		Failed: uint32(v.Failed), Skipped: uint32(v.Skipped), FromStep: v.FromStep, ActionId: v.ActionID, SignalName: v.SignalName,
		CreatedBy: v.CreatedBy, CreatedAt: eventpb.Timestamp(v.CreatedAt), EndedAt: eventpb.Timestamp(v.EndedAt), Owner: v.Owner}
	for api, op := range batchOperations {
		if op == v.Operation {
			out.Operation = api
		}
	}
	return out
}

// batchOutcomeProto converts a run's outcome.
func batchOutcomeProto(o batch.Outcome) weftv1.BatchRunOutcome {
	return weftv1.BatchRunOutcome(weftv1.BatchRunOutcome_value["BATCH_RUN_OUTCOME_"+strings.ToUpper(string(o))])
}
