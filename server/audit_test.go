package server

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/keyspace"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit/loop"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/server/wiretest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/view"
)

// auditBundle is a server with one token per role and an audit log kept in
// a store the test can make fail.
type auditBundle struct {
	url   string
	log   *audit.Log
	store *faultstore.Store
}

func auditSetup(t *testing.T) *auditBundle {
	t.Helper()
	mem := memstore.New(memstore.Config{})
	t.Cleanup(func() { _ = mem.Close() })
	fs, err := faultstore.New(mem, faultstore.Config{})
	require.NoError(t, err)
	specs := []TokenSpec{{Token: roleToken("default"), Tenant: "acme", Principal: "default"}}
	for _, r := range Roles {
		specs = append(specs, TokenSpec{Token: roleToken(string(r)), Tenant: "acme", Principal: string(r), Roles: []string{string(r)}})
	}
	tokens, err := NewTokenSet(specs...)
	require.NoError(t, err)
	cfg := engineConfigOn(t, fs) // the engine and the audit log share the store, as in weftd
	cfg.Tokens = tokens
	cfg.Audit = audit.New(fs, nil)
	return &auditBundle{url: testServer(t, cfg), log: cfg.Audit, store: fs}
}

// records answers every record of tenant acme, newest first.
func (b *auditBundle) records(t *testing.T) []audit.Record {
	t.Helper()
	page, err := b.log.List(context.Background(), audit.ListParams{Tenant: "acme", Limit: 1000})
	require.NoError(t, err)
	return page.Records
}

func mutatingProcedures() []string {
	var out []string
	for p, r := range rpcRules {
		if r.mutating {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TestAudit_EveryMutatingRPCLeavesExactlyOneRecord calls every RPC the
// table marks mutating once as a caller allowed it and once as a viewer
// (denied, except for what a viewer may do): each call leaves exactly one
// record, with who, how, what and the outcome, and no read leaves any.
func TestAudit_EveryMutatingRPCLeavesExactlyOneRecord(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	for _, procedure := range mutatingProcedures() {
		for _, role := range []string{"default", "viewer"} {
			out := callAs(t, b.url, wiretest.ConnectJSON, procedure, roleToken(role))
			var mine []audit.Record
			for _, r := range b.records(t) {
				if r.Procedure == procedure && r.Principal == role {
					mine = append(mine, r)
				}
			}
			require.Len(t, mine, 1, "%s as %s", procedure, role)
			r := mine[0]
			want := out.Code
			if want == "" {
				want = "ok"
			}
			require.Equal(t, want, r.Outcome, "%s as %s", procedure, role)
			require.Equal(t, "token", r.AuthMethod)
			require.Equal(t, "acme", r.Tenant)
			perm, _ := PermissionOf(procedure)
			require.Equal(t, perm.String(), r.Permission)
			require.NotEmpty(t, r.CorrelationID)
			require.False(t, r.Time.IsZero())
		}
	}
	for _, r := range b.records(t) {
		rule := rpcRules[r.Procedure]
		require.True(t, rule.mutating, "a read (%s) was audited", r.Procedure)
	}
}

func TestAudit_RecordsTheTargetAndNeverThePayload(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: &weftv1.WorkflowDefinition{PlanId: "payments", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "secret-activity-name"}}}}))
	require.NoError(t, err)
	runID := res.Msg.GetRun().GetRunId()
	_, err = c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID, Reason: "card-number-4111"}))
	require.NoError(t, err)

	recs := b.records(t)
	require.Len(t, recs, 2)
	require.Equal(t, weftv1connect.RunServiceCancelRunProcedure, recs[0].Procedure, "newest first")
	require.Equal(t, "run:"+runID, recs[0].Target)
	require.Equal(t, "plan:payments", recs[1].Target)
	for _, r := range recs {
		require.Equal(t, "ok", r.Outcome)
		require.Equal(t, "operator", r.Principal)
	}
	page, err := b.log.List(context.Background(), audit.ListParams{Tenant: "acme", Limit: 10, Filter: audit.Filter{Target: "run:" + runID}})
	require.NoError(t, err)
	require.Len(t, page.Records, 1)
}

// TestAudit_ACrashBeforeTheActionsBatchLeavesNeitherAndNoOK stands for a
// process that stops as the action's batch fails to commit (the first
// crash window): every commit from the action's on fails. The action did
// not happen, and no record says it did.
func TestAudit_ACrashBeforeTheActionsBatchLeavesNeitherAndNoOK(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	runID := submitted(t, c)
	b.store.InjectNext(slices.Repeat([]faultstore.Fault{faultstore.BeforeCommit}, 64)...) // the process is gone
	_, err := c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID}))
	require.Error(t, err)
	b.store.InjectNext()
	requireStatus(t, c, runID, weftv1.RunStatus_RUN_STATUS_PENDING)
	for _, r := range b.records(t) {
		require.False(t, r.Procedure == weftv1connect.RunServiceCancelRunProcedure && r.Outcome == audit.OutcomeOK,
			"a record claims a cancel that did not happen")
	}
}

// TestAudit_ACrashAfterTheActionsBatchKeepsBothItsRecordCommittedWithIt
// stands for a process that stops right after the action's batch reached
// the store (the second crash window): the acknowledgement is lost and no
// later write succeeds. The action and its record, outcome "ok", are both
// there, because they were one batch.
func TestAudit_ACrashAfterTheActionsBatchKeepsBothItsRecordCommittedWithIt(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	runID := submitted(t, c)
	b.store.InjectNext(append([]faultstore.Fault{faultstore.AfterCommit}, slices.Repeat([]faultstore.Fault{faultstore.BeforeCommit}, 64)...)...)
	_, _ = c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID}))
	b.store.InjectNext()
	requireStatus(t, c, runID, weftv1.RunStatus_RUN_STATUS_CANCELLED)
	var mine []audit.Record
	for _, r := range b.records(t) {
		if r.Procedure == weftv1connect.RunServiceCancelRunProcedure {
			mine = append(mine, r)
		}
	}
	require.Len(t, mine, 1)
	require.Equal(t, audit.OutcomeOK, mine[0].Outcome)
	require.Equal(t, "run:"+runID, mine[0].Target)
}

// TestAudit_AnUnknownOutcomeThatCommittedKeepsItsOKRecord: the action's
// batch commits but its answer is lost, the engine retries and finds the
// action done; the record the batch carried stays, "ok", and the call's
// answer does not add a second.
func TestAudit_AnUnknownOutcomeThatCommittedKeepsItsOKRecord(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	runID := submitted(t, c)
	b.store.InjectNext(faultstore.AfterCommit)
	_, _ = c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID}))
	requireStatus(t, c, runID, weftv1.RunStatus_RUN_STATUS_CANCELLED)
	var mine []audit.Record
	for _, r := range b.records(t) {
		if r.Procedure == weftv1connect.RunServiceCancelRunProcedure {
			mine = append(mine, r)
		}
	}
	require.Len(t, mine, 1)
	require.Equal(t, audit.OutcomeOK, mine[0].Outcome)
}

// TestAudit_ACallRefusedByTheRulesIsRecordedWithItsFault: a call that
// commits no action is recorded after it answers, with its outcome.
func TestAudit_ACallRefusedByTheRulesIsRecordedWithItsFault(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	_, err := c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: "no-such-run"}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))
	recs := b.records(t)
	require.Len(t, recs, 1)
	require.Equal(t, "not_found", recs[0].Outcome)
}

func submitted(t *testing.T, c apitest.Clients) string {
	t.Helper()
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
	require.NoError(t, err)
	return res.Msg.GetRun().GetRunId()
}

func requireStatus(t *testing.T, c apitest.Clients, runID string, want weftv1.RunStatus) {
	t.Helper()
	got, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
	require.NoError(t, err)
	require.Equal(t, want, got.Msg.GetRun().GetStatus())
}

func TestAudit_OnlyAnAdminReadsTheLogAndFiltersApply(t *testing.T) {
	t.Parallel()
	b := auditSetup(t)
	callAs(t, b.url, wiretest.ConnectJSON, weftv1connect.RunServiceDeleteRunProcedure, roleToken("viewer"))
	callAs(t, b.url, wiretest.ConnectJSON, weftv1connect.RunServiceCancelRunProcedure, roleToken("operator"))

	viewer := weftv1connect.NewAuditServiceClient(apitest.HTTPClient(), b.url, apitest.WithBearer(apitest.Protocols[2], roleToken("viewer")).Options...)
	_, err := viewer.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{}))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))
	require.ErrorContains(t, err, `"audit.read"`)

	admin := weftv1connect.NewAuditServiceClient(apitest.HTTPClient(), b.url, apitest.WithBearer(apitest.Protocols[2], roleToken("admin")).Options...)
	res, err := admin.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{Outcome: "permission_denied"}))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetEvents(), 1)
	e := res.Msg.GetEvents()[0]
	require.Equal(t, "viewer", e.GetPrincipal())
	require.Equal(t, "runs.delete", e.GetPermission())
	require.Equal(t, weftv1connect.RunServiceDeleteRunProcedure, e.GetProcedure())

	res, err = admin.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{PageSize: 1}))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetEvents(), 1)
	require.Equal(t, "operator", res.Msg.GetEvents()[0].GetPrincipal(), "newest first")
	next, err := admin.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{PageSize: 1, PageToken: res.Msg.GetNextPageToken()}))
	require.NoError(t, err)
	require.Equal(t, "viewer", next.Msg.GetEvents()[0].GetPrincipal())

	_, err = admin.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{PageToken: "not-hex"}))
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
	require.True(t, strings.HasPrefix(connect.NewError(connect.CodeOf(err), err).Message(), "invalid_argument") || err != nil)
}

// ridingCheck is a store that fails its test when a call that carries an
// audit record commits a change before its record, or without the record
// in the same batch.
type ridingCheck struct {
	store.Store
	mu       sync.Mutex
	unrode   []string
	carrying int
}

// bookkeeping are the prefixes a call writes that are not its action: a
// poll's poller record.
var bookkeeping = []keyspace.Prefix{keyspace.Poller}

func (s *ridingCheck) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if r, ok := store.RiderOf(ctx).(*audit.Rider); ok && !r.Committed() {
		action, carries := false, false
		for _, op := range b.Ops {
			switch {
			case bytes.HasPrefix(op.Key, keyspace.Audit.KeyPrefix()):
				carries = true
			case !slices.ContainsFunc(bookkeeping, func(p keyspace.Prefix) bool { return bytes.HasPrefix(op.Key, p.KeyPrefix()) }):
				action = true
			}
		}
		s.mu.Lock()
		if action && !carries {
			s.unrode = append(s.unrode, string(b.Ops[0].Key))
		}
		if action && carries {
			s.carrying++
		}
		s.mu.Unlock()
	}
	return s.Store.Commit(ctx, b)
}

// TestAudit_EveryActionOfTheAPISuiteCommitsWithItsRecord runs the whole
// API suite with the audit log on and checks every batch a mutating call
// commits: each one that changes anything carries the call's record.
func TestAudit_EveryActionOfTheAPISuiteCommitsWithItsRecord(t *testing.T) {
	t.Parallel()
	mem := memstore.New(memstore.Config{})
	t.Cleanup(func() { _ = mem.Close() })
	check := &ridingCheck{Store: mem}
	eng := loop.Engine(t, engine.Config{Store: check})
	sch, err := schedule.New(schedule.Config{Store: check, Runs: eng})
	require.NoError(t, err)
	cfg := Config{}.WithEngine(eng).WithSchedules(sch).WithViews(view.New(check))
	cfg.Audit = audit.New(check, nil)
	url := testServer(t, cfg)
	apitest.Exercise(t, url)
	schedules := weftv1connect.NewScheduleServiceClient(apitest.HTTPClient(), url)
	ctx := context.Background()
	_, err = schedules.CreateSchedule(ctx, connect.NewRequest(&weftv1.CreateScheduleRequest{ScheduleId: "nightly",
		Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_Cron{Cron: "0 2 * * *"}}, Definition: scheduleDefinition()}))
	require.NoError(t, err)
	_, err = schedules.PauseSchedule(ctx, connect.NewRequest(&weftv1.PauseScheduleRequest{ScheduleId: "nightly"}))
	require.NoError(t, err)
	_, err = schedules.TriggerSchedule(ctx, connect.NewRequest(&weftv1.TriggerScheduleRequest{ScheduleId: "nightly"}))
	require.NoError(t, err)
	_, err = schedules.DeleteSchedule(ctx, connect.NewRequest(&weftv1.DeleteScheduleRequest{ScheduleId: "nightly"}))
	require.NoError(t, err)
	require.Empty(t, check.unrode, "batches of an audited call without its record (first key of each)")
	require.Positive(t, check.carrying)
}
