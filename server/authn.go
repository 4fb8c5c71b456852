package server

import (
	"context"
	"net/http"
)

// AuthMethod says how a caller proved who it is; the audit log records it.
type AuthMethod string

// The ways a caller authenticates.
const (
	AuthNone              AuthMethod = "none" // a server without authentication
	AuthBearerToken       AuthMethod = "token"
	AuthClientCertificate AuthMethod = "mtls"
	AuthOIDC              AuthMethod = "oidc"
)

// open reports whether the server authenticates nobody.
func (a *authInterceptor) open() bool { return a.tokens == nil && !a.certs && a.oidc == nil }

// identify answers who the request's credentials prove it is: a bearer
// token when the request carries one, else a verified client certificate.
// A server configured with neither runs every request as DefaultTenant /
// AnonymousCaller with every permission.
func (a *authInterceptor) identify(ctx context.Context, h http.Header) (caller, error) {
	if a.open() {
		return caller{tenant: DefaultTenant, principal: AnonymousCaller, perms: allPerms, method: AuthNone}, nil
	}
	if token, ok := bearerToken(h); ok {
		return a.tokenCaller(ctx, token)
	}
	if id, ok := cookieOf(h, sessionCookie); ok && a.sessions != nil {
		return a.sessionCaller(ctx, h, id)
	}
	if cert, ok := peerCertificate(ctx); ok && a.certs {
		who, err := certificateCaller(cert)
		if err != nil {
			return caller{}, unauthenticated(err.Error())
		}
		return who, nil
	}
	if a.certs {
		return caller{}, unauthenticated(`missing credentials: send "Authorization: Bearer <token>" or a client certificate`)
	}
	return caller{}, unauthenticated(`missing bearer token: send "Authorization: Bearer <token>"`)
}

// cookieOf answers the value of the request's cookie name.
func cookieOf(h http.Header, name string) (string, bool) {
	if len(h.Values("Cookie")) == 0 {
		return "", false
	}
	c, err := (&http.Request{Header: h}).Cookie(name)
	if err != nil || c.Value == "" {
		return "", false
	}
	return c.Value, true
}

// tokenCaller answers the caller of a bearer token: a configured static
// token, else a token the OIDC issuer signed.
func (a *authInterceptor) tokenCaller(ctx context.Context, token string) (caller, error) {
	if a.tokens != nil {
		if who, ok := a.tokens.lookup(token); ok {
			who.authenticated, who.method = true, AuthBearerToken
			return who, nil
		}
	}
	if a.oidc != nil && looksLikeJWT(token) {
		who, err := a.oidc.caller(ctx, token)
		if err != nil {
			return caller{}, unauthenticated(err.Error())
		}
		return who, nil
	}
	return caller{}, unauthenticated("unknown bearer token")
}
