package server

import (
	"context"
	"log/slog"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/audit"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// auditInterceptor records every call of an RPC the permission table marks
// mutating in the audit log: a denied call as one record; an allowed one in
// the batch of its action (the call's context carries the record as a
// store.Rider, which the engine's decision and the scheduler's record write
// add to their batch), or, when the call committed no action, after it
// answers, with its outcome (package audit). A call whose action cannot
// carry its record does not commit, so no action goes unrecorded. It runs
// after authentication (it records who) and before the permission check
// (it records denials).
type auditInterceptor struct {
	log    *audit.Log
	logger *slog.Logger
}

func (a *auditInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		procedure := req.Spec().Procedure
		rule, ok := rpcRules[procedure]
		who, err := callerOf(ctx)
		if !ok || !rule.mutating || err != nil {
			return next(ctx, req)
		}
		rec := audit.Record{Tenant: who.tenant, Principal: who.principal, AuthMethod: string(who.method),
			Procedure: procedure, Permission: rule.perm.String(), Target: targetOf(req.Any()), CorrelationID: CorrelationID(ctx)}
		if denied := authorize(ctx, procedure); denied != nil {
			rec.Outcome = connect.CodeOf(denied).String()
			if err := a.log.Append(ctx, rec); err != nil {
				a.failed(ctx, procedure, err)
			}
			return nil, denied
		}
		rider := a.log.Rider(rec)
		res, callErr := next(rider.On(ctx), req)
		outcome := audit.OutcomeOK
		if callErr != nil {
			outcome = withFault(callErr, "").Code().String()
		}
		if err := a.log.Settle(context.WithoutCancel(ctx), rider, outcome); err != nil {
			a.failed(ctx, procedure, err) // the call committed no action
		}
		return res, callErr
	}
}

func (a *auditInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler passes streams through: no streaming RPC mutates
// (TestAudit_EveryMutatingRPCLeavesExactlyOneRecord would fail for one).
func (a *auditInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

func (a *auditInterceptor) failed(ctx context.Context, procedure string, err error) {
	a.logger.LogAttrs(ctx, slog.LevelError, "audit record not written", slog.String("procedure", procedure),
		slog.String("correlation_id", CorrelationID(ctx)), slog.String("error", err.Error()))
}

// targetFields are the request fields that name what a call acts on, in the
// order they are looked for, and the kind each names.
var targetFields = []struct {
	field protoreflect.Name
	kind  string
}{
	{"run_id", "run"}, {"schedule_id", "schedule"},
}

// targetOf answers what a request acts on ("run:…", "schedule:…", "plan:…",
// "saved-view:…"),
// or "" when it names nothing: only identifiers, never a payload.
func targetOf(msg any) string {
	switch v := msg.(type) {
	case *weftv1.SaveViewRequest:
		return "saved-view:" + v.GetView().GetName()
	case *weftv1.DeleteViewRequest:
		return "saved-view:" + v.GetName()
	}
	m, ok := msg.(proto.Message)
	if !ok {
		return ""
	}
	r := m.ProtoReflect()
	for _, t := range targetFields {
		if v := stringField(r, t.field); v != "" {
			return t.kind + ":" + v
		}
	}
	if fd := r.Descriptor().Fields().ByName("definition"); fd != nil && fd.Message() != nil && r.Has(fd) {
		if plan := stringField(r.Get(fd).Message(), "plan_id"); plan != "" {
			return "plan:" + plan
		}
	}
	return ""
}

func stringField(r protoreflect.Message, name protoreflect.Name) string {
	fd := r.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return r.Get(fd).String()
}
