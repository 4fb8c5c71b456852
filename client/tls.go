package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// WithTLS sets the TLS configuration of the default HTTP client, for an
// https:// weftd whose certificate a private CA signed or that asks for a
// client certificate (TLSConfig builds one from files). The default client
// negotiates HTTP/2 over TLS, which gRPC needs. Ignored with WithHTTPClient.
func WithTLS(c *tls.Config) Option { return func(cfg *config) { cfg.tls = c } }

// TLSConfig answers a TLS configuration that trusts the CAs of caFile (PEM;
// "": the system's roots) and, when certFile and keyFile are given,
// presents that client certificate (mutual TLS). TLS 1.2 is the least
// version it speaks, as weftd.
func TLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate needs both its certificate file and its key file")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
