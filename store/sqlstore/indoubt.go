package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

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

// session names the server session that ran a transaction in doubt: on
// PostgreSQL its backend's process id, on CockroachDB its session id (SHOW
// session_id, read when the connection opened: sessionIDKey).
type session struct {
	pid uint32
	id  string
}

func (s session) String() string {
	if s.id != "" {
		return "session " + s.id
	}
	return fmt.Sprintf("backend %d", s.pid)
}

// inDoubtError is the cause of the *store.OutcomeUnknownError of a
// transaction in doubt: the session that may still commit it.
type inDoubtError struct {
	session session
	err     error
}

func (e *inDoubtError) Error() string {
	return fmt.Sprintf("sqlstore: COMMIT sent, no answer (%s): %v", e.session, e.err)
}

func (e *inDoubtError) Unwrap() error { return e.err }

// inDoubt is the error of an attempt whose COMMIT (or implicit
// transaction's Sync) was sent on conn and whose answer failed with err.
func (s *Store) inDoubt(conn *pgxpool.Conn, err error) error {
	pg := conn.Conn().PgConn()
	ref := session{pid: pg.PID()}
	if id, ok := pg.CustomData()[sessionIDKey].(string); ok {
		ref.id = id
	}
	return &store.OutcomeUnknownError{Cause: &inDoubtError{session: ref, err: err}}
}

// inDoubtSession answers the session of an in-doubt transaction that err
// reports.
func inDoubtSession(err error) (session, bool) {
	var d *inDoubtError
	if err == nil || !errors.As(err, &d) {
		return session{}, false
	}
	return d.session, true
}

// sessionIDKey is where a connection to CockroachDB keeps its session id
// (pgconn.PgConn.CustomData), read by configureSession.
const sessionIDKey = "weft/sqlstore.sessionID"

// A fence ends a session in doubt, one dialect's way: start asks the server
// to end the session, answering false when it has ended already; gone
// answers whether it has ended since.
type fence interface {
	start(ctx context.Context, q querier, ref session) (started bool, err error)
	gone(ctx context.Context, q querier) (bool, error)
}

// fenceFor answers a fresh fence of the dialect's kind.
func fenceFor(d Dialect) fence {
	if d == CockroachDB {
		return &cockroachFence{}
	}
	return &postgresFence{}
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

	// sessionIDSQL reads a CockroachDB connection's session id, unique in
	// the cluster for good (a node's id and a timestamp).
	sessionIDSQL = "SHOW session_id"
	// cancelSessionSQL ends a session of the cluster, on whichever node it
	// runs; a user may cancel their own sessions. Its transaction, if not
	// committed, is aborted; a commit already under way completes or not,
	// as CockroachDB decides it for any transaction whose client is gone.
	cancelSessionSQL = "CANCEL SESSION IF EXISTS $1"
	// sessionAliveSQL tells whether a session still runs on any node of the
	// cluster (crdb_internal.cluster_sessions asks every node).
	sessionAliveSQL = "SELECT EXISTS (SELECT 1 FROM crdb_internal.cluster_sessions WHERE session_id = $1)"
)

// postgresFence terminates a backend (terminateSQL) and waits until
// pg_stat_activity no longer lists it.
type postgresFence struct {
	pid     uint32
	started time.Time // when the backend started: a later one may reuse its pid
}

func (f *postgresFence) start(ctx context.Context, q querier, ref session) (bool, error) {
	f.pid = ref.pid
	var signalled bool
	err := q.QueryRow(ctx, terminateSQL, int32(ref.pid)).Scan(&f.started, &signalled)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (f *postgresFence) gone(ctx context.Context, q querier) (bool, error) {
	var alive bool
	err := q.QueryRow(ctx, backendAliveSQL, int32(f.pid), f.started).Scan(&alive)
	return !alive, err
}

// cockroachFence cancels a session (cancelSessionSQL) and waits until no
// node of the cluster lists it (sessionAliveSQL). Once the session is gone
// it runs no more statements: what it had sent but not run never runs, and
// its transaction, committed or not, is decided as CockroachDB decides the
// transactions of a client that went away, before any later transaction
// on its keys reads or writes them (its intents are resolved first).
type cockroachFence struct{ id string }

func (f *cockroachFence) start(ctx context.Context, q querier, ref session) (bool, error) {
	if ref.id == "" {
		return false, errNoSessionID
	}
	f.id = ref.id
	_, err := q.Exec(ctx, cancelSessionSQL, ref.id)
	return err == nil, err
}

func (f *cockroachFence) gone(ctx context.Context, q querier) (bool, error) {
	var alive bool
	err := q.QueryRow(ctx, sessionAliveSQL, f.id).Scan(&alive)
	return !alive, err
}

// errNoSessionID ends the wait for a CockroachDB session whose id the
// connection never read: it cannot be named, so nothing can end it.
var errNoSessionID = &pgconn.PgError{Code: "XX000", Message: "sqlstore: the connection's CockroachDB session id is unknown"}

// endSession returns once session ref has ended: it asks the server to end
// it (the fence of the database's dialect: fenceFor), then waits until it
// is gone, retrying (with backoff, each step bounded) while the database
// cannot answer. It gives up when the store closes, after which this
// process commits nothing more, and when the server refuses the statements
// themselves (a database that only speaks PostgreSQL's protocol, a role
// that may not read pg_stat_activity): that is a server error, which no
// retry changes. It counts the transaction in Stats.InDoubt.
func (s *Store) endSession(ref session) {
	s.stats.inDoubt.Add(1)
	f := fenceFor(s.fence)
	started := false
	for attempt := 1; ; attempt++ {
		gone, err := s.fenceStep(f, ref, &started)
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

// fenceStep asks for the session's end, the first time (until *started),
// then answers whether it has ended.
func (s *Store) fenceStep(f fence, ref session, started *bool) (bool, error) {
	ctx, cancel := context.WithTimeout(s.closing, 10*time.Second)
	defer cancel()
	if !*started {
		ok, err := f.start(ctx, s.pool, ref)
		if err != nil || !ok {
			return !ok && err == nil, err
		}
		*started = true
	}
	return f.gone(ctx, s.pool)
}
