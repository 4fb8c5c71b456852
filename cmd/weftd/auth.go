package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"

	"github.com/weft-dev/weft/server"
)

// errOpenOnPublicAddress is weftd's refusal to serve without tokens beyond
// loopback.
var errOpenOnPublicAddress = errors.New("no bearer tokens are configured and the listen address is not loopback: " +
	"configure --auth-tokens FILE (or WEFT_AUTH_TOKENS_FILE / WEFT_AUTH_TOKENS), listen on 127.0.0.1, " +
	"or pass --insecure-no-auth to serve every caller as tenant \"default\"")

// loadAuth answers the configured token set, or nil to run open, and logs
// what it decided. Running open is allowed on a loopback address (WARN) or
// with --insecure-no-auth (ERROR-level line, on every address).
func loadAuth(opts options, logger *slog.Logger) (*server.TokenSet, error) {
	specs, err := tokenSpecs(opts, logger)
	if err != nil {
		return nil, err
	}
	if len(specs) > 0 {
		tokens, err := server.NewTokenSet(specs...)
		if err != nil {
			return nil, fmt.Errorf("bearer tokens: %w", err)
		}
		logger.Info("weftd authentication: bearer tokens", slog.Int("tokens", tokens.Len()))
		warnDefaultRoles(specs, logger)
		return tokens, nil
	}
	loopback := isLoopback(opts.addr)
	switch {
	case opts.tls.clientCA != "" || opts.oidc.Issuer != "":
		logger.Info("weftd authentication: no static bearer tokens", slog.Bool("client_certificates", opts.tls.clientCA != ""),
			slog.Bool("oidc", opts.oidc.Issuer != ""))
		return nil, nil
	case opts.insecureNoAuth:
		logger.Error("weftd runs WITHOUT AUTHENTICATION (--insecure-no-auth): every caller is tenant \"default\", principal \"anonymous\"",
			slog.String("addr", opts.addr), slog.Bool("loopback", loopback))
		return nil, nil
	case loopback:
		logger.Warn("weftd runs without authentication on a loopback address: every caller is tenant \"default\", principal \"anonymous\"; configure --auth-tokens before listening beyond loopback",
			slog.String("addr", opts.addr))
		return nil, nil
	}
	return nil, errOpenOnPublicAddress
}

// warnDefaultRoles says how many tokens name no roles and so hold every
// permission (server.DefaultRoles).
func warnDefaultRoles(specs []server.TokenSpec, logger *slog.Logger) {
	n := 0
	for _, s := range specs {
		if len(s.Roles) == 0 {
			n++
		}
	}
	if n > 0 {
		logger.Warn("bearer tokens without \"roles\" hold every permission (roles admin and worker): give each token its roles in the token file",
			slog.Int("tokens", n))
	}
}

// tokenSpecs reads the token file and WEFT_AUTH_TOKENS.
func tokenSpecs(opts options, logger *slog.Logger) ([]server.TokenSpec, error) {
	var specs []server.TokenSpec
	if opts.tokenFile != "" {
		data, err := os.ReadFile(opts.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("auth tokens file: %w", err)
		}
		fromFile, err := server.ParseTokenFile(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", opts.tokenFile, err)
		}
		if len(fromFile) == 0 {
			return nil, fmt.Errorf("%s: the token file lists no tokens", opts.tokenFile)
		}
		warnIfReadable(opts.tokenFile, server.PlainTextTokens(fromFile), logger)
		specs = append(specs, fromFile...)
	}
	if opts.envTokens != "" {
		fromEnv, err := server.ParseTokenEnv(opts.envTokens)
		if err != nil {
			return nil, err
		}
		specs = append(specs, fromEnv...)
	}
	return specs, nil
}

// warnIfReadable says so when a file holding plain-text tokens can be read
// by other users.
func warnIfReadable(path string, plain int, logger *slog.Logger) {
	info, err := os.Stat(path)
	if err != nil || plain == 0 || info.Mode().Perm()&fs.FileMode(0o077) == 0 {
		return
	}
	logger.Warn("the auth tokens file holds plain-text tokens and is readable by other users: chmod 600 it, or store sha256: digests",
		slog.String("file", path), slog.String("mode", info.Mode().Perm().String()))
}

// isLoopback reports whether every address addr can listen on is loopback.
// An empty host (all interfaces) is not; a name counts only when every
// address it resolves to is loopback.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}
