package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// Protocol is the wire protocol the client speaks.
type Protocol int

// The protocols weftd serves on one port.
const (
	// ProtocolConnectProto is Connect with binary Protobuf (the default).
	ProtocolConnectProto Protocol = iota
	// ProtocolConnectJSON is Connect with Protobuf JSON.
	ProtocolConnectJSON
	// ProtocolGRPC is gRPC (HTTP/2; h2c on plaintext URLs).
	ProtocolGRPC
	// ProtocolGRPCWeb is gRPC-Web.
	ProtocolGRPCWeb
)

// String names the protocol.
func (p Protocol) String() string {
	switch p {
	case ProtocolConnectJSON:
		return "connect+json"
	case ProtocolGRPC:
		return "grpc"
	case ProtocolGRPCWeb:
		return "grpc-web"
	default:
		return "connect+proto"
	}
}

// Client calls one weftd. It is safe for concurrent use.
type Client struct {
	runs    weftv1connect.RunServiceClient
	signals weftv1connect.SignalServiceClient
	events  weftv1connect.EventServiceClient
	workers weftv1connect.WorkerServiceClient
	sched   weftv1connect.ScheduleServiceClient
	audit   weftv1connect.AuditServiceClient
	defs    weftv1connect.DefinitionServiceClient
	views   weftv1connect.ViewServiceClient
	retry   RetryPolicy
	newID   func() string
}

// config is what the options set.
type config struct {
	httpClient *http.Client
	protocol   Protocol
	token      string
	headers    http.Header
	retry      RetryPolicy
	newID      func() string
	gzip       bool
	tls        *tls.Config // the default client's TLS (tls.go)
}

// Option configures a Client.
type Option func(*config)

// WithHTTPClient sets the HTTP client. The default speaks HTTP/1.1 and
// unencrypted HTTP/2 (h2c), so gRPC works against a plaintext weftd, applies
// no overall timeout (watches and long polls are long), and sends each
// request's header and body in one write (oneWrite); a client set here is
// used as it is.
func WithHTTPClient(c *http.Client) Option { return func(cfg *config) { cfg.httpClient = c } }

// WithProtocol sets the wire protocol (default ProtocolConnectProto).
func WithProtocol(p Protocol) Option { return func(cfg *config) { cfg.protocol = p } }

// WithToken sends "Authorization: Bearer <token>" on every call.
func WithToken(token string) Option { return func(cfg *config) { cfg.token = token } }

// WithHeader sends a header on every call (e.g. a tracing or routing header
// of the caller's own).
func WithHeader(key, value string) Option {
	return func(cfg *config) { cfg.headers.Add(key, value) }
}

// WithGzip asks weftd to gzip its larger answers (1 KiB or more): a run's
// snapshot, a page of runs or events. Without it answers come uncompressed,
// which costs both ends less CPU than the bytes it saves on loopback or a
// LAN; it pays only over a slow link.
func WithGzip() Option { return func(cfg *config) { cfg.gzip = true } }

// WithRetry sets the retry policy of calls that are safe to repeat
// (default DefaultRetryPolicy; RetryPolicy{MaxAttempts: 1} disables retries).
func WithRetry(p RetryPolicy) Option { return func(cfg *config) { cfg.retry = p } }

// WithIDGenerator replaces the UUID generator used for signal ids (tests).
func WithIDGenerator(newID func() string) Option { return func(cfg *config) { cfg.newID = newID } }

// New answers a client of the weftd at baseURL, e.g. http://127.0.0.1:7400.
func New(baseURL string, opts ...Option) *Client {
	cfg := config{headers: http.Header{}, retry: DefaultRetryPolicy, newID: newUUID}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.httpClient == nil {
		cfg.httpClient = defaultHTTPClient(cfg.tls)
	}
	copts := []connect.ClientOption{connect.WithInterceptors(&headerInterceptor{token: cfg.token, headers: cfg.headers})}
	if !cfg.gzip {
		copts = append(copts, connect.WithAcceptCompression("gzip", nil, nil))
	}
	switch cfg.protocol {
	case ProtocolConnectJSON:
		copts = append(copts, connect.WithProtoJSON())
	case ProtocolGRPC:
		copts = append(copts, connect.WithGRPC())
	case ProtocolGRPCWeb:
		copts = append(copts, connect.WithGRPCWeb())
	}
	base := strings.TrimRight(baseURL, "/")
	return &Client{
		runs:    weftv1connect.NewRunServiceClient(cfg.httpClient, base, copts...),
		signals: weftv1connect.NewSignalServiceClient(cfg.httpClient, base, copts...),
		events:  weftv1connect.NewEventServiceClient(cfg.httpClient, base, copts...),
		workers: weftv1connect.NewWorkerServiceClient(cfg.httpClient, base, copts...),
		sched:   weftv1connect.NewScheduleServiceClient(cfg.httpClient, base, copts...),
		audit:   weftv1connect.NewAuditServiceClient(cfg.httpClient, base, copts...),
		defs:    weftv1connect.NewDefinitionServiceClient(cfg.httpClient, base, copts...),
		views:   weftv1connect.NewViewServiceClient(cfg.httpClient, base, copts...),
		retry:   cfg.retry.withDefaults(),
		newID:   cfg.newID,
	}
}

func defaultHTTPClient(tlsConfig *tls.Config) *http.Client {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true) // over TLS, by ALPN
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: oneWrite{next: &http.Transport{
		Protocols:           p,
		TLSClientConfig:     tlsConfig,
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}}}
}

// maxOneWriteBody is the largest request body oneWrite copies.
const maxOneWriteBody = 64 << 10

// oneWrite is the default client's transport: it hands net/http each request
// body of a known length up to maxOneWriteBody as an in-memory reader, so that
// an HTTP/1.1 request's header and body leave in one write. net/http flushes
// the header on its own before any other body (it cannot know the body is
// ready), which costs a second write per call, and weftd a second read.
type oneWrite struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper. It does not modify req: it sends a
// shallow copy carrying the body's bytes.
func (t oneWrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 || req.ContentLength > maxOneWriteBody {
		return t.next.RoundTrip(req)
	}
	buf := make([]byte, req.ContentLength)
	_, err := io.ReadFull(req.Body, buf)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	out := new(http.Request)
	*out = *req
	out.Body = io.NopCloser(bytes.NewReader(buf))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	return t.next.RoundTrip(out)
}

// CloseIdleConnections closes the wrapped transport's idle connections (what
// http.Client.CloseIdleConnections asks of a transport).
func (t oneWrite) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// headerInterceptor adds the bearer token and fixed headers to every call.
type headerInterceptor struct {
	token   string
	headers http.Header
}

func (h *headerInterceptor) set(dst http.Header) {
	for k, vs := range h.headers {
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
	if h.token != "" {
		dst.Set("Authorization", "Bearer "+h.token)
	}
}

// WrapUnary implements connect.Interceptor.
func (h *headerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		h.set(req.Header())
		injectTraceContext(ctx, req.Header())
		return next(ctx, req)
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (h *headerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		h.set(conn.RequestHeader())
		injectTraceContext(ctx, conn.RequestHeader())
		return conn
	}
}

// WrapStreamingHandler implements connect.Interceptor; clients do not handle streams.
func (h *headerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
