package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/store"
)

// cockroachGroup is one attempt of a group's transaction on CockroachDB's
// path when it cannot commit in one round trip (two batches share a key, or
// a condition failed the implicit transaction of pipelineOnce), in two
// round trips, each a pipeline ending in one Sync:
//  1. BEGIN ISOLATION LEVEL SERIALIZABLE, SAVEPOINT cockroach_restart, and
//     the reads (the condition keys locked);
//  2. the writes (the upsert spelt UPSERT on CockroachDB), RELEASE SAVEPOINT
//     cockroach_restart — CockroachDB's commit — and COMMIT; or ROLLBACK
//     alone when the group writes nothing.
//
// A serialization failure raised by a read, a write or RELEASE leaves the
// transaction open (the server skips the rest of the pipeline up to its
// Sync, COMMIT included), so the group runs again in place: ROLLBACK TO
// SAVEPOINT cockroach_restart with the reads, then the writes, after a
// jittered backoff, at most inPlaceRetries times and within the attempts
// left in retryTx's budget, each counted in Stats.Retries. Past that the
// transaction is rolled back and retryTx restarts it from BEGIN.
//
// Once the writes' pipeline was sent, a failure that is not the server's
// answer (a lost connection, an ended context) leaves the transaction in
// doubt (indoubt.go), and a failed RELEASE on CockroachDB other than a serialization
// failure (the crdb helper's rule). On PostgreSQL (the path forced onto it,
// Config.Path) RELEASE commits nothing and COMMIT is the commit.
func (s *Store) cockroachGroup(ctx context.Context, conn *pgxpool.Conn, g *group, attempt int) error {
	if err := s.prepareCockroach(ctx, conn.Conn()); err != nil {
		return err
	}
	lead := []string{beginSQL, savepointSQL}
	for retry := 0; ; retry++ {
		err, again := s.cockroachTry(ctx, conn, g, attempt, lead)
		if err == nil || errors.Is(err, store.ErrOutcomeUnknown) {
			return err
		}
		if !again || retry >= s.inPlaceRetries() || !budgetFrom(ctx).take() {
			rollback(conn)
			return err
		}
		s.stats.retries.Add(1)
		if werr := backoff(ctx, retry+2); werr != nil {
			rollback(conn)
			return werr
		}
		lead = []string{rollbackToSavepointSQL}
	}
}

// prepareCockroach prepares the statements of cockroachGroup on conn, each
// under its own text, once per connection. A retry in place sends them in a
// transaction a failure aborted, where PostgreSQL prepares nothing; and pgx
// forgets the statements its own cache prepared for a pipeline that failed,
// so those would be prepared again just then. A statement prepared under
// its own text, pgx sends as it is.
func (s *Store) prepareCockroach(ctx context.Context, conn *pgx.Conn) error {
	for _, sql := range []string{beginSQL, savepointSQL, rollbackToSavepointSQL, lockConditionsSQL,
		deleteSQL, upsert(s.server), releaseSavepointSQL, commitSQL, rollbackSQL} {
		if _, err := conn.Prepare(ctx, sql, sql); err != nil {
			return err
		}
	}
	return nil
}

// cockroachTry runs the group's two pipelines once, lead first, and
// answers whether a failure may be retried in place.
func (s *Store) cockroachTry(ctx context.Context, conn *pgxpool.Conn, g *group, attempt int, lead []string) (err error, again bool) {
	state, err := s.cockroachReads(ctx, conn, g, lead)
	if err == nil {
		err = s.afterRead(len(g.live), attempt)
	}
	if err != nil {
		return err, inPlaceRetryable(err) && !errors.Is(err, errLeadFailed)
	}
	w := g.decide(state, s.clock)
	if len(w.ops) == 0 {
		// Nothing to write: the answers stand as of the reads (see endSQL).
		if _, err := conn.Exec(ctx, rollbackSQL); err != nil {
			_ = conn.Conn().Close(context.Background())
		}
		return nil, false
	}
	batch := &pgx.Batch{}
	w.queue(batch)
	spellFor(s.server, batch)
	batch.Queue(releaseSavepointSQL)
	batch.Queue(commitSQL)
	br := conn.SendBatch(ctx, batch)
	s.hooks.sent(ctx, conn.Conn().PgConn().PID())
	stage := stageWrite
	err = w.readResults(br)
	if err == nil {
		stage = stageRelease
		_, err = br.Exec()
	}
	if err == nil {
		stage = stageCommit
		var tag pgconn.CommandTag
		if tag, err = br.Exec(); err == nil && tag.String() != commitSQL {
			err = fmt.Errorf("sqlstore: COMMIT answered %q", tag)
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		return nil, false
	}
	return s.classifyCockroachWrite(conn, err, stage)
}

// errLeadFailed marks a failure of the statements before the reads (BEGIN,
// SAVEPOINT, ROLLBACK TO SAVEPOINT): no savepoint to go back to.
var errLeadFailed = errors.New("sqlstore: the transaction's first statements failed")

// cockroachReads sends lead and the group's reads in one pipeline and
// answers what the reads found.
func (s *Store) cockroachReads(ctx context.Context, conn *pgxpool.Conn, g *group, lead []string) (map[string]keyState, error) {
	reads := &pgx.Batch{}
	for _, sql := range lead {
		reads.Queue(sql)
	}
	g.queueReads(reads)
	br := conn.SendBatch(ctx, reads)
	var err error
	for range lead {
		if _, err = br.Exec(); err != nil {
			err = fmt.Errorf("%w: %w", errLeadFailed, err)
			break
		}
	}
	var state map[string]keyState
	if err == nil {
		state, err = g.readResults(br)
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	return state, err
}

// The statements of the writes' pipeline, for classifyCockroachWrite.
const (
	stageWrite = iota
	stageRelease
	stageCommit
)

// classifyCockroachWrite classifies a failure of the writes' pipeline on
// conn, which failed at stage, and answers whether it may be retried in
// place. A failure that is not the server's answer, once the pipeline was
// sent, leaves the transaction in doubt (indoubt.go).
func (s *Store) classifyCockroachWrite(conn *pgxpool.Conn, err error, stage int) (error, bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		if pgconn.SafeToRetry(err) {
			return err, false // nothing was sent
		}
		return s.inDoubt(conn, fmt.Errorf("the writes and COMMIT were sent: %w", err)), false
	}
	switch stage {
	case stageWrite:
		return err, inPlaceRetryable(err)
	case stageRelease:
		if inPlaceRetryable(err) {
			return err, true
		}
		if s.server == CockroachDB {
			return &store.OutcomeUnknownError{Cause: fmt.Errorf("sqlstore: RELEASE SAVEPOINT: %w", err)}, false
		}
		return err, false
	default: // COMMIT
		if s.server == CockroachDB {
			return nil, false // RELEASE committed; COMMIT only ends the session's transaction
		}
		return err, false // PostgreSQL answered COMMIT with an error: it rolled back
	}
}

// inPlaceRetryable reports a failure the server raised inside a transaction
// that ROLLBACK TO SAVEPOINT recovers from: a serialization failure or a
// deadlock.
func inPlaceRetryable(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01", "CR000":
		return true
	}
	return false
}

// spellFor rewrites the statements of b that server spells its own way: on
// CockroachDB the upsert is UPSERT (writes.queue queues upsertSQL).
func spellFor(server Dialect, b *pgx.Batch) {
	if server != CockroachDB {
		return
	}
	for _, q := range b.QueuedQueries {
		if q.SQL == upsertSQL {
			q.SQL = upsert(server)
		}
	}
}
