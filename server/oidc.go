package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// OIDCConfig says which OpenID Connect issuer's tokens authenticate callers
// and how a token's claims map to a caller.
type OIDCConfig struct {
	// Issuer is the issuer URL; its discovery document
	// (/.well-known/openid-configuration) names the keys (JWKS).
	Issuer string
	// Audience is the value a token's "aud" must hold (the client id the
	// tokens are issued for).
	Audience string
	// PrincipalClaim names the claim that is the principal. Default "sub".
	PrincipalClaim string
	// TenantClaim names the claim that is the tenant. Default "weft_tenant".
	TenantClaim string
	// Tenant, when set, is every OIDC caller's tenant, and TenantClaim is not
	// read (one identity provider per tenant).
	Tenant string
	// RolesClaim names the claim holding the caller's roles: a string or a
	// list of strings; values that name no role are ignored, and a token
	// with none is granted no permission. Default "roles".
	RolesClaim string
	// ClockSkew is how long after "exp" a token is still accepted. Default
	// 30s; at most 5m.
	ClockSkew time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ClientSecret is the console's client secret at the issuer, for an
	// issuer that registers the console as a confidential client; empty: a
	// public client (PKCE alone). The console signs in as client Audience.
	ClientSecret string
	// ConsoleURL is weftd's external base URL as browsers reach it
	// ("https://weft.example.com"); the console's sign-in redirect is
	// ConsoleURL + "/ui/auth/callback", which the issuer must list. Empty:
	// taken from each request's host (scheme https under TLS).
	ConsoleURL string
}

// Defaults of OIDCConfig.
const (
	DefaultOIDCPrincipalClaim = "sub"
	DefaultOIDCTenantClaim    = "weft_tenant"
	DefaultOIDCRolesClaim     = "roles"
	DefaultOIDCClockSkew      = 30 * time.Second
	maxOIDCClockSkew          = 5 * time.Minute
)

// WithDefaults answers the config with every unset field given its default.
func (c OIDCConfig) WithDefaults() OIDCConfig {
	if c.PrincipalClaim == "" {
		c.PrincipalClaim = DefaultOIDCPrincipalClaim
	}
	if c.TenantClaim == "" {
		c.TenantClaim = DefaultOIDCTenantClaim
	}
	if c.RolesClaim == "" {
		c.RolesClaim = DefaultOIDCRolesClaim
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = DefaultOIDCClockSkew
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

func (c OIDCConfig) validate() error {
	switch {
	case c.Issuer == "":
		return errors.New("OIDC issuer is empty")
	case c.Audience == "":
		return errors.New("OIDC audience is empty: tokens must be checked against the client id they were issued for")
	case c.ClockSkew < 0 || c.ClockSkew > maxOIDCClockSkew:
		return fmt.Errorf("OIDC clock skew must be from 0 to %s, got %s", maxOIDCClockSkew, c.ClockSkew)
	}
	if c.Tenant != "" {
		return checkTenant(c.Tenant)
	}
	return nil
}

// OIDCVerifier verifies bearer tokens an OpenID provider issued: the
// signature against the issuer's published keys (fetched through discovery,
// cached, and fetched again when a token names a key not yet seen, which is
// how a provider's key rotation reaches weft), the issuer, the audience and
// the expiry. go-oidc does the verification; weft maps the claims.
type OIDCVerifier struct {
	cfg      OIDCConfig
	verifier *oidc.IDTokenVerifier
	// provider is the issuer's discovery document: the console's sign-in
	// reads its authorization and token endpoints (console_signin.go).
	provider *oidc.Provider
}

// NewOIDCVerifier reads the issuer's discovery document and answers a
// verifier of its tokens. ctx bounds the discovery and carries the HTTP
// client key fetches use (oidc.ClientContext), and must outlive the verifier.
func NewOIDCVerifier(ctx context.Context, cfg OIDCConfig) (*OIDCVerifier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	provider, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OIDC discovery of %s: %w", cfg.Issuer, err)
	}
	skew, now := cfg.ClockSkew, cfg.Now
	v := provider.VerifierContext(ctx, &oidc.Config{
		ClientID: cfg.Audience,
		Now:      func() time.Time { return now().Add(-skew) },
	})
	return &OIDCVerifier{cfg: cfg, verifier: v, provider: provider}, nil
}

// looksLikeJWT reports whether a bearer token has a JWT's three parts, so
// that a static token is never sent to the verifier.
func looksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 }

// caller verifies a token and answers its caller, or an error that says
// what was wrong without quoting the token.
func (v *OIDCVerifier) caller(ctx context.Context, token string) (caller, error) {
	idt, err := v.verifier.Verify(ctx, token)
	if err != nil {
		return caller{}, fmt.Errorf("invalid OIDC token: %s", scrubOIDCError(err))
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return caller{}, errors.New("invalid OIDC token: its claims are not a JSON object")
	}
	return v.mapClaims(claims)
}

// scrubOIDCError keeps the kind of a verification failure (expired, wrong
// audience, wrong issuer, bad signature, …) and drops anything after it.
func scrubOIDCError(err error) string {
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		return "the token has expired"
	}
	msg := strings.TrimPrefix(err.Error(), "oidc: ")
	if i := strings.IndexAny(msg, "(:"); i > 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// mapClaims answers the caller the claims name.
func (v *OIDCVerifier) mapClaims(claims map[string]json.RawMessage) (caller, error) {
	principal, err := stringClaim(claims, v.cfg.PrincipalClaim)
	if err != nil {
		return caller{}, err
	}
	if err := checkPrincipal(principal); err != nil {
		return caller{}, fmt.Errorf("OIDC claim %q (the principal): %w", v.cfg.PrincipalClaim, err)
	}
	tenant := v.cfg.Tenant
	if tenant == "" {
		if tenant, err = stringClaim(claims, v.cfg.TenantClaim); err != nil {
			return caller{}, err
		}
		if err := checkTenant(tenant); err != nil {
			return caller{}, fmt.Errorf("OIDC claim %q (the tenant): %w", v.cfg.TenantClaim, err)
		}
	}
	roles := rolesClaim(claims[v.cfg.RolesClaim])
	perms, _ := permsOfRoles(roles) // every role rolesClaim answers is known
	if len(roles) == 0 {
		perms = 0 // a token naming no role is granted nothing (not DefaultRoles)
	}
	var exp struct {
		Exp int64 `json:"exp"`
	}
	if raw, ok := claims["exp"]; ok {
		_ = json.Unmarshal(raw, &exp.Exp)
	}
	return caller{tenant: tenant, principal: principal, perms: perms, roles: roles,
		authenticated: true, method: AuthOIDC, expires: time.Unix(exp.Exp, 0)}, nil
}

// stringClaim answers a claim that must be a non-empty string.
func stringClaim(claims map[string]json.RawMessage, name string) (string, error) {
	raw, ok := claims[name]
	if !ok {
		return "", fmt.Errorf("the OIDC token has no %q claim", name)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" {
		return "", fmt.Errorf("the OIDC token's %q claim must be a non-empty string", name)
	}
	return s, nil
}

// rolesClaim answers the roles a roles claim (a string or a list of
// strings) names; values naming no role are ignored.
func rolesClaim(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		list = strings.Fields(one)
	}
	var roles []string
	for _, r := range list {
		if _, ok := rolePerms[Role(r)]; ok && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	return roles
}
