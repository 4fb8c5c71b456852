package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/weft-dev/weft/engine/internal/ownership"
	"github.com/weft-dev/weft/lease"
)

// tenures holds the leases of the runs this engine drives: only while it
// drives them, not while they wait. A run's lease is taken when a background
// decision needs it and given up once a whole renewal period (LeaseTTL/3)
// passes without one (lease.Keeper), so a run waiting on a worker, a timer,
// a signal or a human costs no goroutine, no renewal and no lease.
type tenures struct {
	leases *lease.Keeper[ownership.Tenure]
	stale  atomic.Int64
	// removed counts the runs whose removal this engine finished (retention.go).
	removed atomic.Int64
}

func newTenures(cfg Config) tenures {
	return tenures{leases: lease.NewKeeper[ownership.Tenure](cfg.Leases, cfg.Owner, cfg.LeaseTTL)}
}

// drive runs a background decision (a timer, a recovery, retention) as the
// run's owner. The engine takes the run's lease first — when another engine
// holds it, that engine drives the run and this one does nothing. The first
// write under a new tenure of the lease bumps the run's fencing epoch in the
// same conditional batch; every decision checks it, so an owner that lost
// its lease (paused, partitioned, slow) can never commit, and stops.
func drive(ctx context.Context, e *Engine, runID string, decide func(*change) error) error {
	_, err := driveOwned(ctx, e, runID, decide)
	return err
}

// driveOwned is drive, and also answers whether this engine decided as the
// run's owner: false when another engine holds the lease or took the run
// over, and then nothing a decision attempt noted (one that lost its race
// before the engine learned it was stale) describes what happened.
func driveOwned(ctx context.Context, e *Engine, runID string, decide func(*change) error) (bool, error) {
	d, err := driveWith(ctx, e, runID, false, decide)
	return d == decided, err
}

// driven says how a background decision went.
type driven int

const (
	// decided: this engine decided as the run's owner (err says whether
	// the decision committed).
	decided driven = iota
	// notOwner: another engine holds the run's lease, or took the run
	// over (a stale tenure); nothing was committed.
	notOwner
	// tenureEnded: the tenure ended under the decision — its lease was
	// lost, or another decision of this engine gave it up (a run that ends
	// needs no owner) — so nothing was committed; taking the lease again
	// may go on.
	tenureEnded
)

// driveWith is driveOwned, answering how the decision went; removal marks
// the decision as a batch of the run's removal (retention.go).
func driveWith(ctx context.Context, e *Engine, runID string, removal bool, decide func(*change) error) (driven, error) {
	held, err := e.own.leases.Take(ctx, "run:"+runID)
	if errors.Is(err, lease.ErrHeld) {
		return notOwner, nil
	}
	if err != nil {
		return notOwner, err // the lease service is down: do no background work, lose nothing
	}
	defer held.Done()
	t := &held.State
	t.Lock()
	defer t.Unlock()
	if e.cfg.inTenure != nil {
		e.cfg.inTenure(runID)
	}
	var bumped uint64
	ch, err := commitDecision(held.Context(), e, decision{runID: runID, actor: "engine:" + e.cfg.Owner, fromStore: true, removal: removal, noRules: removal, decide: func(ch *change) error {
		bumped = 0
		if err := t.Fence(ch.state.Epoch); err != nil {
			return err
		}
		if err := decide(ch); err != nil {
			return err
		}
		if t.MustBump() && (ch.dirty || len(ch.ops) > 0) {
			ch.state.Epoch++
			ch.dirty = true
			bumped = ch.state.Epoch
		}
		return nil
	}}) // fromStore: the tenure's fence reads the store's epoch, never a cached one
	switch {
	case errors.Is(err, ownership.ErrStale):
		e.own.stale.Add(1)
		e.log.Info("stale owner stopped driving a run", slog.String("run_id", runID))
		held.Drop()
		return notOwner, nil
	case err != nil && held.Context().Err() != nil:
		e.own.stale.Add(1) // the lease was lost or given up mid-decision: nothing committed, stop
		held.Drop()
		return tenureEnded, nil
	case err != nil:
		return decided, err
	}
	if bumped != 0 {
		t.Bumped(bumped)
	}
	if ch != nil && ch.state.Status.Terminal() {
		held.Drop()
	}
	return decided, nil
}

// releaseAll gives every lease up (the engine is stopping).
func releaseAll(e *Engine) { e.own.leases.ReleaseAll() }

// Ownership is checkpoint ownership (docs/semantics.md#checkpoint-ownership):
// how the engine makes sure only one writer changes a run at a time.
type Ownership = ownership.Mode

// The ownership modes (package ownership).
const (
	SingleOwner = ownership.SingleOwner
	CASRequired = ownership.CASRequired
)

// CheckpointOwnershipCapabilityError is the fail-fast error of
// docs/semantics.md#capabilities-fail-fast: the configuration requires
// concurrent owners but the store cannot compare and set.
type CheckpointOwnershipCapabilityError = ownership.CapabilityError

// commitChecked commits a batch whose conditions the store may not be able
// to check itself (ownership.Commit).
var commitChecked = ownership.Commit
