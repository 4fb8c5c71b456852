// Package oidctest holds OpenID providers for tests. [Issuer], built from
// go-jose, serves discovery and a JWKS and signs tokens with keys it
// publishes and retires (a rotation), for the bearer-token tests.
// [Provider] is a whole provider — zitadel/oidc's op package over its
// example storage and login page: the authorization endpoint, the token
// endpoint with PKCE verification and refresh tokens, a login form a
// browser can fill — for the console's sign-in.
//
// Layering: it imports go-jose, zitadel/oidc (and golang.org/x/text, which
// its user type needs) and the standard library; only tests import it.
package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is an OpenID provider of a test: discovery and a JWKS it
// publishes, keys it signs with, built from go-jose.
type Issuer struct {
	t   testing.TB
	srv *httptest.Server
	mu  sync.Mutex
	// published are the keys the JWKS lists.
	published []jose.JSONWebKey
	keyFetch  int
}

func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{t: t}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.URL(), "jwks_uri": iss.URL() + "/keys",
			"authorization_endpoint": iss.URL() + "/authorize", "token_endpoint": iss.URL() + "/token",
			"id_token_signing_alg_values_supported": []string{"ES256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		iss.mu.Lock()
		defer iss.mu.Unlock()
		iss.keyFetch++
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: iss.published})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

func (iss *Issuer) URL() string { return iss.srv.URL }

// NewKey answers a new signing key named kid, published unless told not to.
func (iss *Issuer) NewKey(kid string, publish bool) jose.JSONWebKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		iss.t.Fatal(err)
	}
	private := jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
	if publish {
		iss.Publish(private)
	}
	return private
}

// Publish adds the key's public half to the JWKS.
func (iss *Issuer) Publish(keys ...jose.JSONWebKey) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	for _, k := range keys {
		iss.published = append(iss.published, k.Public())
	}
}

// RetireAllBut removes every published key but the one named kid.
func (iss *Issuer) RetireAllBut(kid string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	var kept []jose.JSONWebKey
	for _, k := range iss.published {
		if k.KeyID == kid {
			kept = append(kept, k)
		}
	}
	iss.published = kept
}

// Claims answers valid claims for principal in tenant acme with roles, for
// the audience "weft-console", expiring in an hour.
func (iss *Issuer) Claims(principal string, roles ...string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": iss.URL(), "aud": "weft-console", "sub": principal, "weft_tenant": "acme",
		"roles": roles, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Sign answers the claims signed with key as a compact JWT.
func (iss *Issuer) Sign(key jose.JSONWebKey, claims map[string]any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		iss.t.Fatal(err)
	}
	token, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		iss.t.Fatal(err)
	}
	return token
}
