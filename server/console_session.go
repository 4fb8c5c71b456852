package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// The console's cookies. __Host- makes the browser insist on Secure, Path=/
// and no Domain, so no other host and no plaintext page can set them.
const (
	sessionCookie = "__Host-weft-session"
	loginCookie   = "__Host-weft-login"
)

// Console session limits.
const (
	// sessionLifetime is how long a console session lasts at most, however
	// often its credential is renewed.
	sessionLifetime = 12 * time.Hour
	// loginTTL is how long a started sign-in may take at the issuer.
	loginTTL    = 10 * time.Minute
	maxSessions = 10000
	maxLogins   = 10000
	// maxRefreshAhead bounds how long before its expiry an OIDC credential
	// is renewed (a quarter of its lifetime, at most this).
	maxRefreshAhead = time.Minute
)

var errSessionExpired = errors.New("your sign-in expired and could not be renewed; sign in again")

// credential is what a console session authenticates its calls with: a
// bearer token (a static token, or the current OIDC ID token), and for
// OIDC the refresh token that renews it and the token's issue and expiry.
type credential struct {
	bearer, refresh string
	issued, expires time.Time
}

// renewAt answers when the credential should be renewed: a quarter of its
// lifetime before it expires, at most maxRefreshAhead; zero when it cannot
// be (no refresh token).
func (c credential) renewAt() time.Time {
	if c.refresh == "" || c.expires.IsZero() {
		return time.Time{}
	}
	ahead := min(c.expires.Sub(c.issued)/4, maxRefreshAhead)
	return c.expires.Add(-ahead)
}

// pendingLogin is a sign-in sent to the issuer and not yet back.
type pendingLogin struct {
	nonce, verifier string
	started         time.Time
}

// consoleSession is one signed-in browser.
type consoleSession struct {
	mu   sync.Mutex // serialises renewals
	cred credential
	ends time.Time
}

// consoleSessions keeps the console's sessions in this weftd's memory,
// keyed by the SHA-256 of the cookie's value: tokens never reach the
// browser's script or the store. A weftd restart signs everyone out;
// behind a load balancer the console needs session affinity
// (docs/console.md#signing-in).
type consoleSessions struct {
	mu     sync.Mutex
	byID   map[[sha256.Size]byte]*consoleSession
	logins map[string]pendingLogin
	now    func() time.Time
}

func newConsoleSessions(now func() time.Time) *consoleSessions {
	if now == nil {
		now = time.Now
	}
	return &consoleSessions{byID: map[[sha256.Size]byte]*consoleSession{}, logins: map[string]pendingLogin{}, now: now}
}

// start makes a session for cred and answers its cookie value; false when
// the table is full of live sessions.
func (s *consoleSessions) start(cred credential) (string, bool) {
	id := randomToken()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= maxSessions {
		for k, v := range s.byID {
			if !now.Before(v.ends) {
				delete(s.byID, k)
			}
		}
		if len(s.byID) >= maxSessions {
			return "", false
		}
	}
	s.byID[sha256.Sum256([]byte(id))] = &consoleSession{cred: cred, ends: now.Add(sessionLifetime)}
	return id, true
}

// get answers the live session of a cookie value, or nil.
func (s *consoleSessions) get(id string) *consoleSession {
	key := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	ses := s.byID[key]
	if ses != nil && !s.now().Before(ses.ends) {
		delete(s.byID, key)
		return nil
	}
	return ses
}

// end forgets a session.
func (s *consoleSessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, sha256.Sum256([]byte(id)))
}

// beginLogin remembers a sign-in sent to the issuer; false when too many
// are pending.
func (s *consoleSessions) beginLogin(state string, p pendingLogin) bool {
	now := s.now()
	p.started = now
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.logins) >= maxLogins {
		for k, v := range s.logins {
			if now.Sub(v.started) > loginTTL {
				delete(s.logins, k)
			}
		}
		if len(s.logins) >= maxLogins {
			return false
		}
	}
	s.logins[state] = p
	return true
}

// endLogin answers and forgets the pending sign-in of state, if it is
// there and fresh: each state serves one callback.
func (s *consoleSessions) endLogin(state string) (pendingLogin, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.logins[state]
	delete(s.logins, state)
	return p, ok && state != "" && s.now().Sub(p.started) <= loginTTL
}

// sessionCaller authenticates a request by its console session cookie: the
// session's credential, renewed through the issuer when it is due, checked
// exactly as a bearer token is. A session whose credential expired and
// could not be renewed ends.
func (a *authInterceptor) sessionCaller(ctx context.Context, h http.Header, id string) (caller, error) {
	if err := sameOrigin(h); err != nil {
		return caller{}, unauthenticated(err.Error())
	}
	ses := a.sessions.get(id)
	if ses == nil {
		return caller{}, unauthenticated("your console session has ended; sign in again")
	}
	cred, err := a.current(ctx, ses)
	if err != nil {
		a.sessions.end(id)
		return caller{}, unauthenticated(err.Error())
	}
	who, err := a.tokenCaller(ctx, cred.bearer)
	if err != nil {
		a.sessions.end(id)
		return caller{}, err
	}
	return who, nil
}

// current answers the session's credential, renewed first when due. A
// renewal that fails leaves a credential that has not expired in use; one
// that has expired ends the session.
func (a *authInterceptor) current(ctx context.Context, ses *consoleSession) (credential, error) {
	ses.mu.Lock()
	defer ses.mu.Unlock()
	now := a.sessions.now()
	renew := ses.cred.renewAt()
	if renew.IsZero() || now.Before(renew) || a.signIn == nil {
		if !ses.cred.expires.IsZero() && !now.Before(ses.cred.expires) {
			return credential{}, errSessionExpired
		}
		return ses.cred, nil
	}
	next, err := a.signIn.refresh(context.WithoutCancel(ctx), ses.cred)
	if err == nil {
		ses.cred = next
		return next, nil
	}
	a.signIn.logger.LogAttrs(ctx, slog.LevelWarn, "console session not renewed",
		slog.String("error", scrubOIDCError(err)), slog.String("correlation_id", CorrelationID(ctx)))
	if !now.Before(ses.cred.expires) {
		return credential{}, errSessionExpired
	}
	return ses.cred, nil
}
