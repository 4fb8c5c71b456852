package main

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/oidctest"
)

func TestWeftd_OIDCTokensAuthenticateAsTheirClaimsSay(t *testing.T) {
	t.Parallel()
	iss := oidctest.NewIssuer(t)
	key := iss.NewKey("k1", true)
	d := startWeftdIn(t, t.TempDir(), "--oidc-issuer", iss.URL(), "--oidc-audience", "weft-console")
	require.Contains(t, d.Logs(), `"msg":"weftd authentication: OpenID Connect tokens"`)

	c := apitest.NewClients(d.URL, apitest.WithBearer(apitest.Protocols[2], iss.Sign(key, iss.Claims("carol", "submitter"))))
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}}))
	require.NoError(t, err)
	require.Equal(t, "carol", res.Msg.GetRun().GetSubmittedBy())
	require.Equal(t, "acme", res.Msg.GetRun().GetTenantId())

	anonymous := apitest.NewClients(d.URL, apitest.Protocols[0])
	_, err = anonymous.Runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "with an issuer configured weftd is not open")
}

func TestWeftd_OIDCAudienceWithoutIssuerIsRefused(t *testing.T) {
	t.Parallel()
	out := runWeftdToExit(t, nil, "--oidc-audience", "x", "--data-dir", t.TempDir())
	require.Contains(t, out, "--oidc-audience needs --oidc-issuer")
}
