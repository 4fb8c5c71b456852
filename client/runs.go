package client

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// unary calls one RPC: a fresh Connect request per attempt, retried when
// idempotent, and the response message unwrapped.
func unary[Req, Res any](ctx context.Context, c *Client, idempotent bool, msg *Req,
	rpc func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error)) (*Res, error) {
	return call(ctx, c, idempotent, func(ctx context.Context) (*Res, error) {
		res, err := rpc(ctx, connect.NewRequest(msg))
		if err != nil {
			return nil, err
		}
		return res.Msg, nil
	})
}

// SubmitRun persists a run (PENDING, or triggered when req.Start is set).
// It is retried only when req.RunRequestId is set, which makes it idempotent.
func (c *Client) SubmitRun(ctx context.Context, req *weftv1.SubmitRunRequest) (*weftv1.SubmitRunResponse, error) {
	return unary(ctx, c, req.GetRunRequestId() != "", req, c.runs.SubmitRun)
}

// StartRun triggers a PENDING or APPROVED run. It is not retried: a repeated
// start of a started run is an IllegalTransition.
func (c *Client) StartRun(ctx context.Context, runID string) (*weftv1.Run, error) {
	res, err := unary(ctx, c, false, &weftv1.StartRunRequest{RunId: runID}, c.runs.StartRun)
	return res.GetRun(), err
}

// GetRun answers a run's snapshot.
func (c *Client) GetRun(ctx context.Context, runID string) (*weftv1.Run, error) {
	res, err := unary(ctx, c, true, &weftv1.GetRunRequest{RunId: runID}, c.runs.GetRun)
	return res.GetRun(), err
}

// ListRuns answers one page of runs, newest first.
func (c *Client) ListRuns(ctx context.Context, req *weftv1.ListRunsRequest) (*weftv1.ListRunsResponse, error) {
	return unary(ctx, c, true, req, c.runs.ListRuns)
}

// CountRuns counts the caller's runs matching a query, in total or grouped
// by one field (docs/semantics.md#run-queries).
func (c *Client) CountRuns(ctx context.Context, req *weftv1.CountRunsRequest) (*weftv1.CountRunsResponse, error) {
	return unary(ctx, c, true, req, c.runs.CountRuns)
}

// ListSearchAttributes answers the search attributes the caller's tenant
// has used and their types (docs/semantics.md#search-attributes).
func (c *Client) ListSearchAttributes(ctx context.Context) ([]*weftv1.SearchAttributeDeclaration, error) {
	res, err := unary(ctx, c, true, &weftv1.ListSearchAttributesRequest{}, c.runs.ListSearchAttributes)
	if err != nil {
		return nil, err
	}
	return res.GetAttributes(), nil
}

// QueryRuns answers every run matching a query, newest first, following
// the pages (at most limit runs; 0: all of them).
func (c *Client) QueryRuns(ctx context.Context, query string, limit int) ([]*weftv1.Run, error) {
	var out []*weftv1.Run
	req := &weftv1.ListRunsRequest{Query: query, PageSize: 1000}
	for {
		res, err := c.ListRuns(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, r := range res.GetRuns() {
			if limit > 0 && len(out) == limit {
				return out, nil
			}
			out = append(out, r)
		}
		if req.PageToken = res.GetNextPageToken(); req.PageToken == "" {
			return out, nil
		}
	}
}

// AttrKeyword, AttrInt, AttrDouble, AttrBool and AttrTime build search
// attribute values for SubmitRunRequest.search_attributes and
// CompleteTaskRequest.search_attributes.
func AttrKeyword(s string) *weftv1.SearchAttributeValue {
	return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_KeywordValue{KeywordValue: s}}
}

// AttrInt is an int search attribute value.
func AttrInt(i int64) *weftv1.SearchAttributeValue {
	return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_IntValue{IntValue: i}}
}

// AttrDouble is a double search attribute value.
func AttrDouble(f float64) *weftv1.SearchAttributeValue {
	return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_DoubleValue{DoubleValue: f}}
}

// AttrBool is a bool search attribute value.
func AttrBool(b bool) *weftv1.SearchAttributeValue {
	return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_BoolValue{BoolValue: b}}
}

// AttrTime is a time search attribute value.
func AttrTime(t time.Time) *weftv1.SearchAttributeValue {
	return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_TimeValue{TimeValue: timestamppb.New(t)}}
}

// ApproveRun approves a run that requires approval. A missing signal_id is
// generated once and reused across retries.
func (c *Client) ApproveRun(ctx context.Context, req *weftv1.ApproveRunRequest) (*weftv1.ApproveRunResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.ApproveRunRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.ApproveRun)
}

// CancelRun cancels a run. A missing signal_id is generated once and reused
// across retries.
func (c *Client) CancelRun(ctx context.Context, req *weftv1.CancelRunRequest) (*weftv1.CancelRunResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.CancelRunRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.CancelRun)
}

// DeleteRun removes a finished run and every record it owns. It is retried
// on the failures that retrying fixes; a run deleted already (by an earlier
// attempt of the same call, too) answers a NotFound error.
func (c *Client) DeleteRun(ctx context.Context, runID string) (*weftv1.DeleteRunResponse, error) {
	return unary(ctx, c, true, &weftv1.DeleteRunRequest{RunId: runID}, c.runs.DeleteRun)
}

// PauseRun pauses a run. A missing signal_id is generated once and reused
// across retries.
func (c *Client) PauseRun(ctx context.Context, req *weftv1.PauseRunRequest) (*weftv1.PauseRunResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.PauseRunRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.PauseRun)
}

// ResumeRun resumes a paused run. A missing signal_id is generated once and
// reused across retries.
func (c *Client) ResumeRun(ctx context.Context, req *weftv1.ResumeRunRequest) (*weftv1.ResumeRunResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.ResumeRunRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.ResumeRun)
}

// RetryStep opens a new logical attempt of a failed step. A missing
// signal_id is generated once and reused across retries.
func (c *Client) RetryStep(ctx context.Context, req *weftv1.RetryStepRequest) (*weftv1.RetryStepResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.RetryStepRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.RetryStep)
}

// RerunRun takes an ended run back to RUNNING from a step
// (docs/semantics.md#rerun). A missing signal_id is generated once and
// reused across retries.
func (c *Client) RerunRun(ctx context.Context, req *weftv1.RerunRunRequest) (*weftv1.RerunRunResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.RerunRunRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.RerunRun)
}

// SkipStep skips a step. A missing signal_id is generated once and reused
// across retries.
func (c *Client) SkipStep(ctx context.Context, req *weftv1.SkipStepRequest) (*weftv1.SkipStepResponse, error) {
	req = withSignalID(c, req, req.SignalId, func(m *weftv1.SkipStepRequest, id *string) { m.SignalId = id })
	return unary(ctx, c, true, req, c.runs.SkipStep)
}

// withSignalID answers req unchanged when it names a signal id, else a copy
// with a fresh one, so that every retry of this call sends the same id and
// the caller's message is not modified.
func withSignalID[M proto.Message](c *Client, req M, id *string, set func(M, *string)) M {
	if id != nil {
		return req
	}
	cp := proto.Clone(req).(M)
	fresh := c.newID()
	set(cp, &fresh)
	return cp
}

// cloneOf answers a deep copy of m.
func cloneOf[M proto.Message](m M) M { return proto.Clone(m).(M) }

// Terminal reports whether a run status never changes again. Statuses this
// client does not know are not terminal.
func Terminal(s weftv1.RunStatus) bool {
	switch s {
	case weftv1.RunStatus_RUN_STATUS_COMPLETED, weftv1.RunStatus_RUN_STATUS_FAILED, weftv1.RunStatus_RUN_STATUS_CANCELLED:
		return true
	}
	return false
}

// StartBatch starts a batch operation over runs (docs/semantics.md#batches).
// It is retried on the failures that retrying fixes: the same batch_id
// answers the batch the first attempt stored.
func (c *Client) StartBatch(ctx context.Context, req *weftv1.StartBatchRequest) (*weftv1.StartBatchResponse, error) {
	return unary(ctx, c, true, req, c.runs.StartBatch)
}

// DescribeBatch answers a batch's progress and a page of its runs' outcomes.
func (c *Client) DescribeBatch(ctx context.Context, req *weftv1.DescribeBatchRequest) (*weftv1.DescribeBatchResponse, error) {
	return unary(ctx, c, true, req, c.runs.DescribeBatch)
}

// CancelBatch stops a batch; the runs it has not acted on are left alone.
func (c *Client) CancelBatch(ctx context.Context, batchID string) (*weftv1.CancelBatchResponse, error) {
	return unary(ctx, c, true, &weftv1.CancelBatchRequest{BatchId: batchID}, c.runs.CancelBatch)
}

// ListBatches answers a page of the caller's batches.
func (c *Client) ListBatches(ctx context.Context, req *weftv1.ListBatchesRequest) (*weftv1.ListBatchesResponse, error) {
	return unary(ctx, c, true, req, c.runs.ListBatches)
}

// DescribeRunConcurrency lists the caller's run concurrency keys with
// started or queued runs (docs/semantics.md#run-concurrency); retried,
// since it changes nothing.
func (c *Client) DescribeRunConcurrency(ctx context.Context, req *weftv1.DescribeRunConcurrencyRequest) (*weftv1.DescribeRunConcurrencyResponse, error) {
	return unary(ctx, c, true, req, c.runs.DescribeRunConcurrency)
}
