package batch

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
)

// maxRaces bounds how often one call reads a record again after losing a race.
const maxRaces = 8

// Run drives batches until ctx ends: a round every Interval, and one at
// once when a batch starts here.
func (b *Batches) Run(ctx context.Context) {
	t := time.NewTicker(b.cfg.Interval)
	defer t.Stop()
	for {
		if err := b.Tick(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("batch round", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.wake:
		}
	}
}

// Tick is one round: every running batch that is this process's, or
// nobody's (its owner's lease ended), is driven for at most one Interval.
func (b *Batches) Tick(ctx context.Context) error {
	var errs []error
	params := &store.ScanParams{Prefix: keyspace.BatchActive.KeyPrefix(), Limit: 100}
	for {
		page, err := b.store.Scan(ctx, params)
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			if err := b.drive(ctx, item.Key, item.Value); err != nil && !errors.Is(err, errRaced) {
				errs = append(errs, err)
			}
		}
		if len(page.Items) == 0 || page.Next == nil {
			return errors.Join(errs...)
		}
		params.After = page.Items[len(page.Items)-1].Key
	}
}

// drive takes the batch whose record is at k (its active index entry is at
// active) if it may, and acts on its next runs at its rate until the
// round's time is up or every run was acted on.
func (b *Batches) drive(ctx context.Context, active, k []byte) error {
	v, err := load(ctx, b.store, k)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	r := v.rec
	if r.State != StateRunning {
		_, err := b.store.Commit(ctx, &store.Batch{Ops: []store.Op{store.Delete(active)}}) // an index entry left behind
		return err
	}
	if err := b.take(ctx, v); err != nil {
		return err
	}
	deadline := time.Now().Add(b.cfg.Interval)
	for r.Next < r.Total {
		if wait := r.NextAt.Sub(b.now()); wait > 0 {
			if time.Until(deadline) < wait {
				return nil // the next round goes on
			}
			if err := clock.Sleep(ctx, wait); err != nil {
				return err
			}
			continue
		}
		if err := b.actOnNext(ctx, v); err != nil {
			return err
		}
	}
	return b.complete(ctx, v, active)
}

// take makes the batch this process's for a lease: at once when it is, or
// nobody's; errRaced when another process holds it.
func (b *Batches) take(ctx context.Context, v *versioned) error {
	r, now := v.rec, b.now()
	if r.Owner != b.cfg.Owner && now.Before(r.LeaseUntil) {
		return errRaced
	}
	if r.Owner == b.cfg.Owner && r.LeaseUntil.Sub(now) > b.cfg.LeaseTTL/2 {
		return nil // ours, for long enough: every run acted on renews it
	}
	if r.Owner != b.cfg.Owner {
		b.log.Info("batch taken", slog.String("tenant_id", r.TenantID), slog.String("batch_id", r.BatchID),
			slog.String("from", r.Owner), slog.Int("next", r.Next), slog.Int("total", r.Total))
	}
	r.Owner, r.LeaseUntil = b.cfg.Owner, now.Add(b.cfg.LeaseTTL)
	return save(ctx, b.store, v)
}

// actOnNext acts on the next run and records its outcome in the same write
// that moves the batch past it and renews the lease. A transient refusal
// (the store, the engine unavailable) is answered as an error: the run is
// acted on again in a later round.
func (b *Batches) actOnNext(ctx context.Context, v *versioned) error {
	r, i := v.rec, v.rec.Next
	m, err := loadMember(ctx, b.store, r, i)
	if err != nil {
		return err
	}
	attempted := m.Attempted
	if r.Operation == OpDelete && !attempted {
		m.Attempted = true
		op, err := putMember(r, i, m)
		if err != nil {
			return err
		}
		r.LeaseUntil = b.now().Add(b.cfg.LeaseTTL)
		if err := save(ctx, b.store, v, op); err != nil {
			return err
		}
	}
	outcome, err := b.operate(ctx, r, m, attempted)
	if err != nil {
		return err
	}
	now := b.now()
	m.Outcome, m.Code, m.Message, m.At = outcome.Outcome, outcome.Code, outcome.Message, now
	r.Next++
	if outcome.Outcome == OutcomeSucceeded {
		r.Succeeded++
	} else {
		r.Failed++
	}
	r.NextAt = later(r.NextAt, now).Add(time.Duration(float64(time.Second) / r.Rate))
	r.LeaseUntil = now.Add(b.cfg.LeaseTTL)
	op, err := putMember(r, i, m)
	if err != nil {
		return err
	}
	return save(ctx, b.store, v, op)
}

// complete ends a batch every run of which was acted on.
func (b *Batches) complete(ctx context.Context, v *versioned, active []byte) error {
	r := v.rec
	r.State, r.EndedAt, r.Owner, r.LeaseUntil = StateCompleted, b.now(), "", time.Time{}
	if err := save(ctx, b.store, v, store.Delete(active)); err != nil {
		return err
	}
	b.log.Info("batch completed", slog.String("tenant_id", r.TenantID), slog.String("batch_id", r.BatchID),
		slog.Int("succeeded", r.Succeeded), slog.Int("failed", r.Failed))
	return nil
}

// later answers the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
