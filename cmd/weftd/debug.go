package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// checkDebugAddr accepts an empty address (no debug listener) or a loopback
// host:port: profiles show internals, so they are never served beyond the
// machine.
func checkDebugAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("debug address must be host:port, got %q", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("debug address must be on loopback (127.0.0.1, ::1 or localhost), got %q", addr)
	}
	return nil
}

// startDebug serves net/http/pprof on addr until the returned stop is called;
// with an empty addr it does nothing.
func startDebug(addr string, logger *slog.Logger) (func(), error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on debug address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("debug listener stopped", slog.String("error", err.Error()))
		}
	}()
	logger.Info("serving /debug/pprof", slog.String("addr", ln.Addr().String()))
	return func() { _ = srv.Close() }, nil
}
