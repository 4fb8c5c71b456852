package main

import (
	"bytes"
	"context"
	"crypto/x509/pkix"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/internal/tlstest"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store/memstore"
)

// tlsWeftd serves an engine over TLS that asks for client certificates of
// clients (and accepts no bearer token), and answers its URL.
func tlsWeftd(t *testing.T, ca, clients *tlstest.CA) string {
	t.Helper()
	dir := t.TempDir()
	files := server.TLSFiles{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), ClientCA: clients.CertFile}
	ca.Server(t, "weftd").Install(t, files.Cert, files.Key)
	reloader, err := server.NewTLSReloader(files, nil)
	require.NoError(t, err)
	st := memstore.New(memstore.Config{})
	eng, err := engine.New(engine.Config{Store: st})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); eng.Run(ctx) }()
	h, err := server.New(server.Config{ClientCertificates: true}.WithEngine(eng))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, Protocols: server.TLSProtocols(), TLSConfig: reloader.ServerConfig()}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close(); cancel(); <-done; _ = st.Close() })
	return "https://" + ln.Addr().String()
}

func weftWith(env map[string]string, args ...string) result {
	var out, errOut bytes.Buffer
	code, err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return result{code: code, err: err, stdout: out.String(), stderr: errOut.String()}
}

func TestCLI_WorksOverTLSWithACustomCAAndAClientCertificate(t *testing.T) {
	t.Parallel()
	ca, clients := tlstest.NewCA(t, "server"), tlstest.NewCA(t, "clients")
	url := tlsWeftd(t, ca, clients)
	cert := clients.Client(t, "ops", pkix.Name{CommonName: "ops", Organization: []string{"acme"}, OrganizationalUnit: []string{"operator"}})
	def := writeFile(t, "w.yaml", waitsYAML)

	// Flags.
	r := weftWith(map[string]string{"WEFT_URL": url}, "--ca-cert", ca.CertFile, "--client-cert", cert.CertFile,
		"--client-key", cert.KeyFile, "submit", def)
	require.NoError(t, r.err, r.stderr)
	require.Zero(t, r.code, r.stderr)
	// The environment; health over TLS too.
	env := map[string]string{"WEFT_URL": url, "WEFT_CA_CERT": ca.CertFile, "WEFT_CLIENT_CERT": cert.CertFile, "WEFT_CLIENT_KEY": cert.KeyFile}
	r = weftWith(env, "list")
	require.NoError(t, r.err, r.stderr)
	require.Contains(t, r.stdout, "PENDING")
	r = weftWith(env, "health")
	require.NoError(t, r.err, r.stderr)
	require.Contains(t, r.stdout, "SERVING")

	// Without the CA the server's certificate is not trusted; without the
	// client certificate the caller is not authenticated.
	r = weftWith(map[string]string{"WEFT_URL": url}, "list")
	require.ErrorContains(t, r.err, "certificate")
	r = weftWith(map[string]string{"WEFT_URL": url, "WEFT_CA_CERT": ca.CertFile}, "list")
	require.ErrorContains(t, r.err, "Unauthenticated: missing credentials")
	r = weftWith(map[string]string{"WEFT_URL": url, "WEFT_CA_CERT": ca.CertFile, "WEFT_CLIENT_CERT": cert.CertFile}, "list")
	require.ErrorContains(t, r.err, "needs both its certificate file and its key file")
}
