package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weft-dev/weft/server"
)

// tlsOptions are weftd's transport security flags.
type tlsOptions struct {
	cert, key, clientCA string
	// watch is how often the files are checked for new content.
	watch time.Duration
	// insecurePlaintext allows plaintext beyond loopback (a TLS-terminating
	// proxy in front).
	insecurePlaintext bool
}

// enabled reports whether weftd serves TLS.
func (o tlsOptions) enabled() bool { return o.cert != "" || o.key != "" }

// defaultTLSWatch is how often weftd looks at its TLS files for new content.
const defaultTLSWatch = 5 * time.Second

// tlsFlags declares the TLS flags on fs and answers the function that reads
// them once fs is parsed.
func tlsFlags(fs *flag.FlagSet, getenv func(string) string) func() (tlsOptions, error) {
	cert := fs.String("tls-cert", getenv("WEFT_TLS_CERT"), "TLS certificate chain (PEM); serves TLS 1.2+ with HTTP/2")
	key := fs.String("tls-key", getenv("WEFT_TLS_KEY"), "TLS private key (PEM)")
	clientCA := fs.String("tls-client-ca", getenv("WEFT_TLS_CLIENT_CA"), "CA bundle (PEM) whose client certificates authenticate callers")
	watch := fs.String("tls-watch-interval", envOr(getenv, "WEFT_TLS_WATCH_INTERVAL", defaultTLSWatch.String()), "how often the TLS files are checked for new content")
	insecure := fs.Bool("insecure-plaintext", false, "serve plaintext on a non-loopback address (behind a TLS-terminating proxy only)")
	return func() (tlsOptions, error) {
		o := tlsOptions{cert: *cert, key: *key, clientCA: *clientCA, insecurePlaintext: *insecure}
		if (o.cert == "") != (o.key == "") {
			return o, errors.New("--tls-cert and --tls-key must be given together")
		}
		if o.clientCA != "" && !o.enabled() {
			return o, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
		}
		d, err := time.ParseDuration(*watch)
		if err != nil || d < 10*time.Millisecond {
			return o, fmt.Errorf("TLS watch interval must be a duration of at least 10ms, got %q", *watch)
		}
		o.watch = d
		return o, nil
	}
}

// errPlaintextOnPublicAddress is weftd's refusal to serve plaintext beyond
// loopback.
var errPlaintextOnPublicAddress = errors.New("the listen address is not loopback and no TLS is configured: " +
	"give --tls-cert and --tls-key, listen on 127.0.0.1, or pass --insecure-plaintext when a TLS-terminating proxy is in front")

// loadTLS answers the TLS reloader weftd serves with, nil for plaintext, and
// says at start what it decided. Plaintext beyond loopback needs
// --insecure-plaintext.
func loadTLS(opts options, logger *slog.Logger) (*server.TLSReloader, error) {
	o := opts.tls
	if !o.enabled() {
		loopback := isLoopback(opts.addr)
		switch {
		case loopback:
			logger.Info("weftd serves plaintext on a loopback address", slog.String("addr", opts.addr))
			return nil, nil
		case o.insecurePlaintext:
			logger.Warn("weftd serves PLAINTEXT beyond loopback (--insecure-plaintext): only behind a TLS-terminating proxy",
				slog.String("addr", opts.addr))
			return nil, nil
		}
		return nil, errPlaintextOnPublicAddress
	}
	r, err := server.NewTLSReloader(server.TLSFiles{Cert: o.cert, Key: o.key, ClientCA: o.clientCA}, logger)
	if err != nil {
		return nil, err
	}
	leaf := r.Certificate()
	logger.Info("weftd serves TLS (1.2 and newer, HTTP/2 and HTTP/1.1)", slog.String("subject", leaf.Subject.String()),
		slog.Time("not_after", leaf.NotAfter), slog.Bool("client_certificates", o.clientCA != ""),
		slog.Duration("watch_interval", o.watch))
	return r, nil
}

// watchTLS reloads the TLS files on SIGHUP and whenever their content
// changes, until ctx ends.
func watchTLS(ctx context.Context, r *server.TLSReloader, every time.Duration, logger *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go r.Watch(ctx, every)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			logger.Info("SIGHUP: reloading the TLS files")
			_, _ = r.Reload()
		}
	}
}
