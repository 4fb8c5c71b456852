package server

import (
	"context"
	"encoding/hex"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/audit"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// auditService serves AuditService from the audit log.
type auditService struct {
	weftv1connect.UnimplementedAuditServiceHandler
	log *audit.Log
}

// NewAuditService answers AuditService served by log.
func NewAuditService(log *audit.Log) weftv1connect.AuditServiceHandler {
	return &auditService{log: log}
}

const defaultAuditPage = 100

// ListAuditEvents pages the caller's tenant's records, newest first.
func (s *auditService) ListAuditEvents(ctx context.Context, req *connect.Request[weftv1.ListAuditEventsRequest]) (*connect.Response[weftv1.ListAuditEventsResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	after, err := hex.DecodeString(m.GetPageToken())
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("page_token: not a token this server answered"))
	}
	limit := int(m.GetPageSize())
	if limit == 0 {
		limit = defaultAuditPage
	}
	f := audit.Filter{Principal: m.GetPrincipal(), Procedure: m.GetProcedure(), Target: m.GetTarget(), Outcome: m.GetOutcome()}
	if m.GetSince() != nil {
		f.Since = m.GetSince().AsTime()
	}
	if m.GetUntil() != nil {
		f.Until = m.GetUntil().AsTime()
	}
	if len(after) == 0 {
		after = nil
	}
	page, err := s.log.List(ctx, audit.ListParams{Tenant: who.tenant, Filter: f, Limit: limit, After: after})
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListAuditEventsResponse{NextPageToken: hex.EncodeToString(page.Next)}
	for _, r := range page.Records {
		out.Events = append(out.Events, &weftv1.AuditEvent{Id: r.ID, Time: timestamppb.New(r.Time), TenantId: r.Tenant,
			Principal: r.Principal, AuthMethod: r.AuthMethod, Procedure: r.Procedure, Permission: r.Permission,
			Target: r.Target, Outcome: r.Outcome, CorrelationId: r.CorrelationID})
	}
	return connect.NewResponse(out), nil
}

// auditInterceptorFor answers the audit interceptor of cfg, or one that
// passes every call through when cfg keeps no audit log.
func auditInterceptorFor(cfg Config) connect.Interceptor {
	if cfg.Audit == nil {
		return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc { return next })
	}
	return &auditInterceptor{log: cfg.Audit, logger: cfg.Logger}
}

// auditServiceFor answers AuditService of cfg; without an audit log it
// answers FAILED_PRECONDITION saying so.
func auditServiceFor(cfg Config) weftv1connect.AuditServiceHandler {
	if cfg.Audit == nil {
		return noAuditService{}
	}
	return NewAuditService(cfg.Audit)
}

// noAuditService is AuditService of a server that keeps no audit log.
type noAuditService struct {
	weftv1connect.UnimplementedAuditServiceHandler
}

// ListAuditEvents answers that there is no audit log.
func (noAuditService) ListAuditEvents(context.Context, *connect.Request[weftv1.ListAuditEventsRequest]) (*connect.Response[weftv1.ListAuditEventsResponse], error) {
	return nil, newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_FAILED_PRECONDITION},
		"this server keeps no audit log (weftd --audit on, or authenticate callers)")
}
