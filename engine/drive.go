package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/store"
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
	// removed counts the runs whose removal this engine finished (retention.go).
	removed atomic.Int64
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
func (e *background) drive(ctx context.Context, runID string, decide func(*change) error) error {
	_, err := e.driveOwned(ctx, runID, decide)
	return err
}

// driveOwned is drive, and also answers whether this engine decided as the
// run's owner: false when another engine holds the lease or took the run
// over, and then nothing a decision attempt noted (one that lost its race
// before the engine learned it was stale) describes what happened.
func (e *background) driveOwned(ctx context.Context, runID string, decide func(*change) error) (bool, error) {
	return e.driveWith(ctx, runID, false, decide)
}

// driveWith is driveOwned; removal marks the decision as a batch of the
// run's removal (retention.go).
func (e *background) driveWith(ctx context.Context, runID string, removal bool, decide func(*change) error) (bool, error) {
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
	ch, err := e.engine().commitDecision(held.Context(), decision{runID: runID, actor: "engine:" + e.cfg.Owner, fromStore: true, removal: removal, decide: func(ch *change) error {
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
	}}) // fromStore: the tenure's fence reads the store's epoch, never a cached one
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
func (e *background) releaseAll() { e.own.leases.ReleaseAll() }

// Ownership is checkpoint ownership (docs/semantics.md#checkpoint-ownership): how the engine makes sure
// only one writer changes a run at a time.
type Ownership string

// The ownership modes.
const (
	// SingleOwner: the deployment guarantees one engine process per store
	// (the embedded default). Changes are serialised by the process; on a
	// store with conditionalBatch they are compare-and-set all the same.
	SingleOwner Ownership = "single-owner"
	// CASRequired: several engines may drive the same runs (the cluster).
	// Every change is a conditional batch; a store without conditionalBatch
	// is refused before the engine claims, recovers or polls anything.
	CASRequired Ownership = "cas-required"
)

// CheckpointOwnershipCapabilityError is the fail-fast error of docs/semantics.md#capabilities-fail-fast: the
// configuration requires concurrent owners but the store cannot compare and set.
type CheckpointOwnershipCapabilityError struct {
	Capability string
	Mode       Ownership
	Backend    string
}

// Error implements error.
func (e *CheckpointOwnershipCapabilityError) Error() string {
	return fmt.Sprintf("checkpoint ownership %q needs the store capability %s, which the %s store does not have",
		e.Mode, e.Capability, e.Backend)
}

// checkOwnership applies the fail-fast rule at the engine's start boundary.
func checkOwnership(mode Ownership, caps store.Capabilities) error {
	switch mode {
	case SingleOwner:
		return nil
	case CASRequired:
		if !caps.ConditionalBatch {
			return &CheckpointOwnershipCapabilityError{Capability: store.CapabilityConditionalBatch, Mode: mode, Backend: caps.Backend}
		}
		return nil
	default:
		return fmt.Errorf("checkpoint ownership must be %q or %q, got %q", SingleOwner, CASRequired, mode)
	}
}

// commitChecked writes a batch. On a store without conditionalBatch (single-owner
// only) the conditions are checked by reading, then the writes go as an
// atomic batch: safe because this process is the only writer and serialises
// its own writers per run.
func commitChecked(ctx context.Context, st store.Store, b *store.Batch) (*store.CommitResult, error) {
	if st.Capabilities().ConditionalBatch || len(b.Conditions) == 0 {
		return st.Commit(ctx, b)
	}
	err := store.CheckConditions(b.Conditions, func(key []byte) (bool, uint64, error) {
		item, err := st.Get(ctx, key)
		switch {
		case err == nil:
			return true, item.Version, nil
		case errors.Is(err, store.ErrNotFound):
			return false, 0, nil
		default:
			return false, 0, err
		}
	})
	if err != nil {
		return nil, err
	}
	return st.Commit(ctx, &store.Batch{Ops: b.Ops})
}
