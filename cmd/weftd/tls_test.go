package main

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/internal/tlstest"
)

func TestWeftd_RefusesPlaintextBeyondLoopbackUnlessToldAndSaysSo(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	tokens := writeTokens(t)
	out := runWeftdToExit(t, nil, "--addr", "0.0.0.0:0", "--data-dir", dir, "--auth-tokens", tokens)
	require.Contains(t, out, "the listen address is not loopback and no TLS is configured")
	require.Contains(t, out, "--insecure-plaintext")
	_, err := os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist, "weftd must refuse before it opens the store")

	d := testkit.StartWeftd(t, nil, "--addr", "0.0.0.0:0", "--data-dir", t.TempDir(), "--auth-tokens", tokens, "--insecure-plaintext")
	require.Contains(t, d.Logs(), `"level":"WARN","msg":"weftd serves PLAINTEXT beyond loopback (--insecure-plaintext)`)
	d.Stop(t)
}

func writeTokens(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tokens":[{"token":"tls-test-token-0123456789","tenant":"acme","principal":"ops","roles":["admin"]}]}`), 0o600))
	return file
}

func TestWeftd_TLSFlagsMustComeInPairs(t *testing.T) {
	t.Parallel()
	out := runWeftdToExit(t, nil, "--tls-cert", "x.pem", "--data-dir", t.TempDir())
	require.Contains(t, out, "--tls-cert and --tls-key must be given together")
	out = runWeftdToExit(t, nil, "--tls-client-ca", "ca.pem", "--data-dir", t.TempDir())
	require.Contains(t, out, "--tls-client-ca needs --tls-cert and --tls-key")
}

// TestWeftd_ServesTLSAndReloadsItsCertificateOnSIGHUP runs weftd over TLS
// with client certificates (and a watch interval too long to matter): a
// client certificate's subject is the principal, and SIGHUP serves a
// rotated certificate to new handshakes while a connection made before
// keeps serving.
func TestWeftd_ServesTLSAndReloadsItsCertificateOnSIGHUP(t *testing.T) {
	t.Parallel()
	ca, clients := tlstest.NewCA(t, "server"), tlstest.NewCA(t, "clients")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca.Server(t, "first").Install(t, certFile, keyFile)
	d := startWeftdIn(t, t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clients.CertFile,
		"--tls-watch-interval", "1h")
	url := "https://" + d.Addr
	require.Contains(t, d.Logs(), `"msg":"weftd serves TLS (1.2 and newer, HTTP/2 and HTTP/1.1)"`)

	worker := clients.Client(t, "w", pkix.Name{CommonName: "worker-9", Organization: []string{"acme"}, OrganizationalUnit: []string{"submitter"}})
	hc := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{worker.TLS}, MinVersion: tls.VersionTLS12}}}
	runs := weftv1connect.NewRunServiceClient(hc, url, connect.WithGRPC())
	res, err := runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
		Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: "x"}}}}))
	require.NoError(t, err)
	require.Equal(t, "worker-9", res.Msg.GetRun().GetSubmittedBy())
	require.Equal(t, "acme", res.Msg.GetRun().GetTenantId())

	served := servedSerial(t, d.Addr, ca)
	hup := ca.Server(t, "after-sighup")
	hup.Install(t, certFile, keyFile)
	require.NoError(t, d.Cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool { return served() == hup.Cert.SerialNumber.String() }, 30*time.Second, 20*time.Millisecond)
	_, err = runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.NoError(t, err, "the connection made before the rotation still serves")
	require.Contains(t, d.Logs(), `"msg":"SIGHUP: reloading the TLS files"`)
	d.Stop(t)
}

// servedSerial answers a function that makes a new handshake with the weftd
// at addr and answers the serial of the certificate it got.
func servedSerial(t *testing.T, addr string, ca *tlstest.CA) func() string {
	return func() string {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})
		require.NoError(t, err)
		defer func() { _ = conn.Close() }()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
}

func TestWeftd_ReloadsChangedTLSFilesWithoutASignal(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "server")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca.Server(t, "first").Install(t, certFile, keyFile)
	d := startWeftdIn(t, t.TempDir(), "--tls-cert", certFile, "--tls-key", keyFile, "--tls-watch-interval", "50ms")
	watched := ca.Server(t, "after-change")
	watched.Install(t, certFile, keyFile)
	served := servedSerial(t, d.Addr, ca)
	require.Eventually(t, func() bool { return served() == watched.Cert.SerialNumber.String() }, 30*time.Second, 20*time.Millisecond)
	require.Contains(t, d.Logs(), `"msg":"TLS certificate loaded"`)
	d.Stop(t)
}

func TestWeftd_ServesTheAPISuiteOverTLS(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "server")
	pair := ca.Server(t, "weftd")
	d := startWeftdIn(t, t.TempDir(), "--tls-cert", pair.CertFile, "--tls-key", pair.KeyFile)
	apitest.TrustCA(ca.Cert)
	apitest.Exercise(t, "https://"+d.Addr)
}
