package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-dev/weft/store"
)

// A transaction is in doubt when its COMMIT was sent and its answer never
// read: its caller's context ended, or the connection broke. The client has
// closed the connection then (pgconn does, on a context's end), but the
// server still holds every message sent before the close and runs them in
// order, COMMIT included: it may commit after the client has given up, for
// as long as the backend waits on a lock or for a CPU. Until that backend
// has ended, the transaction's outcome is not only unknown but undecided.
//
// So the store keeps a transaction in doubt in flight until its backend has
// ended (endSession): its group's keys stay held, and with one group in
// flight at most the committer stays busy, so every later batch on any of
// those keys is committed after the in-doubt transaction committed or died
// (store.OutcomeUnknownError's ordering rule).

// inDoubtError is the cause of the *store.OutcomeUnknownError of a
// transaction in doubt: the backend that may still commit it.
type inDoubtError struct {
	pid uint32
	err error
}

func (e *inDoubtError) Error() string {
	return fmt.Sprintf("sqlstore: COMMIT sent, no answer (backend %d): %v", e.pid, e.err)
}

func (e *inDoubtError) Unwrap() error { return e.err }

// inDoubt is the error of an attempt whose COMMIT was sent on the connection
// of backend pid and whose answer failed with err.
func inDoubt(pid uint32, err error) error {
	return &store.OutcomeUnknownError{Cause: &inDoubtError{pid: pid, err: err}}
}

// inDoubtBackend answers the backend of an in-doubt transaction that err
// reports, or 0.
func inDoubtBackend(err error) uint32 {
	var d *inDoubtError
	if err == nil || !errors.As(err, &d) {
		return 0
	}
	return d.pid
}

const (
	// terminateSQL ends a backend of this database and role (the only ones
	// the store's role may signal) and answers when it started, which tells
	// it apart from a later backend given the same process id. Its
	// transaction, if it had not yet committed, rolls back; if it was
	// committing, the commit completes first. No row: the backend has ended
	// (or, behind a connection pooler, the id is not a backend's).
	terminateSQL = `SELECT backend_start, pg_terminate_backend(pid) FROM pg_stat_activity
WHERE pid = $1::INT4 AND datname = current_database() AND usename = current_user`
	// backendAliveSQL tells whether that backend still runs.
	backendAliveSQL = "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::INT4 AND backend_start = $2)"
)

// endSession returns once backend pid has ended: it asks the server to
// terminate it, then waits until it is gone, retrying (with backoff, each
// step bounded) while the database cannot answer. It gives up when the
// store closes, after which this process commits nothing more, and when the
// server refuses the statements themselves (a database that only speaks
// PostgreSQL's protocol, a role that may not read pg_stat_activity): that
// is a server error, which no retry changes. It counts the transaction in
// Stats.InDoubt.
func (s *Store) endSession(pid uint32) {
	s.stats.inDoubt.Add(1)
	var started *time.Time // once terminated: when the backend started
	for attempt := 1; ; attempt++ {
		gone, err := s.sessionGone(pid, &started)
		var pgErr *pgconn.PgError
		if (err == nil && gone) || errors.As(err, &pgErr) {
			return
		}
		pause := time.Millisecond << min(attempt-1, 6) // up to 64ms
		select {
		case <-s.closing.Done():
			return
		case <-time.After(pause/2 + rand.N(pause/2+1)):
		}
	}
}

// sessionGone asks for backend pid's termination, the first time (when
// *started is nil), then answers whether it has ended.
func (s *Store) sessionGone(pid uint32, started **time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(s.closing, 10*time.Second)
	defer cancel()
	if *started == nil {
		var at time.Time
		var signalled bool
		err := s.pool.QueryRow(ctx, terminateSQL, int32(pid)).Scan(&at, &signalled)
		if errors.Is(err, pgx.ErrNoRows) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		*started = &at
	}
	var alive bool
	if err := s.pool.QueryRow(ctx, backendAliveSQL, int32(pid), **started).Scan(&alive); err != nil {
		return false, err
	}
	return !alive, nil
}
