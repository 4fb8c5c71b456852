package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
)

// inPlaceRetries bounds the in-place retries of one transaction. PostgreSQL
// keeps a transaction's snapshot across ROLLBACK TO SAVEPOINT, and a
// transaction its SERIALIZABLE doomed stays doomed: there one in-place retry
// exercises CockroachDB's path, and the next restart is from BEGIN.
func (s *Store) inPlaceRetries() int {
	if s.server == PostgreSQL {
		return 1
	}
	return 3
}

// attemptBudget is how many transaction attempts, from BEGIN or in place, a
// retryTx call has left; cockroachGroup draws its in-place retries from it.
type attemptBudget struct{ left int }

type budgetKey struct{}

// take spends one attempt, if one is left.
func (b *attemptBudget) take() bool {
	if b == nil || b.left <= 0 {
		return false
	}
	b.left--
	return true
}

func budgetFrom(ctx context.Context) *attemptBudget {
	b, _ := ctx.Value(budgetKey{}).(*attemptBudget)
	return b
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
//
// Every attempt counts against MaxTxAttempts, the in-place retries of
// cockroachGroup too: a group makes at most MaxTxAttempts attempts in all.
func (s *Store) retryTx(ctx context.Context, attempt func(context.Context) error, recheck func(context.Context) error) error {
	budget := &attemptBudget{left: s.cfg.MaxTxAttempts}
	ctx = context.WithValue(ctx, budgetKey{}, budget)
	var err error
	for n := 1; ; n++ {
		budget.take()
		err = attempt(ctx)
		if err == nil || !retryable(err) || budget.left <= 0 {
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
	return clock.Sleep(ctx, rand.N(time.Millisecond<<min(attempt-2, 4)))
}

// retryable reports a failure after which nothing was committed and the
// whole transaction may run again: a serialization failure or deadlock, a
// put of a key another transaction inserted after this one's snapshot
// (uniqueViolated), or a failure before anything was sent
// (pgconn.SafeToRetry: a connection that broke while idle in the pool, say).
func retryable(err error) bool {
	if errors.Is(err, store.ErrOutcomeUnknown) {
		return false
	}
	switch sqlState(err) {
	case "40001", "40P01", "CR000":
		return true
	}
	return uniqueViolated(err) || pgconn.SafeToRetry(err)
}

// uniqueViolated reports a violation of weft_kv's primary key: PostgreSQL's
// MERGE (upsertSQL) inserting a key that a transaction committed after this
// one's snapshot — one that is not SERIALIZABLE, whose insert the
// serializable checks do not see, and so no 40001. The key exists now: the
// next attempt reads it and updates it.
func uniqueViolated(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "weft_kv_pkey"
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
	var cf *store.ConditionFailedError
	switch {
	case errors.As(err, &cf), errors.Is(err, store.ErrOutcomeUnknown):
		return err
	case sqlState(err) == "40003":
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

// read runs attempt, a single read statement, again after a failure that
// read nothing — a serialization failure, or a connection that failed before
// the statement was sent — with jittered backoff, up to MaxReadAttempts
// times; each run again is counted in Stats.ReadRetries. It translates the
// final error, except pgx.ErrNoRows.
func (s *Store) read(ctx context.Context, attempt func(context.Context) error) error {
	for n := 1; ; n++ {
		var err error
		if s.hooks.beforeRead != nil {
			err = s.hooks.beforeRead(n)
		}
		if err == nil {
			err = attempt(ctx)
		}
		if err == nil || errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if !retryable(err) || n >= s.cfg.MaxReadAttempts {
			return translateRead(err)
		}
		s.stats.readRetries.Add(1)
		if werr := backoff(ctx, n+1); werr != nil {
			return werr
		}
	}
}
