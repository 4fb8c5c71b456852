package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/server/wiretest"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
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
	cfg := engineConfig(t)
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

func TestAudit_ACallWhoseRecordCannotBeWrittenDoesNotRun(t *testing.T) {
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	b.store.InjectNext(faultstore.BeforeCommit)
	_, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
	require.Equal(t, connect.CodeUnavailable, connect.CodeOf(err))
	list, err := c.Runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.NoError(t, err)
	require.Empty(t, list.Msg.GetRuns(), "no action without its record")
}

// TestAudit_AnOutcomeLostAfterTheActionLeavesThePendingRecord stands for a
// crash between the action and its outcome: the record written before the
// action stays, pending, and names the run the action made.
func TestAudit_AnOutcomeLostAfterTheActionLeavesThePendingRecord(t *testing.T) {
	b := auditSetup(t)
	c := apitest.NewClients(b.url, apitest.WithBearer(apitest.Protocols[0], roleToken("operator")))
	submitted, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
	require.NoError(t, err)
	runID := submitted.Msg.GetRun().GetRunId()
	b.store.InjectNext(faultstore.None, faultstore.BeforeCommit) // the record, then its outcome fails
	_, err = c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: runID}))
	require.NoError(t, err, "the action ran")
	recs := b.records(t)
	require.Equal(t, "run:"+runID, recs[0].Target)
	require.Equal(t, audit.OutcomePending, recs[0].Outcome)
}

func TestAudit_OnlyAnAdminReadsTheLogAndFiltersApply(t *testing.T) {
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
