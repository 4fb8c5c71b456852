package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/weft-dev/weft/server"
)

// oidcFlags declares the OpenID Connect flags on fs and answers the function
// that reads them once fs is parsed.
func oidcFlags(fs *flag.FlagSet, getenv func(string) string) func() (server.OIDCConfig, error) {
	issuer := fs.String("oidc-issuer", getenv("WEFT_OIDC_ISSUER"), "OpenID Connect issuer URL whose tokens authenticate callers")
	audience := fs.String("oidc-audience", getenv("WEFT_OIDC_AUDIENCE"), "the audience (client id) an OIDC token must be issued for")
	principal := fs.String("oidc-principal-claim", envOr(getenv, "WEFT_OIDC_PRINCIPAL_CLAIM", server.DefaultOIDCPrincipalClaim), "the claim that is the principal")
	tenantClaim := fs.String("oidc-tenant-claim", envOr(getenv, "WEFT_OIDC_TENANT_CLAIM", server.DefaultOIDCTenantClaim), "the claim that is the tenant")
	tenant := fs.String("oidc-tenant", getenv("WEFT_OIDC_TENANT"), "every OIDC caller's tenant (instead of a claim)")
	roles := fs.String("oidc-roles-claim", envOr(getenv, "WEFT_OIDC_ROLES_CLAIM", server.DefaultOIDCRolesClaim), "the claim that holds the roles")
	skew := fs.String("oidc-clock-skew", envOr(getenv, "WEFT_OIDC_CLOCK_SKEW", server.DefaultOIDCClockSkew.String()), "how long after its expiry a token is still accepted (at most 5m)")
	secretFile := fs.String("oidc-client-secret-file", getenv("WEFT_OIDC_CLIENT_SECRET_FILE"), "file holding the console's client secret at the issuer (none: a public client, PKCE alone)")
	consoleURL := fs.String("console-url", getenv("WEFT_CONSOLE_URL"), "weftd's external base URL as browsers reach it, for the console's sign-in redirect (default: the request's host)")
	return func() (server.OIDCConfig, error) {
		cfg := server.OIDCConfig{Issuer: *issuer, Audience: *audience, PrincipalClaim: *principal,
			TenantClaim: *tenantClaim, Tenant: *tenant, RolesClaim: *roles}
		d, err := time.ParseDuration(*skew)
		if err != nil {
			return cfg, fmt.Errorf("OIDC clock skew must be a duration like 30s, got %q", *skew)
		}
		cfg.ClockSkew = d
		if cfg.Issuer == "" && cfg.Audience != "" {
			return cfg, fmt.Errorf("--oidc-audience needs --oidc-issuer")
		}
		if *consoleURL != "" {
			u, err := url.Parse(*consoleURL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
				return cfg, fmt.Errorf("--console-url must be a base URL like https://weft.example.com, got %q", *consoleURL)
			}
			cfg.ConsoleURL = *consoleURL
		}
		if *secretFile != "" {
			b, err := os.ReadFile(*secretFile)
			if err != nil {
				return cfg, fmt.Errorf("--oidc-client-secret-file: %w", err)
			}
			cfg.ClientSecret = strings.TrimSpace(string(b))
			if cfg.ClientSecret == "" {
				return cfg, fmt.Errorf("--oidc-client-secret-file %s is empty", *secretFile)
			}
		}
		return cfg, nil
	}
}

// loadOIDC answers the verifier of the configured issuer's tokens, nil when
// none is configured. The issuer's discovery document must be reachable at
// start; its keys are fetched as tokens need them.
func loadOIDC(ctx context.Context, opts options, logger *slog.Logger) (*server.OIDCVerifier, error) {
	if opts.oidc.Issuer == "" {
		return nil, nil
	}
	v, err := server.NewOIDCVerifier(ctx, opts.oidc)
	if err != nil {
		return nil, err
	}
	cfg := opts.oidc.WithDefaults()
	logger.Info("weftd authentication: OpenID Connect tokens", slog.String("issuer", cfg.Issuer),
		slog.String("audience", cfg.Audience), slog.String("principal_claim", cfg.PrincipalClaim),
		slog.String("tenant_claim", cfg.TenantClaim), slog.String("tenant", cfg.Tenant), slog.String("roles_claim", cfg.RolesClaim),
		slog.Bool("console_client_secret", cfg.ClientSecret != ""), slog.String("console_url", cfg.ConsoleURL))
	return v, nil
}
