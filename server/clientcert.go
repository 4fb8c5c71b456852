package server

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
)

// peerCertKey carries the verified client certificate of a request made
// over mutual TLS.
type peerCertKey struct{}

// withPeerCertificate puts the leaf of the request's verified client
// certificate chain in its context, where authentication finds it (a
// JSON-RPC call forwarded in-process keeps the context, not the TLS state).
func withPeerCertificate(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
			r = r.WithContext(context.WithValue(r.Context(), peerCertKey{}, r.TLS.VerifiedChains[0][0]))
		}
		h.ServeHTTP(w, r)
	})
}

// peerCertificate answers the request's verified client certificate.
func peerCertificate(ctx context.Context) (*x509.Certificate, bool) {
	c, ok := ctx.Value(peerCertKey{}).(*x509.Certificate)
	return c, ok
}

// DefaultCertificateRoles are the roles of a client certificate whose
// subject names none: client certificates are for workers.
var DefaultCertificateRoles = []Role{RoleWorker}

// certificateCaller maps a verified client certificate's subject to its
// caller as Kubernetes does: the common name (CN) is the principal, the
// first organization (O) the tenant, and each organizational unit (OU) that
// names a role is one of its roles (none: DefaultCertificateRoles).
func certificateCaller(cert *x509.Certificate) (caller, error) {
	subject := cert.Subject
	if err := checkPrincipal(subject.CommonName); err != nil {
		return caller{}, errors.New("client certificate subject CN (the principal): " + err.Error())
	}
	if len(subject.Organization) == 0 {
		return caller{}, errors.New("client certificate subject has no O (the tenant)")
	}
	if err := checkTenant(subject.Organization[0]); err != nil {
		return caller{}, errors.New("client certificate subject O (the tenant): " + err.Error())
	}
	var roles []string
	for _, ou := range subject.OrganizationalUnit {
		if _, ok := rolePerms[Role(ou)]; ok {
			roles = append(roles, ou)
		}
	}
	if len(roles) == 0 {
		roles = roleStrings(DefaultCertificateRoles)
	}
	perms, err := permsOfRoles(roles)
	if err != nil {
		return caller{}, err
	}
	return caller{tenant: subject.Organization[0], principal: subject.CommonName, perms: perms,
		authenticated: true, method: AuthClientCertificate, roles: roles}, nil
}
