package server

import (
	"context"
	"math"
	"time"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// ListWorkers describes the caller's queues: their pollers, backlog and
// oldest ready task (docs/semantics.md#pollers). A tenant sees only its own.
func (s *WorkerService) ListWorkers(ctx context.Context, _ *connect.Request[weftv1.ListWorkersRequest]) (*connect.Response[weftv1.ListWorkersResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.eng.ListWorkers(ctx, engine.ListWorkersParams{TenantID: who.tenant})
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListWorkersResponse{Queues: make([]*weftv1.QueueDescription, 0, len(list))}
	for _, q := range list {
		out.Queues = append(out.Queues, queueProto(q))
	}
	return connect.NewResponse(out), nil
}

// DescribeQueue describes one of the caller's queues.
func (s *WorkerService) DescribeQueue(ctx context.Context, req *connect.Request[weftv1.DescribeQueueRequest]) (*connect.Response[weftv1.DescribeQueueResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.eng.DescribeQueue(ctx, engine.DescribeQueueParams{TenantID: who.tenant, Queue: req.Msg.GetQueue()})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.DescribeQueueResponse{Queue: queueProto(q)}), nil
}

// queueProto answers a queue's description as the API's.
func queueProto(q *engine.QueueInfo) *weftv1.QueueDescription {
	out := &weftv1.QueueDescription{Queue: q.Queue, Backlog: uint32(q.Backlog), BacklogCapped: q.BacklogCapped,
		OldestReadyAgeMs: clampMillis(q.OldestReadyAge), Pollers: make([]*weftv1.Poller, 0, len(q.Pollers))}
	if !q.OldestReady.IsZero() {
		out.OldestReadyAt = eventpb.Timestamp(q.OldestReady)
	}
	for _, k := range q.FlowKeys {
		out.FlowKeys = append(out.FlowKeys, &weftv1.FlowKeyState{Kind: k.Kind, Scope: k.Scope, Key: k.Key,
			Waiting: uint32(k.Waiting), InUse: uint32(k.InUse), Limit: uint32(k.Limit), Rate: k.Rate,
			Burst: uint32(k.Burst), Tokens: uint32(k.Tokens), NextRelease: eventpb.Timestamp(k.NextRelease)})
	}
	for _, k := range q.FairKeys {
		out.FairnessKeys = append(out.FairnessKeys, &weftv1.FairnessKeyState{Priority: uint32(k.Priority), Key: k.Key,
			Backlog: uint32(k.Backlog), Weight: k.Weight})
	}
	out.FairnessOther = uint32(q.FairOther)
	for _, p := range q.Pollers {
		out.Pollers = append(out.Pollers, &weftv1.Poller{WorkerId: p.WorkerID, LastPollAt: eventpb.Timestamp(p.LastPoll),
			Polling: p.Polling, InFlightTasks: uint32(p.InFlight), Activities: p.Activities,
			Compensations: p.Compensations, VerifiableActivities: p.Verifiable})
	}
	return out
}

// clampMillis answers d in milliseconds, within uint32.
func clampMillis(d time.Duration) uint32 {
	return uint32(min(max(d.Milliseconds(), 0), math.MaxUint32))
}
