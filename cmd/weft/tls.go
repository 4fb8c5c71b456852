package main

import (
	"crypto/tls"
	"flag"

	"github.com/weft-dev/weft/client"
)

// tlsFlags are the global flags of a TLS weftd: the CA that signed its
// certificate and, for mutual TLS, the client certificate.
type tlsFlags struct {
	caCert, clientCert, clientKey string
	// config is what they load (nil: the system's roots, no client
	// certificate).
	config *tls.Config
}

// register adds the TLS flags to fs, defaulting to the environment.
func (t *tlsFlags) register(fs *flag.FlagSet, getenv func(string) string, first bool) {
	if first {
		t.caCert, t.clientCert, t.clientKey = getenv("WEFT_CA_CERT"), getenv("WEFT_CLIENT_CERT"), getenv("WEFT_CLIENT_KEY")
	}
	fs.StringVar(&t.caCert, "ca-cert", t.caCert, "CA (PEM) that signed weftd's certificate ($WEFT_CA_CERT)")
	fs.StringVar(&t.clientCert, "client-cert", t.clientCert, "client certificate (PEM) for mutual TLS ($WEFT_CLIENT_CERT)")
	fs.StringVar(&t.clientKey, "client-key", t.clientKey, "client certificate's key (PEM) ($WEFT_CLIENT_KEY)")
}

// load reads the files the flags name.
func (t *tlsFlags) load() error {
	if t.caCert == "" && t.clientCert == "" && t.clientKey == "" {
		t.config = nil
		return nil
	}
	cfg, err := client.TLSConfig(t.caCert, t.clientCert, t.clientKey)
	if err != nil {
		return usageError("%v", err)
	}
	t.config = cfg
	return nil
}
