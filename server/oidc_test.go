package server

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/oidctest"
)

// oidcServer serves an engine whose callers authenticate with the issuer's
// tokens or the static tokens of authConfig.
func oidcServer(t *testing.T, iss *oidctest.Issuer) string {
	t.Helper()
	v, err := NewOIDCVerifier(context.Background(), OIDCConfig{Issuer: iss.URL(), Audience: "weft-console"})
	require.NoError(t, err)
	cfg := authConfig(t)
	cfg.OIDC = v
	return testServer(t, cfg)
}

func submitAs(t *testing.T, url string, p apitest.Protocol, token string) (*weftv1.Run, error) {
	t.Helper()
	c := apitest.NewClients(url, apitest.WithBearer(p, token))
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
	if err != nil {
		return nil, err
	}
	return res.Msg.GetRun(), nil
}

func TestOIDC_ATokenOfTheIssuerAuthenticatesAsItsClaimsSay(t *testing.T) {
	t.Parallel()
	iss := oidctest.NewIssuer(t)
	key := iss.NewKey("k1", true)
	url := oidcServer(t, iss)
	for _, p := range twoProtocols {
		run, err := submitAs(t, url, p, iss.Sign(key, iss.Claims("carol@example.com", "submitter")))
		require.NoError(t, err, p.Name)
		require.Equal(t, "acme", run.GetTenantId())
		require.Equal(t, "carol@example.com", run.GetSubmittedBy())

		// A viewer's token authenticates, but its role does not submit.
		_, err = submitAs(t, url, p, iss.Sign(key, iss.Claims("dave", "viewer")))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), p.Name)
		require.ErrorContains(t, err, `"runs.submit"`)
		// A token naming no role is granted nothing.
		_, err = submitAs(t, url, p, iss.Sign(key, iss.Claims("erin")))
		require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), p.Name)
	}
	// Static tokens keep working beside OIDC.
	_, err := submitAs(t, url, apitest.Protocols[0], tokenAcme)
	require.NoError(t, err)
	// And over JSON-RPC.
	res := apitest.CallJSONRPC(t, url, 1, "weft.v1.RunService/ListRuns", map[string]any{},
		http.Header{"Authorization": {"Bearer " + iss.Sign(key, iss.Claims("carol@example.com", "viewer"))}})
	require.Nil(t, res.Error)
}

func TestOIDC_KeyRotationMidTestIsFollowed(t *testing.T) {
	t.Parallel()
	iss := oidctest.NewIssuer(t)
	old := iss.NewKey("k1", true)
	url := oidcServer(t, iss)
	_, err := submitAs(t, url, apitest.Protocols[0], iss.Sign(old, iss.Claims("carol", "submitter")))
	require.NoError(t, err)

	// The provider rotates: a new key is published and the old one retired.
	next := iss.NewKey("k2", true)
	iss.RetireAllBut("k2")
	_, err = submitAs(t, url, apitest.Protocols[0], iss.Sign(next, iss.Claims("carol", "submitter")))
	require.NoError(t, err, "a token signed with the new key must be accepted")
	_, err = submitAs(t, url, apitest.Protocols[0], iss.Sign(old, iss.Claims("carol", "submitter")))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "a token of the retired key must be refused")
}

// TestOIDC_BadTokensAreRefusedWithoutQuotingThem refuses, each with
// UNAUTHENTICATED and a message that never quotes the token: expired, for
// another audience, from another issuer, unsigned (alg none), tampered,
// signed with a key the issuer never published, and missing the tenant.
func TestOIDC_BadTokensAreRefusedWithoutQuotingThem(t *testing.T) {
	t.Parallel()
	iss := oidctest.NewIssuer(t)
	key := iss.NewKey("k1", true)
	rogue := iss.NewKey("k1", false) // same kid, never published
	url := oidcServer(t, iss)
	with := func(change func(map[string]any)) map[string]any {
		c := iss.Claims("mallory", "admin")
		change(c)
		return c
	}
	good := iss.Sign(key, iss.Claims("mallory", "admin"))
	parts := strings.Split(good, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"mallory"`, `"root!!!"`, 1))) + "." + parts[2]
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."

	cases := map[string]struct{ token, says string }{
		"expired":        {iss.Sign(key, with(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), "expired"},
		"wrong audience": {iss.Sign(key, with(func(c map[string]any) { c["aud"] = "another-app" })), "audience"},
		"wrong issuer":   {iss.Sign(key, with(func(c map[string]any) { c["iss"] = "https://evil.example" })), "issued by a different provider"},
		"alg none":       {none, "invalid OIDC token"},
		"tampered":       {tampered, "invalid OIDC token"},
		"unknown key":    {iss.Sign(rogue, iss.Claims("mallory", "admin")), "invalid OIDC token"},
		"no tenant":      {iss.Sign(key, with(func(c map[string]any) { delete(c, "weft_tenant") })), `no "weft_tenant" claim`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, p := range twoProtocols {
				_, err := submitAs(t, url, p, tc.token)
				require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%s over %s: %v", name, p.Name, err)
				require.ErrorContains(t, err, tc.says)
				require.NotContains(t, err.Error(), tc.token[:20])
			}
		})
	}
	_, err = submitAs(t, url, apitest.Protocols[0], good)
	require.NoError(t, err, "the untampered token is good")
}

func TestNewOIDCVerifier_RefusesAMissingAudienceAndAnUnreachableIssuer(t *testing.T) {
	t.Parallel()
	_, err := NewOIDCVerifier(context.Background(), OIDCConfig{Issuer: "https://id.example"})
	require.ErrorContains(t, err, "OIDC audience is empty")
	_, err = NewOIDCVerifier(context.Background(), OIDCConfig{Issuer: "http://127.0.0.1:1", Audience: "a"})
	require.ErrorContains(t, err, "OIDC discovery of http://127.0.0.1:1")
	_, err = NewOIDCVerifier(context.Background(), OIDCConfig{Issuer: "x", Audience: "a", ClockSkew: time.Hour})
	require.ErrorContains(t, err, "OIDC clock skew must be from 0 to 5m0s, got 1h0m0s")
}
