package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// TLSFiles names the files weftd's TLS is read from.
type TLSFiles struct {
	// Cert and Key are the server's certificate chain and private key (PEM).
	Cert, Key string
	// ClientCA, when set, is a PEM bundle of the CAs whose client
	// certificates authenticate a caller (mutual TLS); a client may still
	// present none and authenticate with a bearer token instead.
	ClientCA string
}

// TLSReloader serves TLS from files it reads again on Reload and whenever
// their content changes (Watch). A new handshake uses the newest good
// files; a connection already open keeps the certificate it was made with,
// so a rotation drops no connection. A reload that fails (a half-written
// file, a key that does not match) keeps the previous certificate and says
// so in the log.
type TLSReloader struct {
	files   TLSFiles
	logger  *slog.Logger
	current atomic.Pointer[tls.Config]
	mu      sync.Mutex // serialises Reload
	digest  [sha256.Size]byte
}

// NewTLSReloader reads the files once and answers a reloader serving them,
// or the error that makes them unusable.
func NewTLSReloader(files TLSFiles, logger *slog.Logger) (*TLSReloader, error) {
	if files.Cert == "" || files.Key == "" {
		return nil, errors.New("TLS needs both a certificate file and a key file")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &TLSReloader{files: files, logger: logger}
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// ServerConfig answers the tls.Config to serve with: TLS 1.2 and newer,
// HTTP/2 and HTTP/1.1 offered by ALPN, each handshake given the newest
// certificate (and client CAs).
func (r *TLSReloader) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.current.Load(), nil
		},
	}
}

// Certificate answers the certificate new handshakes are served with.
func (r *TLSReloader) Certificate() *x509.Certificate {
	return r.current.Load().Certificates[0].Leaf
}

// Reload reads the files again and, when they are good, serves them to the
// handshakes that follow. It answers whether they changed.
func (r *TLSReloader) Reload() (bool, error) {
	changed, err := r.reload()
	if err != nil {
		r.logger.Error("TLS reload failed; the previous certificate stays in use", slog.String("error", err.Error()))
		return false, err
	}
	if changed {
		leaf := r.Certificate()
		r.logger.Info("TLS certificate loaded", slog.String("subject", leaf.Subject.String()),
			slog.String("serial", leaf.SerialNumber.String()), slog.Time("not_after", leaf.NotAfter))
	}
	return changed, nil
}

// Watch reloads the files whenever their content changes, checking every
// interval, until ctx ends. Polling content (not modification times) also
// sees a Kubernetes secret's symlink swap and a copy that keeps the time.
func (r *TLSReloader) Watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = r.Reload()
		}
	}
}

// reload reads every file and swaps the config in when their content
// differs from what is served.
func (r *TLSReloader) reload() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	certPEM, keyPEM, caPEM, err := r.read()
	if err != nil {
		return false, err
	}
	digest := sha256.Sum256(bytes.Join([][]byte{certPEM, keyPEM, caPEM}, []byte{0}))
	if r.current.Load() != nil && digest == r.digest {
		return false, nil
	}
	cfg, err := serverTLSConfig(certPEM, keyPEM, caPEM)
	if err != nil {
		return false, err
	}
	r.current.Store(cfg)
	r.digest = digest
	return true, nil
}

func (r *TLSReloader) read() (certPEM, keyPEM, caPEM []byte, err error) {
	if certPEM, err = os.ReadFile(r.files.Cert); err != nil {
		return nil, nil, nil, fmt.Errorf("TLS certificate: %w", err)
	}
	if keyPEM, err = os.ReadFile(r.files.Key); err != nil {
		return nil, nil, nil, fmt.Errorf("TLS key: %w", err)
	}
	if r.files.ClientCA != "" {
		if caPEM, err = os.ReadFile(r.files.ClientCA); err != nil {
			return nil, nil, nil, fmt.Errorf("TLS client CA: %w", err)
		}
	}
	return certPEM, keyPEM, caPEM, nil
}

// serverTLSConfig answers the config of one handshake: the certificate, and
// the client CAs when there are any.
func serverTLSConfig(certPEM, keyPEM, caPEM []byte) (*tls.Config, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate and key: %w", err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"h2", "http/1.1"},
		Certificates: []tls.Certificate{cert},
	}
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("TLS client CA: the file holds no PEM certificate")
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// TLSProtocols answers the protocols weftd serves over TLS: HTTP/1.1
// (Connect, gRPC-Web, HTTP/JSON) and HTTP/2 (gRPC and the rest).
func TLSProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	return p
}
