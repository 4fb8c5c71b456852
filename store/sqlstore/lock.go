package sqlstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/internal/clock"
)

// The cluster's migration lock is one row with a lease, not an advisory lock
// (CockroachDB has none): a process takes it by writing its holder id and an
// expiry on the database's clock, renews it while it migrates, and deletes
// it when done. A process that dies holding it holds it until the lease
// expires; then the next process takes it over. Each statement is a
// transaction of its own.
const (
	createLockTableSQL = `CREATE TABLE IF NOT EXISTS weft_schema_lock (
    id INT8 PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
)`
	// takeLockSQL takes the lock when no one holds it or its lease expired;
	// it answers the holder only when this process got it.
	takeLockSQL = `INSERT INTO weft_schema_lock (id, holder, expires_at)
VALUES (1, $1, now() + $2::INT8 * INTERVAL '1 millisecond')
ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE weft_schema_lock.expires_at < now() OR weft_schema_lock.holder = excluded.holder
RETURNING holder`
	renewLockSQL = `UPDATE weft_schema_lock SET expires_at = now() + $2::INT8 * INTERVAL '1 millisecond'
WHERE id = 1 AND holder = $1`
	releaseLockSQL = "DELETE FROM weft_schema_lock WHERE id = 1 AND holder = $1"
)

// errLockLost ends a migration run whose lease could not be renewed.
var errLockLost = errors.New("sqlstore: the migration lock's lease was lost (not renewed in time)")

// migrationLock is a held migration lock. ctx ends when the lease is lost.
type migrationLock struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	s      *Store
	holder string
	done   chan struct{}
	once   sync.Once
}

// lockMigrations takes the migration lock, waiting with jittered backoff
// while another process holds it, at most Config.MigrationLockWait; then it
// answers *SchemaIncompleteError naming missing.
func (s *Store) lockMigrations(ctx context.Context, missing []string) (*migrationLock, error) {
	if err := s.createTable(ctx, createLockTableSQL); err != nil {
		return nil, fmt.Errorf("sqlstore: create migration lock table: %w", err)
	}
	holder := lockHolder()
	ttl := s.cfg.MigrationLease.Milliseconds()
	deadline := time.Now().Add(s.cfg.MigrationLockWait)
	wait := 10 * time.Millisecond
	for {
		var got string
		err := s.pool.QueryRow(ctx, takeLockSQL, holder, ttl).Scan(&got)
		if err == nil {
			return s.heldLock(ctx, holder), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) && !retryable(err) {
			return nil, fmt.Errorf("sqlstore: take the migration lock: %w", err)
		}
		if !time.Now().Before(deadline) {
			return nil, &SchemaIncompleteError{Missing: missing,
				Reason: fmt.Sprintf("another process held the migration lock for longer than %s", s.cfg.MigrationLockWait)}
		}
		if err := clock.Sleep(ctx, mrand.N(wait)+wait/2); err != nil {
			return nil, err
		}
		wait = min(2*wait, time.Second, s.cfg.MigrationLease/4)
	}
}

// heldLock starts renewing the lock every third of its lease.
func (s *Store) heldLock(ctx context.Context, holder string) *migrationLock {
	lctx, cancel := context.WithCancelCause(ctx)
	l := &migrationLock{ctx: lctx, cancel: cancel, s: s, holder: holder, done: make(chan struct{})}
	go l.renew()
	return l
}

func (l *migrationLock) renew() {
	defer close(l.done)
	ttl := l.s.cfg.MigrationLease
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		tag, err := l.s.pool.Exec(l.ctx, renewLockSQL, l.holder, ttl.Milliseconds())
		if l.ctx.Err() != nil {
			return
		}
		if err != nil || tag.RowsAffected() != 1 {
			l.cancel(errLockLost)
			return
		}
	}
}

// cause answers err, or errLockLost when the lease was lost meanwhile.
func (l *migrationLock) cause(err error) error {
	if c := context.Cause(l.ctx); errors.Is(c, errLockLost) {
		return fmt.Errorf("%w: %w", errLockLost, err)
	}
	return err
}

// release stops the renewal and deletes the lock row (when this process
// still holds it). A failed delete leaves the lease to expire.
func (l *migrationLock) release() {
	l.once.Do(func() {
		l.cancel(nil)
		<-l.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = l.s.pool.Exec(ctx, releaseLockSQL, l.holder)
	})
}

// lockHolder is a random id of this migration run.
func lockHolder() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "weftd-" + strings.ToLower(hex.EncodeToString(b[:]))
}
