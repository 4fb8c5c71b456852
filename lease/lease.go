package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrHeld says another owner holds the lease.
var ErrHeld = errors.New("lease: held by another owner")

// ErrLost says the lease is no longer held by its owner (it expired, or
// someone deleted or took it).
var ErrLost = errors.New("lease: lost")

// Lease is a held claim.
type Lease struct {
	Name  string
	Owner string
	TTL   time.Duration
}

// Manager grants, renews and releases leases. Implementations are safe for
// concurrent use.
type Manager interface {
	// Acquire claims name for owner for ttl. It answers ErrHeld when another
	// owner holds it; an owner that already holds it renews it.
	Acquire(ctx context.Context, name, owner string, ttl time.Duration) (Lease, error)
	// Renew extends a held lease by its TTL, or answers ErrLost.
	Renew(ctx context.Context, l Lease) error
	// Release gives a held lease up; releasing a lost lease is not an error.
	Release(ctx context.Context, l Lease) error
}

// validate checks the arguments every implementation needs.
func validate(name, owner string, ttl time.Duration) error {
	switch {
	case name == "":
		return errors.New("lease: name must not be empty")
	case owner == "":
		return errors.New("lease: owner must not be empty")
	case ttl < 10*time.Millisecond:
		return fmt.Errorf("lease: TTL must be at least 10ms, got %s", ttl)
	}
	return nil
}

// Validate checks a lease request; backends call it before they talk to
// their server.
func Validate(name, owner string, ttl time.Duration) error { return validate(name, owner, ttl) }

// Local is the in-process Manager of the embedded deployment.
type Local struct {
	now  func() time.Time
	mu   sync.Mutex
	held map[string]localEntry
}

type localEntry struct {
	owner   string
	expires time.Time
}

// NewLocal answers an in-process manager; now defaults to time.Now.
func NewLocal(now func() time.Time) *Local {
	if now == nil {
		now = time.Now
	}
	return &Local{now: now, held: map[string]localEntry{}}
}

// Acquire implements Manager.
func (m *Local) Acquire(_ context.Context, name, owner string, ttl time.Duration) (Lease, error) {
	if err := validate(name, owner, ttl); err != nil {
		return Lease{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if e, ok := m.held[name]; ok && e.owner != owner && now.Before(e.expires) {
		return Lease{}, ErrHeld
	}
	m.held[name] = localEntry{owner: owner, expires: now.Add(ttl)}
	return Lease{Name: name, Owner: owner, TTL: ttl}, nil
}

// Renew implements Manager.
func (m *Local) Renew(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e, ok := m.held[l.Name]
	if !ok || e.owner != l.Owner || !now.Before(e.expires) {
		return ErrLost
	}
	m.held[l.Name] = localEntry{owner: l.Owner, expires: now.Add(l.TTL)}
	return nil
}

// Release implements Manager.
func (m *Local) Release(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.held[l.Name]; ok && e.owner == l.Owner {
		delete(m.held, l.Name)
	}
	return nil
}
