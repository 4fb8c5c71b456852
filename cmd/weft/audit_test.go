package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/server"
)

const (
	adminToken  = "cli-audit-admin-token-0123456789"
	viewerToken = "cli-audit-viewer-token-012345678"
)

// auditWeftd serves an engine with an admin and a viewer token and an audit
// log, and answers its URL.
func auditWeftd(t *testing.T) string {
	t.Helper()
	tokens, err := server.NewTokenSet(
		server.TokenSpec{Token: adminToken, Tenant: "acme", Principal: "root", Roles: []string{"admin"}},
		server.TokenSpec{Token: viewerToken, Tenant: "acme", Principal: "vic", Roles: []string{"viewer"}})
	require.NoError(t, err)
	return testkit.Start(t, testkit.Options{Server: func(s *testkit.Server, c server.Config) server.Config {
		c.Tokens, c.Audit = tokens, audit.New(s.Store, nil)
		return c
	}}).URL
}

func TestCLI_AuditListsWhoDidWhatAndAViewerMayNot(t *testing.T) {
	t.Parallel()
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
