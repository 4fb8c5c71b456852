package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// The tenant and principal of every request of a server without tokens.
const (
	DefaultTenant    = "default"
	AnonymousCaller  = "anonymous"
	maxTenantIDBytes = 128
)

// caller is who a request runs as.
type caller struct {
	tenant    string
	principal string
	// authenticated: principal is a bearer token's name, not AnonymousCaller.
	authenticated bool
	// perms are what the caller's roles grant (every permission on a server
	// without tokens).
	perms permSet
	// method is how the caller proved who it is (AuthBearerToken, …).
	method AuthMethod
	// roles are the caller's roles, as its credential names them (none on a
	// server that authenticates nobody).
	roles []string
	// expires is when the caller's credential stops being accepted, when
	// known (an OIDC token's expiry); zero otherwise.
	expires time.Time
}

// authenticatedPrincipal answers the principal a bearer token proved, or ""
// on a server that authenticates nobody.
func (c caller) authenticatedPrincipal() string {
	if !c.authenticated {
		return ""
	}
	return c.principal
}

// callerOf is the one place a handler learns a request's tenant and
// principal: the auth interceptor put them in the request's state after it
// checked the bearer token. A context without a caller (a handler reached
// without the interceptor) is unauthenticated, never a default.
func callerOf(ctx context.Context) (caller, error) {
	if s := stateOf(ctx); s != nil && s.authed {
		return s.who, nil
	}
	return caller{}, unauthenticated("no authenticated caller")
}

// authInterceptor authenticates every request before validation or a
// handler sees it. With no token set every request runs as DefaultTenant /
// AnonymousCaller (weftd allows that only on loopback); otherwise the
// request's "Authorization: Bearer <token>" must name a configured token.
type authInterceptor struct {
	tokens *TokenSet
	// certs: a verified client certificate authenticates its caller
	// (clientcert.go).
	certs bool
	// oidc verifies bearer tokens an OpenID provider issued (oidc.go).
	oidc *OIDCVerifier
	// sessions are the console's signed-in sessions (console_session.go),
	// renewed through signIn; nil on a server that authenticates nobody.
	sessions *consoleSessions
	signIn   *consoleSignIn
}

func (a *authInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx, err := a.authenticate(ctx, req.Header())
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (a *authInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (a *authInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := a.authenticate(ctx, conn.RequestHeader())
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}

// authenticate answers ctx carrying the request's caller (in its state, where
// the log line finds it too), or an unauthenticated fault.
func (a *authInterceptor) authenticate(ctx context.Context, h http.Header) (context.Context, error) {
	who, err := a.identify(ctx, h)
	if err != nil {
		return ctx, err
	}
	s := stateOf(ctx)
	if s == nil { // a call that passed neither the edge nor the fault interceptor
		ctx, s = withRequestState(ctx, "")
	}
	who.perms |= permsOf(PermIdentityRead) // whoever authenticated may ask who they are
	s.who, s.authed = who, true
	return ctx, nil
}

// bearerToken answers the token of an "Authorization: Bearer <token>" header
// (the scheme is case-insensitive, as RFC 9110 says).
func bearerToken(h http.Header) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// unauthenticated answers the UNAUTHENTICATED fault, with the challenge HTTP
// clients expect beside a 401.
func unauthenticated(message string) *connect.Error {
	cerr := newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_UNAUTHENTICATED}, message)
	cerr.Meta().Set("Www-Authenticate", `Bearer realm="weft"`)
	return cerr
}
