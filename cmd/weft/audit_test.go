package main

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store/memstore"
)

const (
	adminToken  = "cli-audit-admin-token-0123456789"
	viewerToken = "cli-audit-viewer-token-012345678"
)

// auditWeftd serves an engine with an admin and a viewer token and an audit
// log, and answers its URL.
func auditWeftd(t *testing.T) string {
	t.Helper()
	st := memstore.New(memstore.Config{})
	eng, err := engine.New(engine.Config{Store: st})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); eng.Run(ctx) }()
	tokens, err := server.NewTokenSet(
		server.TokenSpec{Token: adminToken, Tenant: "acme", Principal: "root", Roles: []string{"admin"}},
		server.TokenSpec{Token: viewerToken, Tenant: "acme", Principal: "vic", Roles: []string{"viewer"}})
	require.NoError(t, err)
	h, err := server.New(server.Config{Tokens: tokens, Audit: audit.New(st, nil)}.WithEngine(eng))
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = server.Protocols()
	srv.Start()
	t.Cleanup(func() { srv.Close(); cancel(); <-done; _ = st.Close() })
	return srv.URL
}

func TestCLI_AuditListsWhoDidWhatAndAViewerMayNot(t *testing.T) {
	url := auditWeftd(t)
	env := map[string]string{"WEFT_URL": url}
	r := weftWith(env, "--token", viewerToken, "submit", writeFile(t, "w.yaml", waitsYAML))
	require.ErrorContains(t, r.err, `permission "runs.submit" denied`)
	r = weftWith(env, "--token", adminToken, "submit", writeFile(t, "w.yaml", waitsYAML))
	require.NoError(t, r.err, r.stderr)

	r = weftWith(env, "--token", adminToken, "audit")
	require.NoError(t, r.err, r.stderr)
	require.Contains(t, r.stdout, "TIME")
	require.Regexp(t, `root\s+token\s+/weft.v1.RunService/SubmitRun\s+plan:\S+\s+ok`, r.stdout)
	require.Regexp(t, `vic\s+token\s+/weft.v1.RunService/SubmitRun\s+plan:\S+\s+permission_denied`, r.stdout)

	r = weftWith(env, "--token", adminToken, "audit", "--outcome", "permission_denied", "-o", "json")
	require.NoError(t, r.err, r.stderr)
	require.Contains(t, r.stdout, `"principal": "vic"`)
	require.NotContains(t, r.stdout, `"principal": "root"`)

	r = weftWith(env, "--token", viewerToken, "audit")
	require.ErrorContains(t, r.err, `permission "audit.read" denied`)
}
