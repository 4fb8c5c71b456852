package main

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit"
)

func TestWeftd_KeepsAnAuditLogWhenCallersAuthenticate(t *testing.T) {
	t.Parallel()
	d := startWeftdIn(t, t.TempDir(), "--auth-tokens", writeTokens(t))
	require.Contains(t, d.Logs(), `"msg":"weftd keeps an audit log of every mutating call"`)
	p := apitest.WithBearer(apitest.Protocols[0], "tls-test-token-0123456789")
	c := apitest.NewClients(d.URL, p)
	_, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}}))
	require.NoError(t, err)
	audit := weftv1connect.NewAuditServiceClient(apitest.HTTPClient(), d.URL, p.Options...)
	res, err := audit.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{}))
	require.NoError(t, err)
	require.Len(t, res.Msg.GetEvents(), 1)
	require.Equal(t, "ops", res.Msg.GetEvents()[0].GetPrincipal())
	require.Equal(t, "plan:p", res.Msg.GetEvents()[0].GetTarget())
	d.Stop(t)
}

func TestWeftd_OpenOnLoopbackKeepsNoAuditLogUnlessAsked(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	require.Contains(t, d.Logs(), `"msg":"weftd keeps no audit log"`)
	audit := weftv1connect.NewAuditServiceClient(apitest.HTTPClient(), d.URL)
	_, err := audit.ListAuditEvents(context.Background(), connect.NewRequest(&weftv1.ListAuditEventsRequest{}))
	require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err))
	require.ErrorContains(t, err, "keeps no audit log")
	out := runWeftdToExit(t, nil, "--audit", "sometimes", "--data-dir", t.TempDir())
	require.Contains(t, out, `audit must be auto, on or off, got "sometimes"`)
}
