package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/weft-dev/weft/lease"
)

// errStaleOwner ends a decision made by an engine whose fencing epoch is no
// longer the run's: another engine took the run over.
var errStaleOwner = errors.New("stale owner: the run's fencing epoch moved on")

// ownership holds the leases of the runs this engine drives: only while it
// drives them, not while they wait. A run's lease is taken when a background
// decision needs it and given up once a whole renewal period (LeaseTTL/3)
// passes without one (lease.Keeper), so a run waiting on a worker, a timer,
// a signal or a human costs no goroutine, no renewal and no lease.
type ownership struct {
	leases *lease.Keeper[tenure]
	stale  atomic.Int64
}

func newOwnership(cfg Config) ownership {
	return ownership{leases: lease.NewKeeper[tenure](cfg.Leases, cfg.Owner, cfg.LeaseTTL)}
}

// tenure is what this engine knows of one run during one tenure of the run's
// lease. Each tenure starts from nothing: a run taken again after its lease
// was given up bumps the epoch again, with its first write.
type tenure struct {
	mu    sync.Mutex // serialises this engine's decisions under the tenure, with the fields below
	read  bool       // a decision under this tenure has read the run's epoch
	wrote bool       // the tenure has written: epoch is the one it bumped to
	epoch uint64     // the run's epoch as the tenure first read it, then as it bumped it
}

// fence checks the run's epoch as a decision under the tenure reads it. The
// first read records it; from then on the epoch may only move by this
// tenure's own bump. Any other change means another engine took the run
// over since this one took the lease (which it has lost, even if it has not
// noticed yet), so the decision must not commit.
func (t *tenure) fence(epoch uint64) error {
	if !t.read {
		t.read, t.epoch = true, epoch
		return nil
	}
	if epoch != t.epoch {
		return errStaleOwner
	}
	return nil
}

// StaleCommitsRejected counts decisions this engine made as a run's owner
// that the fencing epoch refused, because another engine had taken over.
func (e *Engine) StaleCommitsRejected() int64 { return e.own.stale.Load() }

// drive runs a background decision (a timer, a recovery, retention) as the
// run's owner. The engine takes the run's lease first — when another engine
// holds it, that engine drives the run and this one does nothing. The first
// write under a new tenure of the lease bumps the run's fencing epoch in the
// same conditional batch; every decision checks it, so an owner that lost
// its lease (paused, partitioned, slow) can never commit, and stops.
func (e *Engine) drive(ctx context.Context, runID string, decide func(*change) error) error {
	_, err := e.driveOwned(ctx, runID, decide)
	return err
}

// driveOwned is drive, and also answers whether this engine decided as the
// run's owner: false when another engine holds the lease or took the run
// over, and then nothing a decision attempt noted (one that lost its race
// before the engine learned it was stale) describes what happened.
func (e *Engine) driveOwned(ctx context.Context, runID string, decide func(*change) error) (bool, error) {
	held, err := e.own.leases.Take(ctx, "run:"+runID)
	if errors.Is(err, lease.ErrHeld) {
		return false, nil
	}
	if err != nil {
		return false, err // the lease service is down: do no background work, lose nothing
	}
	defer held.Done()
	t := &held.State
	t.mu.Lock()
	defer t.mu.Unlock()
	var bumped uint64
	ch, err := e.mutateFrom(held.Context(), runID, "engine:"+e.cfg.Owner, func(ch *change) error {
		bumped = 0
		if err := t.fence(ch.state.Epoch); err != nil {
			return err
		}
		if err := decide(ch); err != nil {
			return err
		}
		if !t.wrote && (ch.dirty || len(ch.ops) > 0) {
			ch.state.Epoch++
			ch.dirty = true
			bumped = ch.state.Epoch
		}
		return nil
	}, true) // the tenure's fence reads the store's epoch, never a cached one
	switch {
	case errors.Is(err, errStaleOwner):
		e.own.stale.Add(1)
		e.log.Info("stale owner stopped driving a run", slog.String("run_id", runID))
		held.Drop()
		return false, nil
	case err != nil && held.Context().Err() != nil:
		e.own.stale.Add(1) // the lease was lost mid-decision: nothing committed, stop
		held.Drop()
		return false, nil
	case err != nil:
		return true, err
	}
	if bumped != 0 {
		t.wrote, t.epoch = true, bumped
	}
	if ch != nil && ch.state.Status.Terminal() {
		held.Drop()
	}
	return true, nil
}

// releaseAll gives every lease up (the engine is stopping).
func (e *Engine) releaseAll() { e.own.leases.ReleaseAll() }
