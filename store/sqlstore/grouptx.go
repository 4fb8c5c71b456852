package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/store"
)

const (
	beginSQL    = "BEGIN ISOLATION LEVEL SERIALIZABLE"
	commitSQL   = "COMMIT"
	rollbackSQL = "ROLLBACK"
)

// endSQL ends a group's transaction: COMMIT, or ROLLBACK when no accepted
// batch writes anything. The answers of a group that writes nothing — failed
// conditions, conditions that held — stand as of the transaction's reads
// (the rows locked were current, the absent keys absent in its snapshot, all
// at one instant after every batch was submitted), and a rollback spares
// the commit's WAL flush: the row locks and the versions drawn wrote WAL.
func endSQL(w *writes) string {
	if len(w.ops) == 0 {
		return rollbackSQL
	}
	return commitSQL
}

// groupStats counts the committer's work.
type groupStats struct {
	groups, batches, retries, rechecks, splits, oneTrip, fallbacks, readRetries, inDoubt atomic.Uint64
	largest                                                                              atomic.Int64
}

func (st *groupStats) count(n int) {
	st.groups.Add(1)
	st.batches.Add(uint64(n))
	for cur := st.largest.Load(); int64(n) > cur && !st.largest.CompareAndSwap(cur, int64(n)); {
		cur = st.largest.Load()
	}
}

// commitGroup commits one group and finishes each of its requests: with its
// own result or *store.ConditionFailedError when the transaction committed;
// with *store.OutcomeUnknownError, all of them, when its commit was
// ambiguous; with the transaction's error, all of them, when it failed and
// wrote nothing. A group that fails for a reason other than a conflict, an
// ambiguous commit or the end of its context is split and each batch
// committed alone, so that no batch fails because of a neighbour. disjoint
// tells that no two of the requests share a key (false: they may).
//
// It returns only once the group's transaction has ended at the database:
// a transaction in doubt (indoubt.go) is ended first, after its callers
// have their answer, so that the leader holds the group's keys until then.
func (s *Store) commitGroup(reqs []*request, disjoint bool) {
	ctx, cancel := groupContext(reqs)
	defer cancel()
	if ref, inDoubt := s.commitGroupCtx(ctx, reqs, disjoint); inDoubt {
		s.endSession(ref)
	}
}

// commitGroupCtx is commitGroup on ctx, but for a transaction in doubt,
// whose session it answers (inDoubt) for its caller to end.
func (s *Store) commitGroupCtx(ctx context.Context, reqs []*request, disjoint bool) (ref session, inDoubt bool) {
	s.stats.count(len(reqs))
	g := newGroup(reqs)
	g.disjoint = disjoint
	var err error
	if slices.ContainsFunc(reqs, func(r *request) bool { return r.waited }) {
		// A batch queued behind a group that wrote its keys most likely read
		// them before that group committed: one read answers it if so,
		// cheaper than a transaction.
		s.stats.rechecks.Add(1)
		err = g.recheck(ctx, s.pool)
	}
	if err == nil {
		attempts := 0
		err = s.retryTx(ctx, func(ctx context.Context) error {
			attempts++
			if s.hooks.beforeAttempt != nil {
				if err := s.hooks.beforeAttempt(len(g.live), attempts); err != nil {
					return err
				}
			}
			return s.attemptGroup(ctx, g, attempts)
		}, func(ctx context.Context) error {
			s.stats.retries.Add(1)
			s.stats.rechecks.Add(1)
			return g.recheck(ctx, s.pool)
		})
	}
	if err == nil || errors.Is(err, errGroupDecided) {
		for i, r := range reqs {
			r.finish(g.outcomes[i])
		}
		return session{}, false
	}
	s.fail(ctx, g, err)
	return inDoubtSession(err)
}

// fail finishes a group whose transaction wrote nothing, or whose outcome is
// unknown. Batches a recheck answered keep their answer; the others share
// the failure, or are committed one by one when it may be one batch's fault.
func (s *Store) fail(ctx context.Context, g *group, err error) {
	live := make([]*request, 0, len(g.live))
	for i, r := range g.reqs {
		if slices.Contains(g.live, i) {
			live = append(live, r)
		} else {
			r.finish(g.outcomes[i])
		}
	}
	if len(live) > 1 && splittable(err) && ctx.Err() == nil {
		s.stats.splits.Add(1)
		for _, r := range live {
			s.commitGroup([]*request{r}, true)
		}
		return
	}
	for _, r := range live {
		r.finish(outcome{err: err})
	}
}

// attemptGroup runs one attempt of a group's transaction, in one round trip
// when no two batches share a key and every condition holds (pipelineOnce:
// on PostgreSQL BEGIN … COMMIT pipelined, on CockroachDB's path one implicit
// transaction). Otherwise, on PostgreSQL, BEGIN and the reads in one round
// trip, then the writes and COMMIT, decided batch by batch, in a second
// (pipelineGroup); on CockroachDB's path two round trips too, retried in
// place through a savepoint (cockroachGroup, groupcrdb.go).
func (s *Store) attemptGroup(ctx context.Context, g *group, attempt int) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	sc := tripScratches.Get().(*tripScratch)
	defer func() {
		sc.release()
		tripScratches.Put(sc)
	}()
	if s.oneTrip(g, sc) {
		err := s.pipelineOnce(ctx, conn, g, sc)
		if !errors.Is(err, errConditionsFailed) {
			if err == nil {
				s.stats.oneTrip.Add(1)
			}
			return err
		}
		s.stats.fallbacks.Add(1)
		// One read answers the batches whose conditions fail (most often
		// all there are: a compare-and-set that lost), without a
		// transaction; the rest are decided batch by batch.
		s.stats.rechecks.Add(1)
		if err := g.recheck(ctx, conn); err != nil {
			return err
		}
	}
	if s.dialect != PostgreSQL {
		return s.cockroachGroup(ctx, conn, g, attempt)
	}
	return s.pipelineGroup(ctx, conn, g, attempt)
}

type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// sendReads sends the reads, which follow a BEGIN when begins (whose result
// it reads first), and answers what they found.
func sendReads(ctx context.Context, conn batchSender, b *pgx.Batch, begins bool, g *group) (map[string]keyState, error) {
	if b.Len() == 0 {
		return map[string]keyState{}, nil
	}
	br := conn.SendBatch(ctx, b)
	var err error
	if begins {
		_, err = br.Exec()
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

// pipelineGroup is one attempt of a group's transaction on PostgreSQL, in two
// round trips. A failure before COMMIT was sent, or a server error (which
// PostgreSQL answers after rolling back), means nothing was written; any
// other failure after it was sent leaves the outcome unknown.
func (s *Store) pipelineGroup(ctx context.Context, conn *pgxpool.Conn, g *group, attempt int) error {
	reads := &pgx.Batch{}
	reads.Queue(beginSQL)
	g.queueReads(reads)
	state, err := sendReads(ctx, conn, reads, true, g)
	if err == nil {
		err = s.afterRead(len(g.live), attempt)
	}
	if err != nil {
		rollback(conn)
		return err
	}
	w := g.decide(state, s.clock)
	batch := &pgx.Batch{}
	w.queue(batch)
	end := endSQL(w)
	batch.Queue(end)
	br := conn.SendBatch(ctx, batch)
	s.hooks.sent(ctx, conn.Conn().PgConn().PID())
	err = w.readResults(br)
	if err == nil {
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		if err == nil && tag.String() != end {
			err = fmt.Errorf("sqlstore: %s answered %q", end, tag)
		}
	}
	if closeErr := br.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError // escapes (errors.As): declared only on failure
	switch {
	case errors.As(err, &pgErr), pgconn.SafeToRetry(err):
		rollback(conn)
		return err
	default:
		return s.inDoubt(conn, err)
	}
}

// rollback ends conn's failed transaction so the pool can reuse it; if that
// fails, the pool discards the connection (it never reuses one inside a
// transaction).
func rollback(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		_ = conn.Conn().Close(ctx)
	}
}

// afterRead runs the test hook, if any.
func (s *Store) afterRead(batches, attempt int) error {
	if s.hooks.afterRead == nil {
		return nil
	}
	return s.hooks.afterRead(batches, attempt)
}

// splittable reports a group failure that may belong to one batch: neither a
// conflict (the whole group is retried), nor an ambiguous commit, nor the
// end of the group's context.
func splittable(err error) bool {
	return !errors.Is(err, store.ErrRetryable) && !errors.Is(err, store.ErrOutcomeUnknown) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// groupContext bounds a group's transaction by the latest deadline among its
// callers, or not at all when one of them has none. It never ends because
// one caller cancels: that would fail its neighbours. Unbounded, it is
// context.Background itself, which pgconn need not watch.
func groupContext(reqs []*request) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, r := range reqs {
		d, ok := r.ctx.Deadline()
		if !ok {
			return context.Background(), func() {}
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}
