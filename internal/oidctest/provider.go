package oidctest

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a person who can sign in at a Provider: the username and
// password its login page takes, and the tenant and roles its tokens claim
// (weft_tenant, roles).
type User struct {
	Username, Password, Tenant string
	Roles                      []string
}

// ProviderConfig configures a Provider: its one client (a confidential web
// client; PKCE is verified whenever the authorization request carried a
// challenge), the redirect URIs it accepts as path.Match globs
// ("http://127.0.0.1:*/ui/auth/callback"), how long its ID tokens last,
// and its users.
type ProviderConfig struct {
	ClientID, ClientSecret string
	RedirectGlobs          []string
	IDTokenLifetime        time.Duration
	Users                  []User
}

// Provider is a whole OpenID provider for tests: zitadel/oidc's op package
// (discovery, JWKS, the authorization endpoint, the token endpoint with
// PKCE verification and refresh tokens) over its example storage and login
// page, which a browser can fill and submit. Only the claims weft maps and
// the client's lifetime and redirect globs are this package's.
type Provider struct {
	srv     *httptest.Server
	storage *providerStorage
}

// NewProvider starts a provider, stopped when the test ends.
func NewProvider(t testing.TB, cfg ProviderConfig) *Provider {
	t.Helper()
	if cfg.IDTokenLifetime == 0 {
		cfg.IDTokenLifetime = time.Hour
	}
	users := userStore{byName: map[string]User{}}
	for _, u := range cfg.Users {
		users.byName[u.Username] = u
	}
	client := storage.WebClient(cfg.ClientID, cfg.ClientSecret, cfg.RedirectGlobs...)
	st := &providerStorage{
		Storage: storage.NewStorageWithClients(users, map[string]*storage.Client{cfg.ClientID: client}),
		users:   users, client: &providerClient{Client: client, globs: cfg.RedirectGlobs, lifetime: cfg.IDTokenLifetime},
	}
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = exampleop.SetupServer(issuer, st, nil, false)
	srv.Start()
	t.Cleanup(srv.Close)
	return &Provider{srv: srv, storage: st}
}

// URL answers the issuer URL.
func (p *Provider) URL() string { return p.srv.URL }

// EndSessions drops every access and refresh token the client holds for
// the user, as a sign-out at the provider or an administrator's
// revocation does: the next refresh fails.
func (p *Provider) EndSessions(username string) {
	_ = p.storage.TerminateSession(context.Background(), username, p.storage.client.GetID())
}

// Refreshes answers how many refresh-token grants the provider served.
func (p *Provider) Refreshes() int {
	p.storage.mu.Lock()
	defer p.storage.mu.Unlock()
	return p.storage.refreshes
}

// providerStorage is the example storage with weft's claims added to ID
// tokens and this test's client.
type providerStorage struct {
	*storage.Storage
	users     userStore
	client    *providerClient
	mu        sync.Mutex
	refreshes int
}

// GetClientByClientID answers the test's client for its id.
func (s *providerStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if id == s.client.GetID() {
		return s.client, nil
	}
	return s.Storage.GetClientByClientID(ctx, id)
}

// SetUserinfoFromRequest adds the tenant and roles claims weft maps.
func (s *providerStorage) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	if u, ok := s.users.byName[req.GetSubject()]; ok {
		info.AppendClaims("weft_tenant", u.Tenant)
		info.AppendClaims("roles", u.Roles)
	}
	return nil
}

// TokenRequestByRefreshToken counts refresh grants.
func (s *providerStorage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	s.refreshes++
	s.mu.Unlock()
	return s.Storage.TokenRequestByRefreshToken(ctx, token)
}

// providerClient is the example web client with redirect globs and the
// test's ID token lifetime.
type providerClient struct {
	*storage.Client
	globs    []string
	lifetime time.Duration
}

func (c *providerClient) RedirectURIGlobs() []string           { return c.globs }
func (c *providerClient) PostLogoutRedirectURIGlobs() []string { return c.globs }
func (c *providerClient) IDTokenLifetime() time.Duration       { return c.lifetime }

// userStore is the example storage's user store over the test's users;
// a user's id is its username.
type userStore struct {
	byName map[string]User
}

func (u userStore) GetUserByID(id string) *storage.User { return u.GetUserByUsername(id) }

func (u userStore) GetUserByUsername(name string) *storage.User {
	x, ok := u.byName[name]
	if !ok {
		return nil
	}
	return &storage.User{ID: x.Username, Username: x.Username, Password: x.Password, FirstName: x.Username,
		Email: x.Username + "@example.test", EmailVerified: true, PreferredLanguage: language.English}
}

func (u userStore) ExampleClientID() string { return "" }
