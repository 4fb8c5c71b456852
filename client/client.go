package client

import (
	"context"
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
}

// Option configures a Client.
type Option func(*config)

// WithHTTPClient sets the HTTP client. The default speaks HTTP/1.1 and
// unencrypted HTTP/2 (h2c), so gRPC works against a plaintext weftd, and
// applies no overall timeout (watches and long polls are long).
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
		cfg.httpClient = defaultHTTPClient()
	}
	copts := []connect.ClientOption{connect.WithInterceptors(&headerInterceptor{token: cfg.token, headers: cfg.headers})}
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
		retry:   cfg.retry.withDefaults(),
		newID:   cfg.newID,
	}
}

func defaultHTTPClient() *http.Client {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{
		Protocols:           p,
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
	}}
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
		return next(ctx, req)
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (h *headerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		h.set(conn.RequestHeader())
		return conn
	}
}

// WrapStreamingHandler implements connect.Interceptor; clients do not handle streams.
func (h *headerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
