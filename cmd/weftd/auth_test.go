package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/internal/testkit"
)

const (
	acmeToken = "acme-alice-token-0123456789"
	betaToken = "beta-bob-token-0123456789ab"
)

// runWeftdToExit runs weftd expecting it to refuse to start, and answers
// its output.
func runWeftdToExit(t *testing.T, env []string, args ...string) string {
	t.Helper()
	bin := weftdBinary(t) // built before the deadline starts: building is not what it bounds
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "weftd started instead of refusing:\n%s", out)
	require.Equal(t, 1, exit.ExitCode(), "%s", out)
	require.NotContains(t, string(out), `"msg":"weftd listening"`)
	return string(out)
}

func TestWeftd_RefusesToStartWithoutTokensOnANonLoopbackAddress(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	out := runWeftdToExit(t, nil, "--addr", "0.0.0.0:0", "--data-dir", dir)
	require.Contains(t, out, "no bearer tokens are configured and the listen address is not loopback")
	require.Contains(t, out, "--insecure-no-auth")
	_, err := os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "weftd must refuse before it opens the store")
}

func TestWeftd_InsecureNoAuthServesBeyondLoopbackAndSaysSoLoudly(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil, "--addr", "0.0.0.0:0", "--data-dir", t.TempDir(), "--insecure-no-auth", "--insecure-plaintext")
	require.Contains(t, d.Logs(), `"level":"ERROR","msg":"weftd runs WITHOUT AUTHENTICATION (--insecure-no-auth)`)
	d.Stop(t)
}

func TestWeftd_OpenOnLoopbackWarnsAtStartUp(t *testing.T) {
	t.Parallel()
	d := testkit.StartWeftd(t, nil)
	require.Contains(t, d.Logs(), `"level":"WARN","msg":"weftd runs without authentication on a loopback address`)
}

func TestWeftd_BearerTokensFromFileAndEnvAuthenticateAndIsolateTenants(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(betaToken))
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tokens":[{"token":"`+acmeToken+`","tenant":"acme","principal":"alice"}]}`), 0o600))
	d := testkit.StartWeftd(t, []string{"WEFT_AUTH_TOKENS=sha256:" + hex.EncodeToString(sum[:]) + "=beta:bob"},
		"--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--auth-tokens", file)
	require.Contains(t, d.Logs(), `"msg":"weftd authentication: bearer tokens","tokens":2`)
	require.NotContains(t, d.Logs(), "without authentication")
	apitest.ExerciseAuthentication(t, d.URL, acmeToken)
	apitest.ExerciseTenantIsolation(t, d.URL, acmeToken, betaToken)
	require.NotContains(t, d.Logs(), acmeToken, "a token must never be logged")
}

func TestWeftd_BadTokenFileRefusesToStartWithoutQuotingTheToken(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tokens":[{"token":"short-secret","tenant":"acme","principal":"alice"}]}`), 0o600))
	out := runWeftdToExit(t, nil, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--auth-tokens", file)
	require.Contains(t, out, `bearer tokens: token 1 (tenant "acme"): a token must be at least 16 bytes, got 12`)
	require.NotContains(t, out, "short-secret")
}

func TestIsLoopback_OnlyLoopbackHostsAreOpenable(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:7400": true, "[::1]:7400": true, "localhost:7400": true, "127.0.0.2:1": true,
		":7400": false, "0.0.0.0:7400": false, "[::]:7400": false, "10.1.2.3:7400": false, "bad": false,
	} {
		require.Equal(t, want, isLoopback(addr), addr)
	}
}

func TestLoadAuth_WarnsWhenAPlainTextTokenFileIsReadableByOthers(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tokens":[{"token":"`+acmeToken+`","tenant":"acme","principal":"alice"}]}`), 0o644))
	var logs strings.Builder
	tokens, err := loadAuth(options{addr: "0.0.0.0:7400", tokenFile: file}, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	require.Equal(t, 1, tokens.Len())
	require.Contains(t, logs.String(), "readable by other users")
	_, err = loadAuth(options{addr: "0.0.0.0:7400"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.ErrorIs(t, err, errOpenOnPublicAddress)
}

func TestWeftd_GrpcurlAndCurlJSONRPCWithABearerToken(t *testing.T) {
	t.Parallel()
	grpcurl := requireTool(t, "grpcurl")
	curl := requireTool(t, "curl")
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tokens":[{"token":"`+acmeToken+`","tenant":"acme","principal":"alice"}]}`), 0o600))
	d := testkit.StartWeftd(t, nil, "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--auth-tokens", file)

	require.Contains(t, runTool(t, grpcurl, "-plaintext", d.Addr, "list"), "weft.v1.RunService\n", "reflection needs no token")
	out, err := exec.Command(grpcurl, "-plaintext", "-d", `{"run_id":"run-x"}`, d.Addr, "weft.v1.RunService/GetRun").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "Code: Unauthenticated")
	out, err = exec.Command(grpcurl, "-plaintext", "-H", "authorization: Bearer "+acmeToken,
		"-d", `{"run_id":"run-x"}`, d.Addr, "weft.v1.RunService/GetRun").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "Code: NotFound", "the token is accepted; the run does not exist")

	body := runTool(t, curl, "-sS", "-X", "POST", d.URL+"/jsonrpc", "-H", "Authorization: Bearer "+acmeToken,
		"-H", "Content-Type: application/json",
		"-d", `{"jsonrpc":"2.0","id":1,"method":"weft.v1.RunService.ListRuns","params":{}}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, body)
}
