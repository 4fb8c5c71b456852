// Package redislease is the Redis lease.Manager of the cluster deployment:
// SET NX PX to acquire, and compare-then-expire and compare-then-delete
// scripts so that only the owner renews or releases. Redis losing a key (a
// restart without persistence, an operator, eviction) loses the lease; that
// costs duplicate work at most, never correctness.
//
// Layering: it imports lease and github.com/redis/go-redis/v9; weftd opens
// its client with internal/redisconn.
package redislease

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weft-dev/weft/lease"
)

// Manager is a lease.Manager on Redis.
type Manager struct {
	rdb    *redis.Client
	prefix string
}

var _ lease.Manager = (*Manager)(nil)

// New answers a manager on rdb whose keys start with prefix (e.g. "weft:lease:").
func New(rdb *redis.Client, prefix string) *Manager {
	return &Manager{rdb: rdb, prefix: prefix}
}

// Key answers the Redis key of a lease name.
func (m *Manager) Key(name string) string { return m.prefix + name }

var (
	renewScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)
)

// Acquire implements lease.Manager.
func (m *Manager) Acquire(ctx context.Context, name, owner string, ttl time.Duration) (lease.Lease, error) {
	if err := lease.Validate(name, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	l := lease.Lease{Name: name, Owner: owner, TTL: ttl}
	ok, err := m.rdb.SetNX(ctx, m.Key(name), owner, ttl).Result()
	if err != nil {
		return lease.Lease{}, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	if ok {
		return l, nil
	}
	if err := m.Renew(ctx, l); err != nil {
		if errors.Is(err, lease.ErrLost) {
			return lease.Lease{}, lease.ErrHeld
		}
		return lease.Lease{}, err
	}
	return l, nil
}

// Renew implements lease.Manager.
func (m *Manager) Renew(ctx context.Context, l lease.Lease) error {
	n, err := renewScript.Run(ctx, m.rdb, []string{m.Key(l.Name)}, l.Owner, l.TTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("renew lease %s: %w", l.Name, err)
	}
	if n != 1 {
		return lease.ErrLost
	}
	return nil
}

// Release implements lease.Manager.
func (m *Manager) Release(ctx context.Context, l lease.Lease) error {
	if err := releaseScript.Run(ctx, m.rdb, []string{m.Key(l.Name)}, l.Owner).Err(); err != nil {
		return fmt.Errorf("release lease %s: %w", l.Name, err)
	}
	return nil
}
