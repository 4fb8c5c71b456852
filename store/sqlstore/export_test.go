package sqlstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/store"
)

// SetAfterReadHook makes fn run in every attempt of s's group transactions,
// after the reads and before the writes (see hooks.afterRead). Set it before
// the first Commit.
func SetAfterReadHook(s *Store, fn func(batches, attempt int) error) { s.hooks.afterRead = fn }

// SetBeforeAttemptHook makes fn run at the start of every attempt of s's
// group transactions, before the transaction begins (see
// hooks.beforeAttempt). Set it before the first Commit.
func SetBeforeAttemptHook(s *Store, fn func(batches, attempt int) error) { s.hooks.beforeAttempt = fn }

// SetAfterSendHook makes fn run once each group's COMMIT was sent, before
// its answer is read (see hooks.afterSend). Set it before the first Commit.
func SetAfterSendHook(s *Store, fn func(ctx context.Context, pid uint32)) { s.hooks.afterSend = fn }

// QueuedBatches answers how many batches wait in s's group commit queue.
func QueuedBatches(s *Store) int { return s.groups.queued() }

// Pool answers s's connection pool.
func Pool(s *Store) *pgxpool.Pool { return s.pool }

// CommitGroup commits batches as one group on the leader's path (the one
// round trip when they share no key) and answers each batch's outcome.
func CommitGroup(s *Store, batches []*store.Batch) ([]*store.CommitResult, []error) {
	reqs := make([]*request, len(batches))
	for i, b := range batches {
		reqs[i] = newRequest(context.Background(), b, &s.mems)
		reqs[i].state.Store(stateTaken)
	}
	s.commitGroup(reqs, false)
	res, errs := make([]*store.CommitResult, len(reqs)), make([]error, len(reqs))
	for i, r := range reqs {
		<-r.done
		res[i], errs[i] = r.out.res, r.out.err
		r.letGo() // the caller's, as Commit does
	}
	return res, errs
}

// PoisonRecycledRequests makes s fill the memory of every request it
// recycles with keys and values no batch holds (see requestMems.poison).
// Set it before the first Commit.
func PoisonRecycledRequests(s *Store) { s.mems.poison = true }

// CollideKeyHashes makes every two keys of s's requests share their hash
// (see requestMems.hash). Set it before the first Commit.
func CollideKeyHashes(s *Store) { s.mems.hash = func([]byte) uint64 { return 0 } }

// WithMigrationHook answers cfg with fn run at each point of its migration
// runs (see Config.migrationHook).
func WithMigrationHook(cfg Config, fn func(MigrationPoint) error) Config {
	cfg.migrationHook = fn
	return cfg
}

// SetBeforeReadHook makes fn run before every attempt of s's reads (see
// hooks.beforeRead). Set it before the first read.
func SetBeforeReadHook(s *Store, fn func(attempt int) error) { s.hooks.beforeRead = fn }

// WithTracer answers cfg with tracer seeing every statement its pool sends.
func WithTracer(cfg Config, tracer pgx.QueryTracer) Config {
	cfg.tracer = tracer
	return cfg
}

// SetVersionClock makes s's version clock read its wall time from now (see
// versionClock), keeping the ticks it handed out. Set it before the first
// Commit.
func SetVersionClock(s *Store, now func() time.Time) { s.clock.now = now }

// NodeBits is how many low bits of a version name its store.
const NodeBits = nodeBits

// WithFence answers cfg with sessions in doubt ended the way of dialect d
// (see Config.fence), whatever the database.
func WithFence(cfg Config, d Dialect) Config {
	cfg.fence = d
	return cfg
}
