package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	connectcors "connectrpc.com/cors"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"github.com/rs/cors"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/batch"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/telemetry"
	"github.com/weft-dev/weft/view"
)

// Config says what the server serves and how. The zero value plus a logger is
// valid: every service then answers unimplemented.
type Config struct {
	// Logger receives one line per call and nothing of any payload.
	Logger *slog.Logger
	// Runs, Signals, Events and Workers implement the services; nil answers
	// unimplemented for that service.
	Runs    weftv1connect.RunServiceHandler
	Signals weftv1connect.SignalServiceHandler
	Events  weftv1connect.EventServiceHandler
	Workers weftv1connect.WorkerServiceHandler
	// Schedules implements ScheduleService; nil answers unimplemented.
	Schedules weftv1connect.ScheduleServiceHandler
	// Definitions implements DefinitionService (the definition registry);
	// nil answers unimplemented.
	Definitions weftv1connect.DefinitionServiceHandler
	// Views implements ViewService (the runs list's saved views); nil
	// answers unimplemented.
	Views weftv1connect.ViewServiceHandler
	// MaxRequestBytes caps a request message, compressed or not. 0: 4 MiB.
	MaxRequestBytes int64
	// CORSOrigins are the browser origins allowed to call the API; "*" allows
	// any. Empty: no CORS headers.
	CORSOrigins []string
	// Tokens authenticate callers: every RPC must carry
	// "Authorization: Bearer <token>" naming one of them, and runs as its
	// tenant and principal. Nil: every RPC runs open as DefaultTenant /
	// AnonymousCaller (weftd allows that only on a loopback address).
	// Health, reflection, /healthz, /readyz and /metrics are always open.
	Tokens *TokenSet
	// ClientCertificates lets a verified TLS client certificate authenticate
	// its caller when the request carries no bearer token: subject CN is the
	// principal, O the tenant, OUs naming roles its roles (clientcert.go).
	ClientCertificates bool
	// OIDC, when set, verifies bearer tokens an OpenID provider issued and
	// maps their claims to the caller (oidc.go); static tokens still work.
	OIDC *OIDCVerifier
	// Audit, when set, records every mutating call (audit.go) and serves
	// AuditService; nil: no audit log, and AuditService answers
	// FAILED_PRECONDITION.
	Audit *audit.Log
	// Metrics is the pipeline /metrics serves: the server creates its
	// instruments on its MeterProvider, and the process may add others (the
	// export worker's, the engine's). Nil: a pipeline of the server's own.
	Metrics *telemetry.Metrics
	// Readiness are the dependencies /readyz and gRPC health probe: while
	// one cannot be reached, weftd answers not ready with the reason. None:
	// always ready. /healthz stays liveness whatever they say.
	Readiness []ReadinessCheck
	// Tracing gives every RPC a span in the caller's trace (tracing.go).
	// Nil: tracing is off, and calls carry no cost for it.
	Tracing *telemetry.Tracing
}

// DefaultMaxRequestBytes is the request size limit when Config leaves it 0.
const DefaultMaxRequestBytes = 4 << 20

// WithDefaults answers the config with every unset field given its default.
func (c Config) WithDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.Runs == nil {
		c.Runs = weftv1connect.UnimplementedRunServiceHandler{}
	}
	if c.Signals == nil {
		c.Signals = weftv1connect.UnimplementedSignalServiceHandler{}
	}
	if c.Events == nil {
		c.Events = weftv1connect.UnimplementedEventServiceHandler{}
	}
	if c.Workers == nil {
		c.Workers = weftv1connect.UnimplementedWorkerServiceHandler{}
	}
	if c.Schedules == nil {
		c.Schedules = weftv1connect.UnimplementedScheduleServiceHandler{}
	}
	if c.Definitions == nil {
		c.Definitions = weftv1connect.UnimplementedDefinitionServiceHandler{}
	}
	if c.Views == nil {
		c.Views = weftv1connect.UnimplementedViewServiceHandler{}
	}
	return c
}

// WithEngine answers the config with every weft.v1 service served by eng.
func (c Config) WithEngine(eng *engine.Engine) Config {
	c.Runs = NewRunService(eng)
	c.Signals = NewSignalService(eng)
	c.Events = NewEventService(eng)
	c.Workers = NewWorkerService(eng)
	c.Definitions = NewDefinitionService(eng)
	return c
}

// WithBatches answers the config with RunService's batch operations served
// by b (after WithEngine).
func (c Config) WithBatches(b *batch.Batches) Config {
	if rs, ok := c.Runs.(*RunService); ok {
		rs.batches = b
	}
	return c
}

// WithViews answers the config with ViewService served over views.
func (c Config) WithViews(views *view.Views) Config {
	c.Views = NewViewService(views)
	return c
}

// WithSchedules answers the config with ScheduleService served by sch.
func (c Config) WithSchedules(sch *schedule.Scheduler) Config {
	c.Schedules = NewScheduleService(sch)
	return c
}

func (c Config) validate() error {
	if c.MaxRequestBytes < 1024 {
		return fmt.Errorf("max request bytes must be at least 1024, got %d", c.MaxRequestBytes)
	}
	return nil
}

// ServiceNames are the services the server answers, as gRPC health and
// reflection name them.
var ServiceNames = []string{
	weftv1connect.RunServiceName,
	weftv1connect.SignalServiceName,
	weftv1connect.EventServiceName,
	weftv1connect.WorkerServiceName,
	weftv1connect.ScheduleServiceName,
	weftv1connect.AuditServiceName,
	weftv1connect.IdentityServiceName,
	weftv1connect.DefinitionServiceName,
	weftv1connect.ViewServiceName,
}

// New answers the HTTP handler that serves every service, health and
// reflection on one port. Serve it with Protocols (HTTP/1.1 and h2c) so that
// Connect, gRPC and gRPC-Web all work without TLS.
func New(cfg Config) (http.Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	validator, err := protovalidate.New()
	if err != nil {
		return nil, fmt.Errorf("protovalidate: %w", err)
	}
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, err
	}
	traced, err := tracingInterceptor(cfg.Tracing)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	auth := &authInterceptor{tokens: cfg.Tokens, certs: cfg.ClientCertificates, oidc: cfg.OIDC}
	if !auth.open() {
		var now func() time.Time
		if cfg.OIDC != nil {
			now = cfg.OIDC.cfg.Now // the clock the issuer's tokens are checked on
		}
		auth.sessions = newConsoleSessions(now)
		auth.signIn = &consoleSignIn{auth: auth, sessions: auth.sessions, logger: cfg.Logger}
	}
	opts := []connect.HandlerOption{
		connect.WithCodec(protoCodec{}),
		connect.WithCodec(jsonCodec{name: "json"}),
		connect.WithCodec(jsonCodec{name: "json; charset=utf-8"}),
		// Outermost first: correlation id, faults, logs and metrics; then
		// Outermost first: tracing, correlation id, faults, logs and metrics;
		// then authentication and the permission check; then validation, so
		// an unauthenticated or unauthorised caller learns nothing of the
		// request rules.
		connect.WithInterceptors(interceptorsWithTracing(traced, &faultInterceptor{logger: cfg.Logger, metrics: m},
			auth, auditInterceptorFor(cfg),
			authorizeInterceptor{}, &validationInterceptor{rules: requestRulesOnce(), validator: validator})...),
		connect.WithReadMaxBytes(int(cfg.MaxRequestBytes)),
		boundedGzip(cfg.MaxRequestBytes),
		connect.WithRecover(recoverPanic(cfg.Logger)),
	}
	mux := http.NewServeMux()
	services := map[string]http.Handler{}
	for _, serve := range []func() (string, http.Handler){
		func() (string, http.Handler) { return weftv1connect.NewRunServiceHandler(cfg.Runs, opts...) },
		func() (string, http.Handler) { return weftv1connect.NewSignalServiceHandler(cfg.Signals, opts...) },
		func() (string, http.Handler) { return weftv1connect.NewEventServiceHandler(cfg.Events, opts...) },
		func() (string, http.Handler) { return weftv1connect.NewWorkerServiceHandler(cfg.Workers, opts...) },
		func() (string, http.Handler) { return weftv1connect.NewScheduleServiceHandler(cfg.Schedules, opts...) },
		func() (string, http.Handler) {
			return weftv1connect.NewDefinitionServiceHandler(cfg.Definitions, opts...)
		},
		func() (string, http.Handler) { return weftv1connect.NewViewServiceHandler(cfg.Views, opts...) },
		func() (string, http.Handler) {
			return weftv1connect.NewAuditServiceHandler(auditServiceFor(cfg), opts...)
		},
		func() (string, http.Handler) {
			return weftv1connect.NewIdentityServiceHandler(identityService{}, opts...)
		},
	} {
		path, h := serve()
		mux.Handle(path, h)
		services[path] = h
	}
	routes := procedureRoutes(services)
	mountOperational(mux, newReadiness(cfg.Readiness, cfg.Logger))
	mountConsole(mux)
	if auth.signIn != nil {
		mountConsoleSignIn(mux, auth.signIn)
	} else {
		mux.HandleFunc("GET "+consoleConfigPath, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]bool{"open": true})
		})
	}
	mux.Handle("GET "+MetricsPath, m.pipeline.Handler())
	// JSON-RPC forwards to the same handlers, so every call meets the same
	// interceptors and message limit as Connect.
	// Each forwarded call is a request of its own, with its own correlation id.
	mux.Handle(JSONRPCPath, newJSONRPCHandler(withTransportFaults(mux, routes, cfg.MaxRequestBytes, 0), m))
	// The outer limit bounds the raw body (a compressed bomb included) a little
	// above the message limit, which Connect enforces after decompression.
	handler := withTransportFaults(mux, routes, cfg.MaxRequestBytes, cfg.MaxRequestBytes+64<<10)
	handler = withPeerCertificate(handler)
	if len(cfg.CORSOrigins) > 0 {
		handler = withCORS(handler, cfg.CORSOrigins)
	}
	return handler, nil
}

// mountOperational adds gRPC health and /readyz (readiness: the
// dependencies can be reached), reflection and a plain /healthz (liveness).
func mountOperational(mux *http.ServeMux, ready *readiness) {
	mux.Handle(grpchealth.NewHandler(ready))
	mux.Handle("GET "+ReadyPath, ready)
	names := append(append([]string{}, ServiceNames...),
		grpchealth.HealthV1ServiceName, grpcreflect.ReflectV1ServiceName, grpcreflect.ReflectV1AlphaServiceName)
	reflector := grpcreflect.NewStaticReflector(names...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
}

// withCORS lets browsers (connect-web, and fetch against /jsonrpc) call the
// API from the given origins, with a bearer token.
func withCORS(h http.Handler, origins []string) http.Handler {
	expose := append(connectcors.ExposedHeaders(), "Retry-After", CorrelationHeader, "Www-Authenticate")
	c := cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: connectcors.AllowedMethods(),
		AllowedHeaders: append(connectcors.AllowedHeaders(), "Authorization"),
		ExposedHeaders: expose,
		MaxAge:         7200,
	})
	return c.Handler(h)
}

// recoverPanic turns a handler panic into an internal error and a log line.
func recoverPanic(logger *slog.Logger) func(context.Context, connect.Spec, http.Header, any) error {
	return func(ctx context.Context, spec connect.Spec, _ http.Header, p any) error {
		logger.LogAttrs(ctx, slog.LevelError, "handler panic",
			slog.String("procedure", spec.Procedure),
			slog.String("panic", strings.TrimSpace(fmt.Sprint(p))))
		return connect.NewError(connect.CodeInternal, errors.New("internal error"))
	}
}

// Protocols answers the protocols weftd serves on one plaintext port: HTTP/1.1
// (Connect, gRPC-Web, HTTP/JSON) and HTTP/2 without TLS (gRPC).
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// serviceDescriptor answers the descriptor of the service of that full name
// (weft.v1.RunService), from the generated code's registry.
func serviceDescriptor(name string) (protoreflect.ServiceDescriptor, bool) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, false
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	return sd, ok
}
