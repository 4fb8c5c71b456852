package sqlstore

import "github.com/jackc/pgx/v5/pgxpool"

// SetAfterReadHook makes fn run in every attempt of s's group transactions,
// after the reads and before the writes (see hooks.afterRead). Set it before
// the first Commit.
func SetAfterReadHook(s *Store, fn func(batches, attempt int) error) { s.hooks.afterRead = fn }

// SetBeforeAttemptHook makes fn run at the start of every attempt of s's
// group transactions, before the transaction begins (see
// hooks.beforeAttempt). Set it before the first Commit.
func SetBeforeAttemptHook(s *Store, fn func(batches, attempt int) error) { s.hooks.beforeAttempt = fn }

// QueuedBatches answers how many batches wait in s's group commit queue.
func QueuedBatches(s *Store) int { return s.groups.queued() }

// Pool answers s's connection pool.
func Pool(s *Store) *pgxpool.Pool { return s.pool }
