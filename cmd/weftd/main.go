// Command weftd is the Weft server. With no flags it serves every weft.v1
// service over Connect, gRPC, gRPC-Web and HTTP/JSON on 127.0.0.1:7400, on the
// embedded store in ./.weft. It shuts down cleanly on SIGINT or SIGTERM.
//
// Flags override environment variables, which override defaults:
//
//	--addr        WEFT_ADDR         listen address (default 127.0.0.1:7400)
//	--data-dir    WEFT_DATA_DIR     embedded store directory (default .weft)
//	--log-level   WEFT_LOG_LEVEL    debug, info, warn or error (default info)
//	--cors-origin WEFT_CORS_ORIGINS comma-separated browser origins allowed (default none)
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
	"strings"
	"syscall"
	"time"

	"github.com/weft-dev/weft/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "weftd:", err)
		os.Exit(1)
	}
}

// options is weftd's configuration after flags and environment.
type options struct {
	addr        string
	dataDir     string
	logLevel    slog.Level
	corsOrigins []string
}

// parseOptions reads flags over environment variables over defaults.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("weftd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr(getenv, "WEFT_ADDR", "127.0.0.1:7400"), "listen address")
	dataDir := fs.String("data-dir", envOr(getenv, "WEFT_DATA_DIR", ".weft"), "embedded store directory")
	level := fs.String("log-level", envOr(getenv, "WEFT_LOG_LEVEL", "info"), "debug, info, warn or error")
	cors := fs.String("cors-origin", getenv("WEFT_CORS_ORIGINS"), "comma-separated browser origins allowed to call the API")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return options{}, fmt.Errorf("log level must be debug, info, warn or error, got %q", *level)
	}
	return options{addr: *addr, dataDir: *dataDir, logLevel: lvl, corsOrigins: splitList(*cors)}, nil
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

// run serves until ctx ends, then drains in-flight calls.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	opts, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: opts.logLevel}))
	handler, err := server.New(server.Config{Logger: logger, CORSOrigins: opts.corsOrigins})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		Protocols:         server.Protocols(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("weftd listening", slog.String("addr", ln.Addr().String()),
		slog.String("store", "pebble"), slog.String("data_dir", opts.dataDir))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("weftd shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	logger.Info("weftd stopped")
	return nil
}
