package ownership

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/weft-dev/weft/store"
)

// Mode is how the engine makes sure only one writer changes a run at a time.
type Mode string

// The modes.
const (
	// SingleOwner: the deployment guarantees one engine process per store
	// (the embedded default). Changes are serialised by the process; on a
	// store with conditionalBatch they are compare-and-set all the same.
	SingleOwner Mode = "single-owner"
	// CASRequired: several engines may drive the same runs (the cluster).
	// Every change is a conditional batch; a store without conditionalBatch
	// is refused before the engine claims, recovers or polls anything.
	CASRequired Mode = "cas-required"
)

// CapabilityError is the fail-fast error of
// docs/semantics.md#capabilities-fail-fast: the configuration requires
// concurrent owners but the store cannot compare and set.
type CapabilityError struct {
	Capability string
	Mode       Mode
	Backend    string
}

// Error implements error.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("checkpoint ownership %q needs the store capability %s, which the %s store does not have",
		e.Mode, e.Capability, e.Backend)
}

// Check applies the fail-fast rule at the engine's start boundary.
func Check(mode Mode, caps store.Capabilities) error {
	switch mode {
	case SingleOwner:
		return nil
	case CASRequired:
		if !caps.ConditionalBatch {
			return &CapabilityError{Capability: store.CapabilityConditionalBatch, Mode: mode, Backend: caps.Backend}
		}
		return nil
	default:
		return fmt.Errorf("checkpoint ownership must be %q or %q, got %q", SingleOwner, CASRequired, mode)
	}
}

// Commit writes a batch. On a store without conditionalBatch (single-owner
// only) the conditions are checked by reading, then the writes go as an
// atomic batch: safe because this process is the only writer and serialises
// its own writers per run.
func Commit(ctx context.Context, st store.Store, b *store.Batch) (*store.CommitResult, error) {
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

// ErrStale ends a decision made by an engine whose fencing epoch is no
// longer the run's: another engine took the run over.
var ErrStale = errors.New("stale owner: the run's fencing epoch moved on")

// Tenure is what one engine knows of one run during one tenure of the run's
// lease. Each tenure starts from nothing: a run taken again after its lease
// was given up bumps the epoch again, with its first write. Its lock
// serialises the engine's decisions under the tenure.
type Tenure struct {
	sync.Mutex
	read  bool   // a decision under this tenure has read the run's epoch
	wrote bool   // the tenure has written: epoch is the one it bumped to
	epoch uint64 // the run's epoch as the tenure first read it, then as it bumped it
}

// Fence checks the run's epoch as a decision under the tenure reads it. The
// first read records it; from then on the epoch may only move by this
// tenure's own bump. Any other change means another engine took the run
// over since this one took the lease (which it has lost, even if it has not
// noticed yet), so the decision must not commit: ErrStale.
func (t *Tenure) Fence(epoch uint64) error {
	if !t.read {
		t.read, t.epoch = true, epoch
		return nil
	}
	if epoch != t.epoch {
		return ErrStale
	}
	return nil
}

// MustBump reports whether a decision that writes must bump the epoch: the
// first write of the tenure does.
func (t *Tenure) MustBump() bool { return !t.wrote }

// Bumped records that the tenure's write committed the epoch it bumped to.
func (t *Tenure) Bumped(epoch uint64) { t.wrote, t.epoch = true, epoch }
