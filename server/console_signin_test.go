package server

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/oidctest"
)

// fakeClock is a clock a test moves forward.
type fakeClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.off) }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

type signInBundle struct {
	url      string
	provider *oidctest.Provider
	clock    *fakeClock
}

// signInSetup serves an engine whose callers authenticate with the test
// provider's tokens (alice: admin; vic: viewer) and one static token.
func signInSetup(t *testing.T) *signInBundle {
	t.Helper()
	p := oidctest.NewProvider(t, oidctest.ProviderConfig{ClientID: "weft-console", ClientSecret: "console-secret",
		RedirectGlobs: []string{"http://127.0.0.1:*/ui/auth/callback"},
		Users: []oidctest.User{{Username: "alice", Password: "alice-pw", Tenant: "acme", Roles: []string{"admin"}},
			{Username: "vic", Password: "vic-pw", Tenant: "acme", Roles: []string{"viewer"}}}})
	clock := &fakeClock{}
	v, err := NewOIDCVerifier(context.Background(), OIDCConfig{Issuer: p.URL(), Audience: "weft-console",
		ClientSecret: "console-secret", Now: clock.Now})
	require.NoError(t, err)
	tokens, err := NewTokenSet(TokenSpec{Token: roleToken("operator"), Tenant: "acme", Principal: "olga", Roles: []string{"operator"}})
	require.NoError(t, err)
	cfg := engineConfig(t)
	cfg.OIDC, cfg.Tokens = v, tokens
	return &signInBundle{url: testServer(t, cfg), provider: p, clock: clock}
}

// noFollow is an HTTP client that answers redirects instead of following
// them, so the test walks the flow hop by hop as a browser does.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout: 30 * time.Second}

func hop(t *testing.T, method, u string, form url.Values, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res, err := noFollow.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res
}

func cookieNamed(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// signIn walks the authorization-code flow as a browser does — weftd's
// login, the provider's authorization endpoint, its login form, its
// callback, weftd's callback — and answers the session cookie.
func (b *signInBundle) signIn(t *testing.T, user, password string) *http.Cookie {
	t.Helper()
	res := hop(t, "GET", b.url+consoleLoginPath, nil)
	require.Equal(t, http.StatusFound, res.StatusCode)
	login := cookieNamed(res, loginCookie)
	require.NotNil(t, login)
	require.True(t, login.HttpOnly && login.Secure)
	authorize, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "S256", authorize.Query().Get("code_challenge_method"), "PKCE")
	require.NotEmpty(t, authorize.Query().Get("code_challenge"))
	require.NotEmpty(t, authorize.Query().Get("nonce"))

	res = hop(t, "GET", authorize.String(), nil)
	require.Equal(t, http.StatusFound, res.StatusCode)
	page, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	id := page.Query().Get("authRequestID")
	require.NotEmpty(t, id)
	res = hop(t, "POST", b.provider.URL()+"/login/username", url.Values{"id": {id}, "username": {user}, "password": {password}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	next := res.Header.Get("Location")
	if !strings.HasPrefix(next, "http") {
		next = b.provider.URL() + next
	}
	res = hop(t, "GET", next, nil)
	require.Equal(t, http.StatusFound, res.StatusCode)
	callback := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(callback, b.url+consoleCallbackPath), callback)

	res = hop(t, "GET", callback, nil, login)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Equal(t, ConsolePath, res.Header.Get("Location"))
	session := cookieNamed(res, sessionCookie)
	require.NotNil(t, session, "no session cookie")
	require.True(t, session.HttpOnly && session.Secure && session.SameSite == http.SameSiteStrictMode)
	return session
}

// consoleCall calls WhoAmI as the console's script does: the session
// cookie, from the console's own origin.
func (b *signInBundle) whoAmI(t *testing.T, session *http.Cookie, site string) (*weftv1.WhoAmIResponse, error) {
	t.Helper()
	c := weftv1connect.NewIdentityServiceClient(apitest.HTTPClient(), b.url)
	req := connect.NewRequest(&weftv1.WhoAmIRequest{})
	req.Header().Set("Cookie", session.Name+"="+session.Value)
	if site != "" {
		req.Header().Set("Sec-Fetch-Site", site)
	}
	res, err := c.WhoAmI(context.Background(), req)
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

func TestConsoleSignIn_AuthorizationCodeWithPKCEMakesASessionOfTheSignedInPerson(t *testing.T) {
	b := signInSetup(t)
	session := b.signIn(t, "alice", "alice-pw")
	me, err := b.whoAmI(t, session, "same-origin")
	require.NoError(t, err)
	require.Equal(t, "alice", me.GetPrincipal())
	require.Equal(t, "acme", me.GetTenantId())
	require.Equal(t, []string{"admin"}, me.GetRoles())
	require.Equal(t, "oidc", me.GetAuthMethod())
	require.NotNil(t, me.GetExpiresAt())
	require.Contains(t, me.GetPermissions(), "audit.read")

	viewer, err := b.whoAmI(t, b.signIn(t, "vic", "vic-pw"), "same-origin")
	require.NoError(t, err)
	require.Equal(t, []string{"viewer"}, viewer.GetRoles())
	require.NotContains(t, viewer.GetPermissions(), "runs.operate")
}

func TestConsoleSignIn_ACallbackNotStartedInThisBrowserIsRefused(t *testing.T) {
	b := signInSetup(t)
	res := hop(t, "GET", b.url+consoleLoginPath, nil)
	authorize := res.Header.Get("Location")
	state := mustQuery(t, authorize, "state")
	// Another browser (no login cookie) arriving with this state and any code.
	res = hop(t, "GET", b.url+consoleCallbackPath+"?code=stolen&state="+url.QueryEscape(state), nil)
	require.Equal(t, http.StatusFound, res.StatusCode)
	require.Contains(t, res.Header.Get("Location"), "#/signin?error=")
	require.Nil(t, cookieNamed(res, sessionCookie))
}

func mustQuery(t *testing.T, u, key string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	return p.Query().Get(key)
}

func TestConsoleSession_IsRefusedFromAnotherOrigin(t *testing.T) {
	b := signInSetup(t)
	session := b.signIn(t, "alice", "alice-pw")
	for _, site := range []string{"cross-site", "same-site"} {
		_, err := b.whoAmI(t, session, site)
		require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), site)
	}
}

// TestConsoleSession_RenewsItsTokenBeforeExpiryAndEndsWhenItCannot: the
// session's ID token is renewed with the refresh token once it is due; once
// the provider has ended the person's tokens and the ID token has expired,
// the session ends and every later call is UNAUTHENTICATED.
func TestConsoleSession_RenewsItsTokenBeforeExpiryAndEndsWhenItCannot(t *testing.T) {
	b := signInSetup(t)
	session := b.signIn(t, "alice", "alice-pw")
	first, err := b.whoAmI(t, session, "same-origin")
	require.NoError(t, err)
	require.Zero(t, b.provider.Refreshes())

	b.clock.Advance(59*time.Minute + 30*time.Second) // inside the last minute of the hour-long token
	renewed, err := b.whoAmI(t, session, "same-origin")
	require.NoError(t, err)
	require.Equal(t, 1, b.provider.Refreshes())
	require.False(t, renewed.GetExpiresAt().AsTime().Before(first.GetExpiresAt().AsTime()), "the renewed token expires no sooner")

	b.provider.EndSessions("alice")
	b.clock.Advance(2 * time.Hour) // past the renewed token's expiry too
	_, err = b.whoAmI(t, session, "same-origin")
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
	require.ErrorContains(t, err, "could not be renewed")
	_, err = b.whoAmI(t, session, "same-origin")
	require.ErrorContains(t, err, "session has ended")
}

func TestConsoleSignIn_APastedStaticTokenBecomesASessionAndSignOutEndsIt(t *testing.T) {
	b := signInSetup(t)
	post := func(path, body string, cookies ...*http.Cookie) *http.Response {
		req, err := http.NewRequest("POST", b.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := noFollow.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		return res
	}
	require.Equal(t, http.StatusUnauthorized, post(consoleTokenPath, `{"token":"not-a-configured-token"}`).StatusCode)
	res := post(consoleTokenPath, `{"token":"`+roleToken("operator")+`"}`)
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	session := cookieNamed(res, sessionCookie)
	require.NotNil(t, session)
	require.NotContains(t, session.Value, roleToken("operator"), "the cookie is not the token")
	me, err := b.whoAmI(t, session, "same-origin")
	require.NoError(t, err)
	require.Equal(t, "olga", me.GetPrincipal())
	require.Equal(t, "token", me.GetAuthMethod())

	require.Equal(t, http.StatusNoContent, post(consoleLogoutPath, "", session).StatusCode)
	_, err = b.whoAmI(t, session, "same-origin")
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
}

// TestOIDCProvider_VerifiesPKCE: the test provider the console signs in
// against refuses a code exchanged with another verifier than the one its
// challenge was made from, and answers the right one.
func TestOIDCProvider_VerifiesPKCE(t *testing.T) {
	b := signInSetup(t)
	cfg := &oauth2.Config{ClientID: "weft-console", ClientSecret: "console-secret",
		Endpoint:    oauth2.Endpoint{AuthURL: b.provider.URL() + "/auth", TokenURL: b.provider.URL() + "/oauth/token"},
		RedirectURL: "http://127.0.0.1:1/ui/auth/callback", Scopes: []string{"openid"}}
	code := func() (string, string) {
		verifier := oauth2.GenerateVerifier()
		res := hop(t, "GET", cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), nil)
		require.Equal(t, http.StatusFound, res.StatusCode)
		id := mustQuery(t, res.Header.Get("Location"), "authRequestID")
		res = hop(t, "POST", b.provider.URL()+"/login/username", url.Values{"id": {id}, "username": {"alice"}, "password": {"alice-pw"}})
		next := res.Header.Get("Location")
		if !strings.HasPrefix(next, "http") {
			next = b.provider.URL() + next
		}
		res = hop(t, "GET", next, nil)
		c := mustQuery(t, res.Header.Get("Location"), "code")
		require.NotEmpty(t, c)
		return c, verifier
	}
	c, _ := code()
	_, err := cfg.Exchange(context.Background(), c, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	require.ErrorContains(t, err, "invalid_grant")
	c, _ = code()
	_, err = cfg.Exchange(context.Background(), c)
	require.ErrorContains(t, err, "code_verifier required")
	c, verifier := code()
	tok, err := cfg.Exchange(context.Background(), c, oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	require.NotEmpty(t, tok.Extra("id_token"))
}
