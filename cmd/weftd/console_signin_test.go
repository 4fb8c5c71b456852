package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/oidctest"
)

// consoleSignInE2E is what console/test/signin.ts reads.
type consoleSignInE2E struct {
	URL            string `json:"url"`
	ProviderURL    string `json:"providerURL"`
	Run            string `json:"run"`
	OperatorToken  string `json:"operatorToken"`
	EndSessionsURL string `json:"endSessionsURL"`
	Shots          string `json:"shots"`
}

// TestConsole_SignInThroughTheIdentityProviderInChromium starts the test's
// OpenID provider (zitadel/oidc's op), a weftd that signs the console in
// with it (authorization code + PKCE, a confidential client) and takes
// static tokens, and clicks through console/test/signin.ts: the provider's
// login page, who is signed in, a viewer's controls off with the reason and
// the server's denial, an operator's pause through a pasted token, the
// admin's audit page (filters, pages), and a session renewed before its
// token expires and ended once the provider ends the person's tokens.
func TestConsole_SignInThroughTheIdentityProviderInChromium(t *testing.T) {
	node, browser := requireConsoleTools(t)
	provider := oidctest.NewProvider(t, oidctest.ProviderConfig{ClientID: "weft-console", ClientSecret: "console-secret-0123",
		RedirectGlobs: []string{"http://127.0.0.1:*/ui/auth/callback"}, IDTokenLifetime: 24 * time.Second,
		Users: []oidctest.User{{Username: "alice", Password: "alice-pw", Tenant: "acme", Roles: []string{"admin"}},
			{Username: "vic", Password: "vic-pw", Tenant: "acme", Roles: []string{"viewer"}}}})
	dir := t.TempDir()
	secret := filepath.Join(dir, "client-secret")
	require.NoError(t, os.WriteFile(secret, []byte("console-secret-0123\n"), 0o600))
	const operator, ci = "acme-olga-operator-token-0123", "acme-ci-submitter-token-01234"
	tokens := filepath.Join(dir, "tokens.json")
	require.NoError(t, os.WriteFile(tokens, []byte(`{"tokens":[`+
		`{"token":"`+operator+`","tenant":"acme","principal":"olga","roles":["operator"]},`+
		`{"token":"`+ci+`","tenant":"acme","principal":"ci","roles":["operator"]}]}`), 0o600))
	d := startWeftdIn(t, t.TempDir(), "--auth-tokens", tokens, "--oidc-issuer", provider.URL(),
		"--oidc-audience", "weft-console", "--oidc-client-secret-file", secret)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c := client.New(d.URL, client.WithToken(ci))
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "approval", PlanVersion: "1", Actions: []*weftv1.Action{
			{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "approved"}}}}})
	require.NoError(t, err)
	runID := res.GetRun().GetRunId()
	for i := range 54 { // with the submission, 55 of ci's records: more than one page of 50
		_, err := c.SignalRun(ctx, &weftv1.SignalRunRequest{RunId: runID, SignalName: "note", SignalId: proto.String(fmt.Sprintf("note-%d", i))})
		require.NoError(t, err)
	}
	ender := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { provider.EndSessions("alice") }))
	t.Cleanup(ender.Close)

	arg, err := json.Marshal(consoleSignInE2E{URL: d.URL, ProviderURL: provider.URL(), Run: runID, OperatorToken: operator,
		EndSessionsURL: ender.URL, Shots: os.Getenv("WEFT_CONSOLE_SHOTS")})
	require.NoError(t, err)
	drive := exec.CommandContext(ctx, node, filepath.Join(repoRoot(t), "console/test-dist/signin.mjs"), string(arg))
	drive.Dir = repoRoot(t)
	drive.Env = append(os.Environ(), "CHROMIUM="+browser)
	out, err := drive.CombinedOutput()
	require.NoError(t, err, "the console sign-in test:\n%s\nweftd:\n%s", out, tail(d.Logs(), 40))
	t.Logf("%s", out)
}
