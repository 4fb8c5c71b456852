package server

import (
	"net/http"
	"strings"

	"github.com/weft-dev/weft/engine"
)

// TenantHeader names the tenant a request runs as, until bearer-token
// authentication (issue 7 item 3) derives the tenant and principal from the
// caller's credentials. It is trusted as sent: do not expose a weftd that
// relies on it to callers that must not choose their tenant.
const TenantHeader = "Weft-Tenant"

// The tenant and principal of a request that names none.
const (
	DefaultTenant    = "default"
	AnonymousCaller  = "anonymous"
	maxTenantIDBytes = 128
)

// caller is who a request runs as.
type caller struct {
	tenant    string
	principal string
}

// callerOf is the one place a request's tenant and principal are decided.
// For now every request is the anonymous principal, in the tenant its
// Weft-Tenant header names or else "default"; the authentication work
// replaces this function (and only this function).
func callerOf(h http.Header) (caller, error) {
	tenant := strings.TrimSpace(h.Get(TenantHeader))
	if tenant == "" {
		tenant = DefaultTenant
	}
	if len(tenant) > maxTenantIDBytes {
		return caller{}, &engine.Error{Code: engine.CodeInvalidArgument, Message: "invalid request",
			Violations: []engine.FieldViolation{{Field: TenantHeader, Rule: "tenant.max_bytes",
				Message: "the Weft-Tenant header must be at most 128 bytes"}}}
	}
	return caller{tenant: tenant, principal: AnonymousCaller}, nil
}
