package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/tlstest"
)

// tlsBundle is a TLS server of one test: its CA, the files it serves and
// its reloader.
type tlsBundle struct {
	ca       *tlstest.CA
	files    TLSFiles
	reloader *TLSReloader
	url      string
	addr     string
}

// serveTLS serves cfg over TLS as weftd does (http.Server.ServeTLS with the
// reloader's config and TLSProtocols) from files in a directory of the
// test, optionally asking for client certificates of clientCA.
func serveTLS(t *testing.T, cfg Config, clientCA *tlstest.CA) *tlsBundle {
	t.Helper()
	ca := tlstest.NewCA(t, "server")
	dir := t.TempDir()
	b := &tlsBundle{ca: ca, files: TLSFiles{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key")}}
	ca.Server(t, "first").Install(t, b.files.Cert, b.files.Key)
	if clientCA != nil {
		b.files.ClientCA = clientCA.CertFile
	}
	var err error
	b.reloader, err = NewTLSReloader(b.files, nil)
	require.NoError(t, err)
	h, err := New(cfg)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, Protocols: TLSProtocols(), TLSConfig: b.reloader.ServerConfig()}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	b.addr = ln.Addr().String()
	b.url = "https://" + b.addr
	return b
}

// client answers an HTTP client trusting the bundle's CA, presenting certs.
func (b *tlsBundle) client(keepAlive bool, certs ...tls.Certificate) *http.Client {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p, DisableKeepAlives: !keepAlive,
		TLSClientConfig: &tls.Config{RootCAs: b.ca.Pool(), Certificates: certs, MinVersion: tls.VersionTLS12}}}
}

// servedSerial answers the serial of the certificate a new handshake gets.
func (b *tlsBundle) servedSerial(t *testing.T) string {
	t.Helper()
	conn, err := tls.Dial("tcp", b.addr, &tls.Config{RootCAs: b.ca.Pool(), MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func TestTLS_ServesTheWholeAPISuiteOnEveryProtocol(t *testing.T) {
	t.Parallel()
	b := serveTLS(t, engineConfig(t), nil)
	apitest.TrustCA(b.ca.Cert)
	apitest.Exercise(t, b.url)
}

func TestTLS_GRPCRunsOverHTTP2AndOldTLSIsRefused(t *testing.T) {
	t.Parallel()
	b := serveTLS(t, engineConfig(t), nil)
	var proto atomic.Value
	hc := b.client(true)
	hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		res, err := b.client(true).Transport.RoundTrip(r)
		if err == nil {
			proto.Store(res.Proto)
		}
		return res, err
	})
	runs := weftv1connect.NewRunServiceClient(hc, b.url, connect.WithGRPC())
	_, err := runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.NoError(t, err)
	require.Equal(t, "HTTP/2.0", proto.Load())

	_, err = tls.Dial("tcp", b.addr, &tls.Config{RootCAs: b.ca.Pool(), MaxVersion: tls.VersionTLS11})
	require.Error(t, err, "a TLS 1.1 handshake must fail")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTLS_PlaintextClientIsRefused(t *testing.T) {
	t.Parallel()
	b := serveTLS(t, engineConfig(t), nil)
	plain := "http://" + b.addr
	for _, p := range apitest.Protocols {
		runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), plain, p.Options...)
		_, err := runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
			Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
		require.Error(t, err, "a plaintext %s call must fail", p.Name)
	}
	runs := weftv1connect.NewRunServiceClient(b.client(true), b.url)
	res, err := runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.NoError(t, err)
	require.Empty(t, res.Msg.GetRuns(), "no plaintext call reached the engine")
}

// TestTLS_RotationUnderLoadFailsNoCall rotates the server certificate five
// times (as SIGHUP does: Reload) while clients call without pause, half of
// them opening a new connection per call, half on a kept HTTP/2 connection.
// No call fails, and each new handshake after a rotation sees the new
// certificate.
func TestTLS_RotationUnderLoadFailsNoCall(t *testing.T) {
	t.Parallel()
	b := serveTLS(t, engineConfig(t), nil)
	ctx, stop := context.WithCancel(context.Background())
	var calls, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i := range 6 {
		runs := weftv1connect.NewRunServiceClient(b.client(i%2 == 0), b.url, connect.WithGRPC())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, err := runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
				calls.Add(1)
				if err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	for i := range 5 {
		before := calls.Load()
		next := b.ca.Server(t, "rotated-"+string(rune('a'+i)))
		next.Install(t, b.files.Cert, b.files.Key)
		changed, err := b.reloader.Reload()
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, next.Cert.SerialNumber.String(), b.servedSerial(t))
		for calls.Load() < before+200 { // calls keep succeeding across the swap
			time.Sleep(time.Millisecond)
		}
	}
	stop()
	wg.Wait()
	require.Positive(t, calls.Load())
	require.Zero(t, failures.Load(), "a call failed during rotation: %v", firstErr.Load())
	t.Logf("%d calls across 5 rotations, none failed", calls.Load())
}

func TestTLS_ChangedFilesAreReloadedWithoutASignal(t *testing.T) {
	t.Parallel()
	b := serveTLS(t, engineConfig(t), nil)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.reloader.Watch(ctx, 20*time.Millisecond)
	next := b.ca.Server(t, "watched")
	next.Install(t, b.files.Cert, b.files.Key)
	require.Eventually(t, func() bool { return b.servedSerial(t) == next.Cert.SerialNumber.String() },
		30*time.Second, 20*time.Millisecond)
}

func TestTLS_BadNewFilesKeepThePreviousCertificate(t *testing.T) {
	t.Parallel()
	b := serveTLS(t, engineConfig(t), nil)
	served := b.servedSerial(t)
	other := b.ca.Server(t, "mismatch")
	// A new key without its certificate (a rotation caught half-way).
	other.Install(t, filepath.Join(t.TempDir(), "unused.crt"), b.files.Key)
	_, err := b.reloader.Reload()
	require.ErrorContains(t, err, "TLS certificate and key")
	require.Equal(t, served, b.servedSerial(t))
}

func TestMutualTLS_CertificateSubjectIsThePrincipal(t *testing.T) {
	t.Parallel()
	clients := tlstest.NewCA(t, "clients")
	cfg := authConfig(t)
	cfg.ClientCertificates = true
	b := serveTLS(t, cfg, clients)
	submitter := clients.Client(t, "ops", pkix.Name{CommonName: "ops-7", Organization: []string{"acme"}, OrganizationalUnit: []string{"team-x", "submitter"}})
	worker := clients.Client(t, "worker", pkix.Name{CommonName: "worker-3", Organization: []string{"acme"}})
	noTenant := clients.Client(t, "no-tenant", pkix.Name{CommonName: "lost"})

	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			runs := weftv1connect.NewRunServiceClient(b.client(true, submitter.TLS), b.url, p.Options...)
			res, err := runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
				Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
			require.NoError(t, err)
			require.Equal(t, "acme", res.Msg.GetRun().GetTenantId())
			require.Equal(t, "ops-7", res.Msg.GetRun().GetSubmittedBy())

			// A certificate naming no role is a worker's: it may poll, not submit.
			asWorker := weftv1connect.NewRunServiceClient(b.client(true, worker.TLS), b.url, p.Options...)
			_, err = asWorker.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
				Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
			require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err))
			require.ErrorContains(t, err, `"runs.submit"`)

			lost := weftv1connect.NewRunServiceClient(b.client(true, noTenant.TLS), b.url, p.Options...)
			_, err = lost.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
			require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
			require.ErrorContains(t, err, "no O (the tenant)")

			// A bearer token still works beside client certificates.
			tokenRuns := weftv1connect.NewRunServiceClient(b.client(true), b.url, apitest.WithBearer(p, tokenAcme).Options...)
			_, err = tokenRuns.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
			require.NoError(t, err)

			anonymous := weftv1connect.NewRunServiceClient(b.client(true), b.url, p.Options...)
			_, err = anonymous.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
			require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
		})
	}
}

func TestMutualTLS_ACertificateOfAnotherCAFailsTheHandshake(t *testing.T) {
	t.Parallel()
	clients := tlstest.NewCA(t, "clients")
	stranger := tlstest.NewCA(t, "stranger").Client(t, "x", pkix.Name{CommonName: "x", Organization: []string{"acme"}})
	cfg := authConfig(t)
	cfg.ClientCertificates = true
	b := serveTLS(t, cfg, clients)
	hc := b.client(false)
	// Present the certificate whatever CAs the server asks for (Go's client
	// would otherwise send none).
	hc.Transport.(*http.Transport).TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return &stranger.TLS, nil
	}
	runs := weftv1connect.NewRunServiceClient(hc, b.url)
	_, err := runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.Error(t, err)
	var unknown x509.UnknownAuthorityError
	require.False(t, errors.As(err, &unknown), "the server, not the client, refuses: %v", err)
	_, answered := FaultOf(err)
	require.False(t, answered, "the handshake, not a handler, refuses: %v", err)
}

func TestNewTLSReloader_RefusesAMissingKeyNamingIt(t *testing.T) {
	t.Parallel()
	_, err := NewTLSReloader(TLSFiles{Cert: "x"}, nil)
	require.EqualError(t, err, "TLS needs both a certificate file and a key file")
	_, err = NewTLSReloader(TLSFiles{Cert: filepath.Join(t.TempDir(), "none.crt"), Key: "k"}, nil)
	require.ErrorContains(t, err, "TLS certificate:")
}
