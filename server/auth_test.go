package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

const (
	tokenAcme = "acme-alice-token-0123456789"
	tokenBeta = "beta-bob-token-0123456789ab"
)

// authConfig answers an engine-backed config whose tokens are acme/alice
// (plain text) and beta/bob (as a sha256: digest).
func authConfig(t *testing.T) Config {
	t.Helper()
	sum := sha256.Sum256([]byte(tokenBeta))
	tokens, err := NewTokenSet(
		TokenSpec{Token: tokenAcme, Tenant: "acme", Principal: "alice"},
		TokenSpec{Token: "sha256:" + hex.EncodeToString(sum[:]), Tenant: "beta", Principal: "bob"})
	require.NoError(t, err)
	cfg := engineConfig(t)
	cfg.Tokens = tokens
	return cfg
}

func TestAuthentication_MissingOrUnknownTokenIsUnauthenticatedAndHealthStaysOpen(t *testing.T) {
	t.Parallel()
	apitest.ExerciseAuthentication(t, testServer(t, authConfig(t)), tokenAcme)
}

func TestTenantIsolation_ATokenOfTenantACannotReachTenantBsRuns(t *testing.T) {
	t.Parallel()
	apitest.ExerciseTenantIsolation(t, testServer(t, authConfig(t)), tokenAcme, tokenBeta)
}

func TestAuthentication_RunsAsTheTokensTenantAndPrincipal(t *testing.T) {
	t.Parallel()
	url := testServer(t, authConfig(t))
	for token, want := range map[string][2]string{tokenAcme: {"acme", "alice"}, tokenBeta: {"beta", "bob"}} {
		c := apitest.NewClients(url, apitest.WithBearer(apitest.Protocols[0], token))
		res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
			Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
		require.NoError(t, err)
		require.Equal(t, want[0], res.Msg.GetRun().GetTenantId())
		require.Equal(t, want[1], res.Msg.GetRun().GetSubmittedBy())
	}
}

func TestAuthentication_JSONRPCForwardsTheBearerToken(t *testing.T) {
	t.Parallel()
	url := testServer(t, authConfig(t))
	res := apitest.CallJSONRPC(t, url, 1, "weft.v1.RunService/ListRuns", map[string]any{}, nil)
	require.NotNil(t, res.Error)
	require.Equal(t, -32001, res.Error.Code)
	require.Equal(t, weftv1.FaultCode_FAULT_CODE_UNAUTHENTICATED, res.Fault(t).GetCode())

	res = apitest.CallJSONRPC(t, url, 2, "weft.v1.RunService/ListRuns", map[string]any{},
		http.Header{"Authorization": {"Bearer " + tokenAcme}})
	require.Nil(t, res.Error)
}

func TestAuthentication_OpenServerRunsAsDefaultAnonymous(t *testing.T) {
	t.Parallel()
	c := apitest.NewClients(testServer(t, engineConfig(t)), apitest.Protocols[0])
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
	require.NoError(t, err)
	require.Equal(t, DefaultTenant, res.Msg.GetRun().GetTenantId())
	require.Equal(t, AnonymousCaller, res.Msg.GetRun().GetSubmittedBy())
}

func TestLogLine_NamesTenantAndPrincipalButNoPayload(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	cfg := authConfig(t)
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := apitest.NewClients(testServer(t, cfg), apitest.WithBearer(apitest.Protocols[0], tokenAcme))
	_, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: "run-payload-free"}))
	require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))
	line := logs.String()
	require.Contains(t, line, `"tenant":"acme"`)
	require.Contains(t, line, `"principal":"alice"`)
	require.NotContains(t, line, tokenAcme, "the token must never be logged")
}

func TestTokenSet_LooksUpPlainAndHashedTokens(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(tokenBeta))
	set, err := NewTokenSet(TokenSpec{Token: tokenAcme, Tenant: "acme", Principal: "alice"},
		TokenSpec{Token: "sha256:" + strings.ToUpper(hex.EncodeToString(sum[:])), Tenant: "beta", Principal: "bob"})
	require.NoError(t, err)
	for token, want := range map[string]caller{tokenAcme: {tenant: "acme", principal: "alice", perms: allPerms, roles: roleStrings(DefaultRoles)}, tokenBeta: {tenant: "beta", principal: "bob", perms: allPerms, roles: roleStrings(DefaultRoles)}} {
		who, ok := set.lookup(token)
		require.True(t, ok)
		require.Equal(t, want, who)
	}
	for _, bad := range []string{"", tokenAcme + "x", tokenAcme[:len(tokenAcme)-1], "sha256:" + hex.EncodeToString(sum[:])} {
		_, ok := set.lookup(bad)
		require.False(t, ok, "%q must not authenticate", bad)
	}
}

func TestTokenSet_RefusesBadEntriesWithoutQuotingTheToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec TokenSpec
		want string
	}{
		{"Short", TokenSpec{Token: "short-secret", Tenant: "a", Principal: "p"}, "at least 16 bytes, got 12"},
		{"Space", TokenSpec{Token: "has a space in the secret", Tenant: "a", Principal: "p"}, "spaces or control characters"},
		{"BadHash", TokenSpec{Token: "sha256:abcd", Tenant: "a", Principal: "p"}, "64 hex digits"},
		{"NoTenant", TokenSpec{Token: tokenAcme, Principal: "p"}, "tenant is empty"},
		{"NoPrincipal", TokenSpec{Token: tokenAcme, Tenant: "a"}, "principal is empty"},
		{"LongTenant", TokenSpec{Token: tokenAcme, Tenant: strings.Repeat("t", 129), Principal: "p"}, "at most 128 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTokenSet(tc.spec)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), tc.spec.Token)
		})
	}
	_, err := NewTokenSet()
	require.EqualError(t, err, "no bearer tokens configured")
	_, err = NewTokenSet(TokenSpec{Token: tokenAcme, Tenant: "a", Principal: "p"}, TokenSpec{Token: tokenAcme, Tenant: "b", Principal: "q"})
	require.EqualError(t, err, `token 2 (tenant "b") is the same token as token 1`)
}

func TestParseTokenFile_ReadsTheDocumentedFormat(t *testing.T) {
	t.Parallel()
	specs, err := ParseTokenFile([]byte(`{"tokens":[
		{"token":"` + tokenAcme + `","tenant":"acme","principal":"alice"},
		{"token":"sha256:` + strings.Repeat("ab", 32) + `","tenant":"beta","principal":"ci"}]}`))
	require.NoError(t, err)
	require.Equal(t, []TokenSpec{{Token: tokenAcme, Tenant: "acme", Principal: "alice"},
		{Token: "sha256:" + strings.Repeat("ab", 32), Tenant: "beta", Principal: "ci"}}, specs)
	require.Equal(t, 1, PlainTextTokens(specs))

	_, err = ParseTokenFile([]byte(`{"tokens":[{"token":"` + tokenAcme + `","tennant":"acme"}]}`))
	require.ErrorContains(t, err, `unknown field "tennant"`)
	_, err = ParseTokenFile([]byte(`{"tokens":[{"token":"` + tokenAcme + `",`))
	require.ErrorContains(t, err, "token file:")
	require.NotContains(t, err.Error(), tokenAcme)
}

func TestParseTokenEnv_ReadsTokenEqualsTenantColonPrincipal(t *testing.T) {
	t.Parallel()
	specs, err := ParseTokenEnv(" tok==padded-0123456789=acme:alice , sha256:" + strings.Repeat("0f", 32) + "=beta:svc:worker,")
	require.NoError(t, err)
	require.Equal(t, []TokenSpec{{Token: "tok==padded-0123456789", Tenant: "acme", Principal: "alice"},
		{Token: "sha256:" + strings.Repeat("0f", 32), Tenant: "beta", Principal: "svc:worker"}}, specs)
	_, err = ParseTokenEnv("just-a-token-0123456789")
	require.EqualError(t, err, `WEFT_AUTH_TOKENS entry 1 must be "token=tenant:principal"`)
}

func TestBearerToken_ParsesTheAuthorizationHeader(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]string{
		"Bearer abc": "abc", "bearer abc": "abc", "BEARER   abc ": "abc", "Basic abc": "", "Bearer": "", "": "", "Bearer  ": "",
	} {
		got, ok := bearerToken(http.Header{"Authorization": {header}})
		require.Equal(t, want != "", ok, header)
		require.Equal(t, want, got, header)
	}
}
