package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TokenSpec is one bearer token as configured: the token (in plain text, or
// its SHA-256 as "sha256:<64 hex digits>" so that a file need not hold the
// secret) and the tenant and principal a request carrying it runs as.
type TokenSpec struct {
	Token     string `json:"token"`
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"`
	// Roles are the token's roles within its tenant (roles.go); none means
	// DefaultRoles.
	Roles []string `json:"roles,omitempty"`
}

// TokenSet authenticates bearer tokens. It keeps only each token's SHA-256
// and compares a presented token's digest with every entry in constant time.
type TokenSet struct {
	entries []tokenEntry
}

type tokenEntry struct {
	digest [sha256.Size]byte
	who    caller
}

// Token limits.
const (
	hashedTokenPrefix  = "sha256:"
	minTokenBytes      = 16
	maxTokenBytes      = 4096
	maxPrincipalBytes  = 256
	maxTokensPerConfig = 10000
)

// NewTokenSet answers the set of the given tokens. It refuses an empty set, a
// token shorter than 16 bytes, a malformed hash, a bad tenant or principal,
// and the same token twice; errors name the entry, never the token.
func NewTokenSet(specs ...TokenSpec) (*TokenSet, error) {
	if len(specs) == 0 {
		return nil, errors.New("no bearer tokens configured")
	}
	if len(specs) > maxTokensPerConfig {
		return nil, fmt.Errorf("at most %d bearer tokens, got %d", maxTokensPerConfig, len(specs))
	}
	set := &TokenSet{entries: make([]tokenEntry, 0, len(specs))}
	seen := make(map[[sha256.Size]byte]int, len(specs))
	for i, s := range specs {
		e, err := entryOf(s)
		if err != nil {
			return nil, fmt.Errorf("token %d (tenant %q): %w", i+1, s.Tenant, err)
		}
		if j, dup := seen[e.digest]; dup {
			return nil, fmt.Errorf("token %d (tenant %q) is the same token as token %d", i+1, s.Tenant, j)
		}
		seen[e.digest] = i + 1
		set.entries = append(set.entries, e)
	}
	return set, nil
}

// Len answers how many tokens the set holds.
func (s *TokenSet) Len() int { return len(s.entries) }

// PlainTextTokens answers how many tokens were configured in plain text
// rather than as a sha256: digest.
func PlainTextTokens(specs []TokenSpec) int {
	n := 0
	for _, s := range specs {
		if !strings.HasPrefix(s.Token, hashedTokenPrefix) {
			n++
		}
	}
	return n
}

func entryOf(s TokenSpec) (tokenEntry, error) {
	if err := checkTenant(s.Tenant); err != nil {
		return tokenEntry{}, err
	}
	if err := checkPrincipal(s.Principal); err != nil {
		return tokenEntry{}, err
	}
	perms, err := permsOfRoles(s.Roles)
	if err != nil {
		return tokenEntry{}, err
	}
	digest, err := digestOf(s.Token)
	if err != nil {
		return tokenEntry{}, err
	}
	roles := s.Roles
	if len(roles) == 0 {
		roles = roleStrings(DefaultRoles)
	}
	return tokenEntry{digest: digest, who: caller{tenant: s.Tenant, principal: s.Principal, perms: perms, roles: roles}}, nil
}

// digestOf answers a configured token's SHA-256.
func digestOf(token string) ([sha256.Size]byte, error) {
	var d [sha256.Size]byte
	if hexDigest, ok := strings.CutPrefix(token, hashedTokenPrefix); ok {
		raw, err := hex.DecodeString(hexDigest)
		if err != nil || len(raw) != sha256.Size {
			return d, errors.New(`a hashed token must be "sha256:" and 64 hex digits`)
		}
		copy(d[:], raw)
		return d, nil
	}
	switch {
	case len(token) < minTokenBytes:
		return d, fmt.Errorf("a token must be at least %d bytes, got %d", minTokenBytes, len(token))
	case len(token) > maxTokenBytes:
		return d, fmt.Errorf("a token must be at most %d bytes, got %d", maxTokenBytes, len(token))
	case strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return d, errors.New("a token must not contain spaces or control characters")
	}
	return sha256.Sum256([]byte(token)), nil
}

func checkTenant(t string) error {
	switch {
	case t == "":
		return errors.New("tenant is empty")
	case len(t) > maxTenantIDBytes:
		return fmt.Errorf("tenant must be at most %d bytes, got %d", maxTenantIDBytes, len(t))
	case !printable(t):
		return errors.New("tenant must be printable UTF-8 without spaces")
	}
	return nil
}

func checkPrincipal(p string) error {
	switch {
	case p == "":
		return errors.New("principal is empty")
	case len(p) > maxPrincipalBytes:
		return fmt.Errorf("principal must be at most %d bytes, got %d", maxPrincipalBytes, len(p))
	case !printable(p):
		return errors.New("principal must be printable UTF-8 without spaces")
	}
	return nil
}

func printable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool {
		return !unicode.IsPrint(r) || unicode.IsSpace(r)
	}) < 0
}

// lookup answers who a presented token belongs to. It hashes the token and
// compares the digest with every entry, without stopping at a match, so the
// time taken says nothing about which entry (if any) matched.
func (s *TokenSet) lookup(presented string) (caller, bool) {
	d := sha256.Sum256([]byte(presented))
	var who caller
	found := 0
	for i := range s.entries {
		eq := subtle.ConstantTimeCompare(d[:], s.entries[i].digest[:])
		if eq == 1 {
			who = s.entries[i].who
		}
		found |= eq
	}
	return who, found == 1
}

// tokenFile is the token file's format.
type tokenFile struct {
	Tokens []TokenSpec `json:"tokens"`
}

// ParseTokenFile reads a token file:
//
//	{"tokens": [
//	  {"token": "a-long-random-secret", "tenant": "acme", "principal": "alice"},
//	  {"token": "sha256:<64 hex digits>", "tenant": "beta", "principal": "ci", "roles": ["worker"]}
//	]}
//
// A token without "roles" has DefaultRoles.
//
// Unknown keys are refused, so that a misspelt key does not silently drop a
// token's tenant.
func ParseTokenFile(data []byte) ([]TokenSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f tokenFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("token file: %w", scrubJSONError(err))
	}
	if dec.More() {
		return nil, errors.New("token file: trailing data after the JSON object")
	}
	return f.Tokens, nil
}

// scrubJSONError keeps a JSON error's position and kind but never quotes the
// input (which may hold a token).
func scrubJSONError(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("invalid JSON at byte %d", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%s must be a %s", typ.Field, typ.Type)
	}
	if strings.HasPrefix(err.Error(), "json: unknown field") {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return errors.New("invalid JSON")
}

// ParseTokenEnv reads WEFT_AUTH_TOKENS: comma-separated
// "token=tenant:principal" entries. The token is everything before the last
// "=", the tenant everything before the first ":" after it; a token may be
// "sha256:<hex>" here too.
func ParseTokenEnv(v string) ([]TokenSpec, error) {
	var out []TokenSpec
	for i, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		eq := strings.LastIndexByte(part, '=')
		if eq < 0 {
			return nil, fmt.Errorf(`WEFT_AUTH_TOKENS entry %d must be "token=tenant:principal"`, i+1)
		}
		tenant, principal, ok := strings.Cut(part[eq+1:], ":")
		if !ok {
			return nil, fmt.Errorf(`WEFT_AUTH_TOKENS entry %d must be "token=tenant:principal"`, i+1)
		}
		out = append(out, TokenSpec{Token: part[:eq], Tenant: tenant, Principal: principal})
	}
	return out, nil
}
