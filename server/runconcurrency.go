package server

import (
	"context"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// DescribeRunConcurrency lists the caller's run concurrency keys
// (docs/semantics.md#run-concurrency).
func (s *RunService) DescribeRunConcurrency(ctx context.Context, req *connect.Request[weftv1.DescribeRunConcurrencyRequest]) (*connect.Response[weftv1.DescribeRunConcurrencyResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := s.eng.Queries().DescribeRunConcurrency(ctx, engine.RunConcurrencyParams{TenantID: who.tenant, PlanID: req.Msg.GetPlanId()})
	if err != nil {
		return nil, err
	}
	out := &weftv1.DescribeRunConcurrencyResponse{Keys: make([]*weftv1.RunConcurrencyKey, len(keys))}
	for i, k := range keys {
		out.Keys[i] = &weftv1.RunConcurrencyKey{PlanId: k.PlanID, Key: k.Key, InUse: uint32(max(k.InUse, 0)),
			Limit: uint32(max(k.Limit, 0)), Waiting: uint32(max(k.Waiting, 0))}
	}
	return connect.NewResponse(out), nil
}
