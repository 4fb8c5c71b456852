package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// The console's sign-in endpoints (docs/console.md#signing-in). The
// console's own script calls config, token and logout; login and callback
// are browser navigations to and from the issuer.
const (
	consoleAuthPath     = ConsolePath + "auth/"
	consoleConfigPath   = consoleAuthPath + "config"
	consoleLoginPath    = consoleAuthPath + "login"
	consoleCallbackPath = consoleAuthPath + "callback"
	consoleTokenPath    = consoleAuthPath + "token"
	consoleLogoutPath   = consoleAuthPath + "logout"
)

// consoleSignIn serves the console's sign-in: the OIDC authorization-code
// flow with PKCE run by weftd itself (a confidential or public client of
// the issuer), a pasted static token, and sign-out. Either way the browser
// ends up holding only an HttpOnly session cookie; the tokens stay in
// weftd's memory (consoleSessions).
type consoleSignIn struct {
	auth     *authInterceptor
	sessions *consoleSessions
	logger   *slog.Logger
}

// mountConsoleSignIn serves the sign-in endpoints on mux.
func mountConsoleSignIn(mux *http.ServeMux, s *consoleSignIn) {
	mux.HandleFunc("GET "+consoleConfigPath, s.config)
	mux.HandleFunc("GET "+consoleLoginPath, s.login)
	mux.HandleFunc("GET "+consoleCallbackPath, s.callback)
	mux.HandleFunc("POST "+consoleTokenPath, s.token)
	mux.HandleFunc("POST "+consoleLogoutPath, s.logout)
}

// config tells the console which ways of signing in this weftd offers.
func (s *consoleSignIn) config(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{
		"open":   s.auth.open(),
		"oidc":   s.auth.oidc != nil,
		"tokens": s.auth.tokens != nil || s.auth.oidc != nil,
	})
}

// oauthConfig answers the OAuth 2.0 client the console signs in as, its
// redirect taken from ConsoleURL or from r.
func (s *consoleSignIn) oauthConfig(r *http.Request) *oauth2.Config {
	v := s.auth.oidc
	return &oauth2.Config{ClientID: v.cfg.Audience, ClientSecret: v.cfg.ClientSecret, Endpoint: v.provider.Endpoint(),
		RedirectURL: redirectURL(v.cfg.ConsoleURL, r), Scopes: []string{oidc.ScopeOpenID, oidc.ScopeOfflineAccess, "profile"}}
}

// redirectURL answers the console's sign-in callback as the browser
// reaches it.
func redirectURL(base string, r *http.Request) string {
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return strings.TrimSuffix(base, "/") + consoleCallbackPath
}

// login starts the authorization-code flow: a fresh state, nonce and PKCE
// verifier kept server-side, the state also in a short-lived cookie that
// binds the flow to this browser, and a redirect to the issuer.
func (s *consoleSignIn) login(w http.ResponseWriter, r *http.Request) {
	if s.auth.oidc == nil {
		http.Error(w, "this weftd has no OpenID Connect issuer (--oidc-issuer)", http.StatusNotFound)
		return
	}
	state, nonce, verifier := randomToken(), randomToken(), oauth2.GenerateVerifier()
	if !s.sessions.beginLogin(state, pendingLogin{nonce: nonce, verifier: verifier}) {
		http.Error(w, "too many sign-ins in progress; try again in a minute", http.StatusServiceUnavailable)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: state, Path: "/", MaxAge: int(loginTTL / time.Second),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode}) // Lax: the issuer's redirect back is cross-site
	http.Redirect(w, r, s.oauthConfig(r).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce)), http.StatusFound)
}

// callback ends the flow: the state must be this browser's, the code is
// exchanged with the PKCE verifier, the ID token verified (signature,
// issuer, audience, expiry, nonce) and mapped to a caller, and a session
// made. Failures go back to the console with a reason, never a token.
func (s *consoleSignIn) callback(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/", MaxAge: -1, Secure: true, HttpOnly: true})
	if s.auth.oidc == nil {
		http.Error(w, "this weftd has no OpenID Connect issuer (--oidc-issuer)", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		s.backToConsole(w, r, "the identity provider refused the sign-in: "+clip(e+" "+q.Get("error_description"), 200))
		return
	}
	bound, err := r.Cookie(loginCookie)
	state := q.Get("state")
	pending, ok := s.sessions.endLogin(state)
	if err != nil || bound.Value != state || !ok {
		s.backToConsole(w, r, "the sign-in expired or was not started in this browser; sign in again")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	tok, err := s.oauthConfig(r).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(pending.verifier))
	if err != nil {
		s.fail(w, r, "the identity provider did not exchange the sign-in code", err)
		return
	}
	cred, err := s.credentialOf(ctx, tok, pending.nonce)
	if err != nil {
		s.fail(w, r, "the identity provider's ID token was refused", err)
		return
	}
	if _, err := s.auth.tokenCaller(ctx, cred.bearer); err != nil {
		s.backToConsole(w, r, connectMessage(err))
		return
	}
	s.startSession(w, r, cred)
}

// credentialOf verifies the ID token a token response carries (its nonce
// must be nonce unless empty) and answers the session's credential.
func (s *consoleSignIn) credentialOf(ctx context.Context, tok *oauth2.Token, nonce string) (credential, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return credential{}, errors.New("the token response has no id_token")
	}
	idt, err := s.auth.oidc.verifier.Verify(ctx, raw)
	if err != nil {
		return credential{}, fmt.Errorf("verify: %s", scrubOIDCError(err))
	}
	if nonce != "" && idt.Nonce != nonce {
		return credential{}, errors.New("the ID token's nonce is not this sign-in's")
	}
	return credential{bearer: raw, refresh: tok.RefreshToken, issued: idt.IssuedAt, expires: idt.Expiry}, nil
}

// refresh answers the credential the issuer renews cred into with its
// refresh token.
func (s *consoleSignIn) refresh(ctx context.Context, r credential) (credential, error) {
	cfg := s.oauthConfig(&http.Request{Host: ""}) // the redirect plays no part in a refresh
	tok, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: r.refresh, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		return credential{}, err
	}
	next, err := s.credentialOf(ctx, tok, "")
	if err != nil {
		return credential{}, err
	}
	if next.refresh == "" {
		next.refresh = r.refresh // an issuer that does not rotate refresh tokens
	}
	return next, nil
}

// tokenRequest is what the console posts to sign in with a pasted token.
type tokenRequest struct {
	Token string `json:"token"`
}

// token signs in with a pasted bearer token (a static token, or an OIDC
// token for scripts): weftd checks it exactly as on an API call and keeps
// it in the session, so the page's script forgets it at once.
func (s *consoleSignIn) token(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r.Header); err != nil {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": err.Error()})
		return
	}
	var req tokenRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 2*maxTokenBytes)).Decode(&req); err != nil || req.Token == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `the body must be {"token": "<bearer token>"}`})
		return
	}
	who, err := s.auth.tokenCaller(r.Context(), strings.TrimSpace(req.Token))
	if err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": connectMessage(err), "correlation_id": CorrelationID(r.Context())})
		return
	}
	s.startSession(w, r, credential{bearer: strings.TrimSpace(req.Token), expires: who.expires})
}

// logout ends the session and clears its cookie.
func (s *consoleSignIn) logout(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r.Header); err != nil {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": err.Error()})
		return
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.end(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// startSession makes the session, sets its cookie and answers: a redirect
// to the console after the issuer's callback, 204 to the console's script.
func (s *consoleSignIn) startSession(w http.ResponseWriter, r *http.Request, cred credential) {
	id, ok := s.sessions.start(cred)
	if !ok {
		s.backToConsole(w, r, "weftd holds too many console sessions; try again later")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
	if r.Method == http.MethodGet {
		http.Redirect(w, r, ConsolePath, http.StatusFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fail logs why a sign-in failed (never a token or code) and sends the
// browser back to the console with the reason.
func (s *consoleSignIn) fail(w http.ResponseWriter, r *http.Request, reason string, err error) {
	s.logger.LogAttrs(r.Context(), slog.LevelWarn, "console sign-in failed", slog.String("reason", reason),
		slog.String("error", scrubOIDCError(err)), slog.String("correlation_id", CorrelationID(r.Context())))
	s.backToConsole(w, r, reason)
}

// backToConsole sends the browser to the console's sign-in page with a
// message for the person (the fragment: it never reaches a server log).
func (s *consoleSignIn) backToConsole(w http.ResponseWriter, r *http.Request, message string) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": message})
		return
	}
	http.Redirect(w, r, ConsolePath+"#/signin?error="+url.QueryEscape(message), http.StatusFound)
}

// sameOrigin refuses a cookie-authenticated request a browser sent from
// another origin (SameSite=Strict keeps other sites' requests from carrying
// the cookie; this also refuses another port of the same host, which
// counts as the same site). Sec-Fetch-Site is what every current browser
// sends; a request that has an Origin but no Sec-Fetch-Site is refused,
// and one with neither is not from a browser's script.
func sameOrigin(h http.Header) error {
	switch site := h.Get("Sec-Fetch-Site"); {
	case site == "same-origin":
		return nil
	case site != "":
		return fmt.Errorf("a console session's call must come from the console's own origin (Sec-Fetch-Site: %s)", clip(site, 20))
	case h.Get("Origin") != "":
		return errors.New("a console session's call from a browser must carry Sec-Fetch-Site: same-origin")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// connectMessage answers a fault's message without its code prefix.
func connectMessage(err error) string {
	var ce interface{ Message() string }
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
