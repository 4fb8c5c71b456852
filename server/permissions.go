package server

import (
	"context"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// rpcRule is what one RPC needs: the permission, and whether it changes
// anything (the audit log records every call that does).
type rpcRule struct {
	perm     Permission
	mutating bool
}

func read(p Permission) rpcRule   { return rpcRule{perm: p} }
func mutate(p Permission) rpcRule { return rpcRule{perm: p, mutating: true} }

// rpcRules is the one table mapping every RPC to the permission it needs.
// An RPC missing here is refused to everyone (permission_test.go fails the
// build's tests for any RPC of weft.v1 without an entry).
var rpcRules = map[string]rpcRule{
	weftv1connect.RunServiceSubmitRunProcedure:              mutate(PermRunsSubmit),
	weftv1connect.RunServiceStartRunProcedure:               mutate(PermRunsSubmit),
	weftv1connect.RunServiceApproveRunProcedure:             mutate(PermRunsApprove),
	weftv1connect.RunServiceGetRunProcedure:                 read(PermRunsRead),
	weftv1connect.RunServiceAwaitRunProcedure:               read(PermRunsRead),
	weftv1connect.RunServiceListRunsProcedure:               read(PermRunsRead),
	weftv1connect.RunServiceCountRunsProcedure:              read(PermRunsRead),
	weftv1connect.RunServiceListSearchAttributesProcedure:   read(PermRunsRead),
	weftv1connect.RunServiceDescribeRunConcurrencyProcedure: read(PermRunsRead),
	weftv1connect.RunServiceCancelRunProcedure:              mutate(PermRunsOperate),
	weftv1connect.RunServicePauseRunProcedure:               mutate(PermRunsOperate),
	weftv1connect.RunServiceResumeRunProcedure:              mutate(PermRunsOperate),
	weftv1connect.RunServiceRetryStepProcedure:              mutate(PermRunsOperate),
	weftv1connect.RunServiceRerunRunProcedure:               mutate(PermRunsOperate),
	weftv1connect.RunServiceSkipStepProcedure:               mutate(PermRunsOperate),
	weftv1connect.RunServiceDeleteRunProcedure:              mutate(PermRunsDelete),
	// A delete batch also needs runs.delete (StartBatch checks it).
	weftv1connect.RunServiceStartBatchProcedure:    mutate(PermRunsOperate),
	weftv1connect.RunServiceCancelBatchProcedure:   mutate(PermRunsOperate),
	weftv1connect.RunServiceDescribeBatchProcedure: read(PermRunsRead),
	weftv1connect.RunServiceListBatchesProcedure:   read(PermRunsRead),

	weftv1connect.EventServiceListEventsProcedure:  read(PermRunsRead),
	weftv1connect.EventServiceWatchEventsProcedure: read(PermRunsRead),
	weftv1connect.EventServiceResyncRunProcedure:   read(PermRunsRead),

	weftv1connect.SignalServiceSignalRunProcedure:            mutate(PermRunsOperate),
	weftv1connect.SignalServiceCompleteManualActionProcedure: mutate(PermManualComplete),

	weftv1connect.WorkerServicePollTasksProcedure:          mutate(PermTasksWork),
	weftv1connect.WorkerServiceCompleteTaskProcedure:       mutate(PermTasksWork),
	weftv1connect.WorkerServiceFailTaskProcedure:           mutate(PermTasksWork),
	weftv1connect.WorkerServiceHeartbeatTaskProcedure:      mutate(PermTasksWork),
	weftv1connect.WorkerServiceReportVerificationProcedure: mutate(PermTasksWork),
	weftv1connect.WorkerServiceListWorkersProcedure:        read(PermQueuesRead),
	weftv1connect.WorkerServiceDescribeQueueProcedure:      read(PermQueuesRead),

	weftv1connect.ScheduleServiceCreateScheduleProcedure:   mutate(PermSchedulesWrite),
	weftv1connect.ScheduleServiceGetScheduleProcedure:      read(PermSchedulesRead),
	weftv1connect.ScheduleServiceListSchedulesProcedure:    read(PermSchedulesRead),
	weftv1connect.ScheduleServicePauseScheduleProcedure:    mutate(PermSchedulesWrite),
	weftv1connect.ScheduleServiceResumeScheduleProcedure:   mutate(PermSchedulesWrite),
	weftv1connect.ScheduleServiceUpdateScheduleProcedure:   mutate(PermSchedulesWrite),
	weftv1connect.ScheduleServiceTriggerScheduleProcedure:  mutate(PermSchedulesWrite),
	weftv1connect.ScheduleServiceBackfillScheduleProcedure: mutate(PermSchedulesWrite),
	weftv1connect.ScheduleServiceDeleteScheduleProcedure:   mutate(PermSchedulesWrite),

	weftv1connect.DefinitionServicePutDefinitionProcedure:   mutate(PermDefinitionsWrite),
	weftv1connect.DefinitionServiceGetDefinitionProcedure:   read(PermDefinitionsRead),
	weftv1connect.DefinitionServiceListDefinitionsProcedure: read(PermDefinitionsRead),
	weftv1connect.DefinitionServiceParseDefinitionProcedure: read(PermDefinitionsRead),

	weftv1connect.ViewServiceSaveViewProcedure:   mutate(PermViewsWrite),
	weftv1connect.ViewServiceListViewsProcedure:  read(PermViewsRead),
	weftv1connect.ViewServiceDeleteViewProcedure: mutate(PermViewsWrite),

	weftv1connect.AuditServiceListAuditEventsProcedure: read(PermAuditRead),

	weftv1connect.IdentityServiceWhoAmIProcedure: read(PermIdentityRead),
}

// PermissionOf answers the permission the procedure ("/weft.v1.RunService/GetRun")
// needs, and whether the table names it.
func PermissionOf(procedure string) (Permission, bool) {
	r, ok := rpcRules[procedure]
	return r.perm, ok
}

// authorizeInterceptor refuses every call whose caller's roles do not grant
// the permission its RPC needs. It runs right after authentication and
// before validation or a handler, so a refused caller learns nothing of the
// request rules or of what exists; it is the only place permissions are
// checked, on every protocol (JSON-RPC forwards to the same handlers).
type authorizeInterceptor struct{}

func (authorizeInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if err := authorize(ctx, req.Spec().Procedure); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (authorizeInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (authorizeInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if err := authorize(ctx, conn.Spec().Procedure); err != nil {
			return err
		}
		return next(ctx, conn)
	}
}

// authorize answers nil when the request's caller holds the permission the
// procedure needs, else PERMISSION_DENIED naming that permission.
func authorize(ctx context.Context, procedure string) error {
	who, err := callerOf(ctx)
	if err != nil {
		return err
	}
	rule, ok := rpcRules[procedure]
	if !ok {
		return newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_PERMISSION_DENIED},
			"no permission is defined for this procedure; it is refused to everyone")
	}
	if who.perms.has(rule.perm) {
		return nil
	}
	return permissionDenied(rule.perm)
}

// permissionDenied answers PERMISSION_DENIED naming the permission and the
// roles that grant it; never anything about the request's target.
func permissionDenied(p Permission) *connect.Error {
	return newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_PERMISSION_DENIED},
		fmt.Sprintf("permission %q denied: the caller's roles do not grant it (roles granting it: %s)",
			p.String(), strings.Join(rolesGranting(p), ", ")))
}
