package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cockroachdb/cockroach-go/v2/crdb"
	crdbpgx "github.com/cockroachdb/cockroach-go/v2/crdb/crdbpgxv5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-dev/weft/store"
)

var serializable = pgx.TxOptions{IsoLevel: pgx.Serializable}

// runTx runs fn in a SERIALIZABLE transaction through crdbpgxv5.ExecuteTx and
// translates the outcome. On CockroachDB the helper retries 40001 in place.
// PostgreSQL cannot recover a serialization failure with ROLLBACK TO
// SAVEPOINT (the snapshot stays), so there the helper gets one in-place retry
// and the transaction is restarted from BEGIN (see retryTx). fn must decide
// afresh on every call: a retried transaction sees the database as it is
// then.
func (s *Store) runTx(ctx context.Context, fn func(context.Context, pgx.Tx) error, recheck func(context.Context) error) error {
	return s.retryTx(ctx, func(ctx context.Context) error { return s.helperTx(ctx, fn) }, recheck)
}

// helperTx is one run of crdbpgxv5.ExecuteTx, answering its error
// untranslated.
func (s *Store) helperTx(ctx context.Context, fn func(context.Context, pgx.Tx) error) error {
	if s.dialect == PostgreSQL {
		ctx = crdb.WithMaxRetries(ctx, 1)
	}
	conn := &commitTracker{pool: s.pool}
	err := crdbpgx.ExecuteTx(ctx, conn, serializable, s.once(func(tx pgx.Tx) error { return fn(ctx, tx) }))
	if err == nil && s.dialect == PostgreSQL {
		// The helper ignores COMMIT's error (on CockroachDB, RELEASE
		// already committed). On PostgreSQL COMMIT is the commit.
		err = commitError(conn.commitErr)
	}
	return err
}

// retryTx runs attempt, a whole transaction, again after each serialization
// failure or deadlock, with jittered backoff, up to MaxTxAttempts times, and
// translates the outcome.
//
// recheck, when not nil, runs after a failure and before the restart; an
// error from it ends retryTx with that error. A group uses it to answer, with
// one read and no transaction, the batches whose conditions no longer hold
// (the failed transaction wrote nothing), which spares contended
// compare-and-set callers a whole transaction to learn they lost.
func (s *Store) retryTx(ctx context.Context, attempt func(context.Context) error, recheck func(context.Context) error) error {
	var err error
	for n := 1; ; n++ {
		err = attempt(ctx)
		if err == nil || !retryable(err) || n >= s.cfg.MaxTxAttempts {
			break
		}
		if recheck != nil {
			if rerr := recheck(ctx); rerr != nil {
				return rerr
			}
		}
		if werr := backoff(ctx, n); werr != nil {
			return werr
		}
	}
	return translateCommit(err)
}

// errRestart makes the helper give up a PostgreSQL transaction after a
// serialization failure, so that runTx restarts it from BEGIN.
var errRestart = errors.New("sqlstore: restart the transaction from BEGIN")

// once wraps fn for the dialect. On PostgreSQL the helper's in-place retry
// (after ROLLBACK TO SAVEPOINT) would run with the same snapshot and fail
// again, so a second call within one transaction returns errRestart at once.
func (s *Store) once(fn func(pgx.Tx) error) func(pgx.Tx) error {
	if s.dialect != PostgreSQL {
		return fn
	}
	called := false
	return func(tx pgx.Tx) error {
		if called {
			return errRestart
		}
		called = true
		return fn(tx)
	}
}

// commitError classifies a PostgreSQL COMMIT failure. A server error means
// the transaction was rolled back; anything else (a lost connection, a
// cancelled context) leaves the outcome unknown.
func commitError(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || errors.Is(err, pgx.ErrTxCommitRollback) {
		return err
	}
	return &store.OutcomeUnknownError{Cause: fmt.Errorf("sqlstore: COMMIT: %w", err)}
}

// backoff waits before attempt+1: not at all after the first failure (the
// conflicting transaction has committed by the time 40001 is raised), then a
// jittered, doubling ceiling from 1ms up to 16ms.
func backoff(ctx context.Context, attempt int) error {
	if attempt == 1 {
		return nil
	}
	ceiling := time.Millisecond << min(attempt-2, 4)
	t := time.NewTimer(rand.N(ceiling))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable reports a failure after which nothing was committed and the
// whole transaction may run again.
func retryable(err error) bool {
	if errors.Is(err, store.ErrOutcomeUnknown) {
		return false
	}
	switch sqlState(err) {
	case "40001", "40P01", "CR000":
		return true
	}
	var restart *crdb.TxnRestartError
	return errors.Is(err, errRestart) || errors.As(err, &restart)
}

func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// translateCommit maps the final error of a commit to the store's vocabulary.
func translateCommit(err error) error {
	if err == nil {
		return nil // before the targets of errors.As, which escape
	}
	var ambiguous *crdb.AmbiguousCommitError
	var cf *store.ConditionFailedError
	switch {
	case errors.As(err, &cf), errors.Is(err, store.ErrOutcomeUnknown):
		return err
	case errors.As(err, &ambiguous), sqlState(err) == "40003":
		return &store.OutcomeUnknownError{Cause: fmt.Errorf("sqlstore: %w", err)}
	case retryable(err):
		return fmt.Errorf("sqlstore: %w: %w", store.ErrRetryable, err)
	default:
		return fmt.Errorf("sqlstore: commit: %w", err)
	}
}

// translateRead maps a read error to the store's vocabulary.
func translateRead(err error) error {
	if retryable(err) {
		return fmt.Errorf("sqlstore: %w: %w", store.ErrRetryable, err)
	}
	return fmt.Errorf("sqlstore: read: %w", err)
}

// commitTracker is the crdbpgxv5.Conn handed to the helper: it begins
// transactions on the pool and records the error of their COMMIT.
type commitTracker struct {
	pool interface {
		BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
	}
	commitErr error
}

func (c *commitTracker) Begin(ctx context.Context) (pgx.Tx, error) {
	return c.BeginTx(ctx, pgx.TxOptions{})
}

func (c *commitTracker) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	tx, err := c.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &trackedTx{Tx: tx, tracker: c}, nil
}

type trackedTx struct {
	pgx.Tx
	tracker *commitTracker
}

func (t *trackedTx) Commit(ctx context.Context) error {
	err := t.Tx.Commit(ctx)
	t.tracker.commitErr = err
	return err
}
