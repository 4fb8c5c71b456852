// Command weftd is the Weft server. With no flags it serves every weft.v1
// service over Connect, gRPC, gRPC-Web and HTTP/JSON on 127.0.0.1:7400, on the
// embedded Pebble store in ./.weft. It shuts down cleanly on SIGINT or
// SIGTERM: it stops serving, then stops the engine, then closes the store.
//
// Flags override environment variables, which override defaults:
//
//	--addr        WEFT_ADDR         listen address (default 127.0.0.1:7400)
//	--data-dir    WEFT_DATA_DIR     embedded store directory, created if missing (default .weft)
//	--store       WEFT_STORE        "pebble" (default) or a postgresql:// URL (CockroachDB or PostgreSQL)
//	--sql-migrate WEFT_SQL_MIGRATE  on a SQL store, apply the missing schema migrations under the
//	                                cluster's migration lock (default true); false: only check
//	                                them, and refuse to start naming any that is missing
//	--sql-max-conns WEFT_SQL_MAX_CONNS  the SQL store's pool size (default: the URL's
//	                                pool_max_conns, else 10)
//	--pebble-cache-mib WEFT_PEBBLE_CACHE_MIB  the embedded store's block cache in MiB (default 8); it
//	                                counts in weftd's memory once the store outgrows it
//	--log-level   WEFT_LOG_LEVEL    debug, info, warn or error (default info)
//	--cors-origin WEFT_CORS_ORIGINS comma-separated browser origins allowed (default none)
//	--auth-tokens WEFT_AUTH_TOKENS_FILE bearer-token file (see docs/api.md)
//	              WEFT_AUTH_TOKENS  more tokens: "token=tenant:principal,…" (environment only)
//	--insecure-no-auth               serve without tokens on a non-loopback address
//	--tls-cert    WEFT_TLS_CERT     TLS certificate chain (PEM): serve TLS 1.2+ with HTTP/2; reloaded
//	--tls-key     WEFT_TLS_KEY      its private key   on SIGHUP and when the files change
//	--tls-client-ca WEFT_TLS_CLIENT_CA CAs whose client certificates authenticate callers (subject
//	                                CN: principal, O: tenant, OU: roles; docs/security.md)
//	--tls-watch-interval WEFT_TLS_WATCH_INTERVAL how often the TLS files are checked (default 5s)
//	--insecure-plaintext             serve plaintext on a non-loopback address (TLS-terminating proxy)
//	--oidc-issuer WEFT_OIDC_ISSUER  OpenID Connect issuer whose tokens authenticate callers
//	--oidc-audience WEFT_OIDC_AUDIENCE the audience (client id) its tokens must carry
//	--oidc-principal-claim, --oidc-tenant-claim, --oidc-roles-claim  the claims that are the
//	                                principal (sub), tenant (weft_tenant) and roles (roles)
//	--oidc-tenant WEFT_OIDC_TENANT  every OIDC caller's tenant, instead of a claim
//	--oidc-clock-skew WEFT_OIDC_CLOCK_SKEW how long after expiry a token is accepted (30s)
//	--oidc-client-secret-file WEFT_OIDC_CLIENT_SECRET_FILE  the console's client secret at the issuer
//	--console-url WEFT_CONSOLE_URL  weftd's external base URL, for the console's sign-in redirect
//	--audit       WEFT_AUDIT        audit log of every mutating call: auto (on when callers
//	                                authenticate; default), on or off (docs/security.md)
//	--audit-retention WEFT_AUDIT_RETENTION how long audit records are kept (default 365d)
//	--ownership   WEFT_OWNERSHIP    single-owner or cas-required (default: single-owner on
//	                                Pebble, cas-required on a SQL store)
//	--redis       WEFT_REDIS        lease service (default: in process on Pebble,
//	                                redis://127.0.0.1:6379 on a SQL store)
//	--lease-ttl   WEFT_LEASE_TTL    how long a run's lease lives unless renewed (default 10s)
//	--retention   WEFT_RETENTION    how long a finished run is kept before it is removed with
//	                                all its records: a duration ("720h") or whole days ("30d");
//	                                0 keeps finished runs until DeleteRun (default 30d); a
//	                                definition's own retention wins
//	--wake-channel WEFT_WAKE_CHANNEL Redis pub/sub channel on which the processes of a SQL
//	                                store's cluster wake each other's long polls and event
//	                                watches (default weft:wake; "none": off)
//	--max-runs-per-tenant WEFT_MAX_RUNS_PER_TENANT  concurrently started runs per tenant (default 0: no limit)
//	--max-runs-per-plan   WEFT_MAX_RUNS_PER_PLAN    concurrently started runs per plan (default 0: no limit)
//	--backpressure WEFT_BACKPRESSURE reject, queue or delay: what a run over a limit gets (default queue)
//	--schedule-to-start-timeout WEFT_SCHEDULE_TO_START_TIMEOUT  how long a task may wait
//	                                for a worker when its action sets no schedule_to_start_timeout_ms
//	                                (default 5m; 0: no bound; docs/semantics.md#schedule-to-start)
//	--max-workflow-depth WEFT_MAX_WORKFLOW_DEPTH  how deeply runs nest through sub-workflow
//	                                steps (default 8; docs/semantics.md#sub-workflows)
//	--max-fan-out WEFT_MAX_FAN_OUT  the longest list a forEach step fans out over
//	                                (default 1000, at most 100000; docs/semantics.md#for-each)
//	--bus         WEFT_BUS          where run events are exported: "none", "memory" or a redis://
//	                                URL (default: none on Pebble, Redis on a SQL store)
//	--debug-addr  WEFT_DEBUG_ADDR   serve Go's /debug/pprof profiles on this loopback
//	                                address (default: off)
//	              GOGC              the garbage collector's target (default 200 in weftd, not
//	                                Go's 100: gc.go)
//	--gc-heap-floor-mib WEFT_GC_HEAP_FLOOR_MIB  the heap the collector lets weftd reach however
//	                                little of it is live (default 64; 0: none; gc.go)
//
// Every RPC must carry "Authorization: Bearer <token>" naming a configured
// token, and runs as that token's tenant and principal. Without tokens weftd
// runs open (tenant "default", principal "anonymous") only on a loopback
// address, and says so in a WARN line; on any other address it refuses to
// start unless --insecure-no-auth is given.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weft-dev/weft/batch"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/telemetry"
	"github.com/weft-dev/weft/view"
)

func main() {
	tuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if _, err := parseOptions(os.Args[1:], os.Getenv, io.Discard); errors.Is(err, flag.ErrHelp) {
		_, _ = parseOptions(os.Args[1:], os.Getenv, os.Stdout) // -h: the flags, on stdout
		return
	}
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "weftd:", err)
		os.Exit(1)
	}
}

// options is weftd's configuration after flags and environment.
type options struct {
	addr        string
	dataDir     string
	store       string
	pebbleCache int64 // bytes of the embedded store's block cache
	sql         sqlOptions
	logLevel    slog.Level
	corsOrigins []string
	// tokenFile and envTokens are the configured bearer tokens' sources.
	tokenFile      string
	envTokens      string
	insecureNoAuth bool
	cluster        clusterOptions
	limits         engine.Limits
	backpressure   definition.BackpressureMode
	bus            string
	// debugAddr, when set, serves net/http/pprof (loopback only).
	debugAddr string
	// retention is how long a finished run is kept (engine.RetainForever: kept).
	retention time.Duration
	// scheduleToStart is the deployment's schedule-to-start timeout (0: none).
	scheduleToStart time.Duration
	// maxWorkflowDepth caps how deeply runs nest (engine.Config.MaxWorkflowDepth).
	maxWorkflowDepth int
	// maxFanOut caps a forEach list's length (engine.Config.MaxFanOut).
	maxFanOut int
	// gcHeapFloor is the heap the collector lets weftd reach however little
	// of it is live (bytes; 0: none; gc.go).
	gcHeapFloor uint64
	// tracing says where spans go (tracing.go).
	tracing telemetry.TracingConfig
	// tls is transport security (tls.go).
	tls tlsOptions
	// oidc is the OpenID Connect issuer whose tokens authenticate (oidc.go).
	oidc server.OIDCConfig
	// audit is the audit log's switch and retention (audit.go).
	audit auditOptions
}

// defaultScheduleToStart is weftd's schedule-to-start timeout: long enough
// for a worker fleet's rolling restart, short enough that a task nobody can
// run fails its attempt within minutes instead of waiting forever.
const defaultScheduleToStart = 5 * time.Minute

// parseOptions reads flags over environment variables over defaults.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("weftd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: weftd [flags]\n\nMost flags may also be set by an environment variable (WEFT_ADDR, WEFT_STORE, …;\n"+
			"README lists each flag's); a flag given wins.\n\n")
		fs.PrintDefaults()
	}
	addr := fs.String("addr", envOr(getenv, "WEFT_ADDR", "127.0.0.1:7400"), "listen address")
	dataDir := fs.String("data-dir", envOr(getenv, "WEFT_DATA_DIR", ".weft"), "embedded store directory")
	storeFlag := fs.String("store", envOr(getenv, "WEFT_STORE", storePebble), `"pebble" or a postgresql:// URL`)
	level := fs.String("log-level", envOr(getenv, "WEFT_LOG_LEVEL", "info"), "debug, info, warn or error")
	cors := fs.String("cors-origin", getenv("WEFT_CORS_ORIGINS"), "comma-separated browser origins allowed to call the API")
	tokenFile := fs.String("auth-tokens", getenv("WEFT_AUTH_TOKENS_FILE"), "bearer-token file (JSON; see docs/api.md)")
	insecure := fs.Bool("insecure-no-auth", false, "serve without bearer tokens on a non-loopback address (never in production)")
	ownership := fs.String("ownership", getenv("WEFT_OWNERSHIP"), "single-owner or cas-required (default: by store)")
	redisURL := fs.String("redis", getenv("WEFT_REDIS"), "lease service, a redis:// URL")
	perTenantText := fs.String("max-runs-per-tenant", envOr(getenv, "WEFT_MAX_RUNS_PER_TENANT", "0"), "concurrently started runs per tenant (0: no limit)")
	perPlanText := fs.String("max-runs-per-plan", envOr(getenv, "WEFT_MAX_RUNS_PER_PLAN", "0"), "concurrently started runs per plan (0: no limit)")
	bus := fs.String("bus", getenv("WEFT_BUS"), `event bus: "none", "memory" or a redis:// URL`)
	backpressure := fs.String("backpressure", envOr(getenv, "WEFT_BACKPRESSURE", string(engine.DefaultBackpressure)), "reject, queue or delay")
	debugAddr := fs.String("debug-addr", getenv("WEFT_DEBUG_ADDR"), "serve /debug/pprof on this loopback address (off when empty)")
	wakeChannel := fs.String("wake-channel", getenv("WEFT_WAKE_CHANNEL"), `cluster wake-ups' Redis channel (default <redis-prefix>wake), or "none"`)
	redisPrefix := fs.String("redis-prefix", envOr(getenv, "WEFT_REDIS_PREFIX", defaultRedisPrefix),
		"what every Redis key, stream and channel of this deployment starts with")
	sqlMigrate := fs.Bool("sql-migrate", envOr(getenv, "WEFT_SQL_MIGRATE", "true") != "false", "apply missing SQL schema migrations (false: only check them)")
	sqlConnsText := fs.String("sql-max-conns", getenv("WEFT_SQL_MAX_CONNS"), "SQL store pool size (default: the URL's pool_max_conns, else 10)")
	pebbleCacheText := fs.String("pebble-cache-mib", envOr(getenv, "WEFT_PEBBLE_CACHE_MIB", strconv.Itoa(defaultPebbleCacheMiB)), "embedded store's block cache, MiB")
	startText := fs.String("schedule-to-start-timeout", envOr(getenv, "WEFT_SCHEDULE_TO_START_TIMEOUT", defaultScheduleToStart.String()),
		"how long a task may wait for a worker when its action sets none (0: no bound)")
	depthText := fs.String("max-workflow-depth", envOr(getenv, "WEFT_MAX_WORKFLOW_DEPTH", strconv.Itoa(engine.DefaultMaxWorkflowDepth)),
		"how deeply runs nest through sub-workflow steps")
	fanOutText := fs.String("max-fan-out", envOr(getenv, "WEFT_MAX_FAN_OUT", strconv.Itoa(definition.DefaultMaxFanOut)),
		"the longest list a forEach step fans out over")
	leaseTTLText := fs.String("lease-ttl", envOr(getenv, "WEFT_LEASE_TTL", engine.DefaultLeaseTTL.String()), "run lease TTL, e.g. 10s")
	retentionText := fs.String("retention", envOr(getenv, "WEFT_RETENTION", "30d"), `how long a finished run is kept, e.g. 720h or 30d ("0": until deleted)`)
	gcFloorText := fs.String("gc-heap-floor-mib", envOr(getenv, "WEFT_GC_HEAP_FLOOR_MIB", strconv.Itoa(defaultGCHeapFloorMiB)),
		"heap the garbage collector lets weftd reach however little of it is live, MiB (0: none)")
	tracingOptions := tracingFlags(fs, getenv)
	tlsOpts := tlsFlags(fs, getenv)
	oidcOpts := oidcFlags(fs, getenv)
	auditOpts := auditFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	tracing, err := tracingOptions()
	if err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := checkStore(*storeFlag); err != nil {
		return options{}, err
	}
	pebbleCache, err := cacheOption(*pebbleCacheText)
	if err != nil {
		return options{}, err
	}
	sqlConns, err := sqlConnsOption(*sqlConnsText)
	if err != nil {
		return options{}, err
	}
	switch *ownership {
	case "", string(engine.SingleOwner), string(engine.CASRequired):
	default:
		return options{}, fmt.Errorf("ownership must be single-owner or cas-required, got %q", *ownership)
	}
	switch definition.BackpressureMode(*backpressure) {
	case definition.BackpressureReject, definition.BackpressureQueue, definition.BackpressureDelay:
	default:
		return options{}, fmt.Errorf("backpressure must be reject, queue or delay, got %q", *backpressure)
	}
	if err := checkBus(*bus); err != nil {
		return options{}, err
	}
	perTenant, err := limitOption("max runs per tenant", *perTenantText)
	if err != nil {
		return options{}, err
	}
	perPlan, err := limitOption("max runs per plan", *perPlanText)
	if err != nil {
		return options{}, err
	}
	leaseTTL, err := time.ParseDuration(*leaseTTLText)
	if err != nil || leaseTTL < 100*time.Millisecond {
		return options{}, fmt.Errorf("lease TTL must be a duration of at least 100ms, got %q", *leaseTTLText)
	}
	retention, err := retentionOption(*retentionText)
	if err != nil {
		return options{}, err
	}
	scheduleToStart, err := time.ParseDuration(*startText)
	if err != nil || scheduleToStart < 0 || (scheduleToStart > 0 && scheduleToStart < time.Millisecond) ||
		scheduleToStart > definition.MaxTimeout.D() {
		return options{}, fmt.Errorf("schedule-to-start timeout must be 0 (no bound) or a duration from 1ms to 720h, got %q", *startText)
	}
	depth, err := strconv.Atoi(*depthText)
	if err != nil || depth < 1 || depth > maxWorkflowDepth {
		return options{}, fmt.Errorf("max workflow depth must be a whole number from 1 to %d, got %q", maxWorkflowDepth, *depthText)
	}
	fanOut, err := strconv.Atoi(*fanOutText)
	if err != nil || fanOut < 1 || fanOut > definition.MaxFanOutLimit {
		return options{}, fmt.Errorf("max fan-out must be a whole number from 1 to %d, got %q", definition.MaxFanOutLimit, *fanOutText)
	}
	if err := checkDebugAddr(*debugAddr); err != nil {
		return options{}, err
	}
	gcHeapFloor, err := gcHeapFloorOption(*gcFloorText)
	if err != nil {
		return options{}, err
	}
	if err := checkWakeChannel(*wakeChannel); err != nil {
		return options{}, err
	}
	if err := checkRedisPrefix(*redisPrefix); err != nil {
		return options{}, err
	}
	tlsOptions, err := tlsOpts()
	if err != nil {
		return options{}, err
	}
	oidcOptions, err := oidcOpts()
	if err != nil {
		return options{}, err
	}
	auditOptions, err := auditOpts()
	if err != nil {
		return options{}, err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return options{}, fmt.Errorf("log level must be debug, info, warn or error, got %q", *level)
	}
	return options{addr: *addr, dataDir: *dataDir, store: *storeFlag, pebbleCache: pebbleCache,
		sql: sqlOptions{migrate: *sqlMigrate, maxConns: sqlConns}, logLevel: lvl, corsOrigins: splitList(*cors),
		tokenFile: *tokenFile, envTokens: getenv("WEFT_AUTH_TOKENS"), insecureNoAuth: *insecure,
		cluster: clusterOptions{ownership: *ownership, redis: *redisURL, leaseTTL: leaseTTL, wakeChannel: *wakeChannel, redisPrefix: *redisPrefix},
		limits:  engine.Limits{PerTenant: perTenant, PerDefinition: perPlan}, backpressure: definition.BackpressureMode(*backpressure), bus: *bus,
		debugAddr: *debugAddr, retention: retention, scheduleToStart: scheduleToStart, gcHeapFloor: gcHeapFloor, tracing: tracing,
		maxWorkflowDepth: depth, maxFanOut: fanOut, tls: tlsOptions, oidc: oidcOptions, audit: auditOptions}, nil
}

// maxWorkflowDepth is the largest --max-workflow-depth.
const maxWorkflowDepth = 64

// retentionOption parses --retention: a Go duration, or whole days with a
// "d" suffix; "0" keeps finished runs until they are deleted.
func retentionOption(text string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if days, ok := strings.CutSuffix(text, "d"); ok && err != nil {
		var n int
		if n, err = strconv.Atoi(days); err == nil && n >= 0 && n <= 3650 {
			d = time.Duration(n) * 24 * time.Hour
		} else {
			err = errors.New("bad days")
		}
	}
	switch {
	case err != nil || d < 0:
		return 0, fmt.Errorf("retention must be a duration like 720h or whole days like 30d (0: keep finished runs), got %q", text)
	case d == 0:
		return engine.RetainForever, nil
	case d < engine.MinRetention:
		return 0, fmt.Errorf("retention must be 0 or at least %s, got %q", engine.MinRetention, text)
	}
	return d, nil
}

// limitOption parses a run limit: a whole number, 0 for none.
func limitOption(name, text string) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a whole number, 0 for no limit, got %q", name, text)
	}
	return n, nil
}

func envOr(getenv func(string) string, key, fallback string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return fallback
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// run serves until ctx ends, then drains in-flight calls, stops the engine
// and closes the store.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	opts, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	startGCHeapFloor(opts.gcHeapFloor)
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: opts.logLevel}))
	logRedisThrough(logger)
	stopDebug, err := startDebug(opts.debugAddr, logger)
	if err != nil {
		return err
	}
	defer stopDebug()
	tokens, err := loadAuth(opts, logger)
	if err != nil {
		return err
	}
	tlsr, err := loadTLS(opts, logger)
	if err != nil {
		return err
	}
	oidcVerifier, err := loadOIDC(ctx, opts, logger)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, opts, logger)
	if err != nil {
		return err
	}
	defer closeStore(st, logger)
	cl, err := openCluster(opts, logger)
	if err != nil {
		return err
	}
	defer cl.close()
	metrics, err := telemetry.NewMetrics()
	if err != nil {
		return err
	}
	exp, stopExport, err := startExport(opts, st, metrics.Provider, logger)
	if err != nil {
		return err
	}
	defer stopExport()
	tracing, stopTracing, err := startTracing(ctx, opts.tracing, logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	observer, err := server.NewObserver(tracing, metrics)
	if err != nil {
		return err
	}
	engLogger := logger.With(slog.String("component", "engine"))
	alerts, err := engineAlerts(metrics.Provider.Meter(meterName), engLogger)
	if err != nil {
		return err
	}
	leases, err := countLeaseFailures(cl.leases, metrics.Provider.Meter(meterName))
	if err != nil {
		return err
	}
	eng, err := engine.New(engine.Config{Store: st, Logger: engLogger,
		Ownership: cl.mode, Leases: leases, Notifier: cl.notifier(), LeaseTTL: opts.cluster.leaseTTL, Owner: engineOwner(),
		Limits: opts.limits, Backpressure: opts.backpressure, Outbox: exp.outbox, OutboxCache: exp.cache, Alerts: alerts, Retention: opts.retention,
		ScheduleToStartTimeout: opts.scheduleToStart, Observer: engineObserver(observer), MaxWorkflowDepth: opts.maxWorkflowDepth,
		MaxFanOut: opts.maxFanOut})
	if err != nil {
		return err
	}
	if err := observeEngine(metrics.Provider.Meter(meterName), eng, engLogger); err != nil {
		return err
	}
	if err := observeStore(metrics.Provider.Meter(meterName), st); err != nil {
		return err
	}
	if err := cl.observeWakeups(metrics.Provider.Meter(meterName)); err != nil {
		return err
	}
	stopWakeups := cl.runWakeups(eng)
	defer stopWakeups()
	engCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan struct{})
	go func() { defer close(engineDone); eng.Run(engCtx) }()
	// Deferred calls run in reverse: after serve returns, the engine stops and
	// finishes its round, then the store closes.
	defer func() { stopEngine(); <-engineDone }()
	sch, err := schedule.New(schedule.Config{Store: st, Runs: eng, Logger: logger.With(slog.String("component", "schedule"))})
	if err != nil {
		return err
	}
	if err := observeSchedules(metrics.Provider.Meter(meterName), sch); err != nil {
		return err
	}
	schDone := make(chan struct{})
	go func() { defer close(schDone); sch.Run(engCtx) }()
	defer func() { stopEngine(); <-schDone }()
	batches, err := batch.New(batch.Config{Store: st, Runs: eng, Select: eng.Queries().SelectRuns, Owner: engineOwner(), LeaseTTL: opts.cluster.leaseTTL,
		Logger: logger.With(slog.String("component", "batch"))})
	if err != nil {
		return err
	}
	batchDone := make(chan struct{})
	go func() { defer close(batchDone); batches.Run(engCtx) }()
	defer func() { stopEngine(); <-batchDone }()
	cfg := server.Config{Logger: logger, CORSOrigins: opts.corsOrigins, Tokens: tokens, Metrics: metrics, Tracing: tracing,
		Readiness: readinessChecks(st, opts.store, cl), ClientCertificates: opts.tls.clientCA != "", OIDC: oidcVerifier,
		Audit: startAudit(engCtx, opts, tokens != nil || opts.tls.clientCA != "" || oidcVerifier != nil, st, logger)}.WithEngine(eng).WithSchedules(sch).WithBatches(batches).WithViews(view.New(st))
	return serve(ctx, opts, logger, cfg, st.Capabilities().Backend, tlsr)
}

// shutdownGrace is how long in-flight calls may finish on shutdown before
// long polls and watches are cancelled.
const shutdownGrace = time.Second

// serve listens and serves cfg until ctx ends, then shuts the server down.
func serve(ctx context.Context, opts options, logger *slog.Logger, cfg server.Config, backend string, tlsr *server.TLSReloader) error {
	handler, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	// Long polls and event watches run on baseCtx, which shutdown cancels
	// after a grace period so that they end instead of holding it up.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler:           handler,
		Protocols:         server.Protocols(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	logger.Info("weftd listening", slog.String("addr", ln.Addr().String()), slog.String("store", backend),
		slog.Bool("tls", tlsr != nil))
	errc := make(chan error, 1)
	if tlsr != nil {
		srv.Protocols, srv.TLSConfig = server.TLSProtocols(), tlsr.ServerConfig()
		go watchTLS(baseCtx, tlsr, opts.tls.watch, logger)
		go func() { errc <- srv.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- srv.Serve(ln) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("weftd shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	grace := time.AfterFunc(shutdownGrace, cancelBase)
	defer grace.Stop()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// closeStore closes the store last and says so.
func closeStore(st store.Store, logger *slog.Logger) {
	if err := st.Close(); err != nil {
		logger.Error("closing the store", slog.String("error", err.Error()))
		return
	}
	logger.Info("weftd stopped")
}
