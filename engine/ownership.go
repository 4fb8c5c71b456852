package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/store"
)

// Ownership is spec 003's checkpoint_ownership: how the engine makes sure
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

// CheckpointOwnershipCapabilityError is spec 003's fail-fast error: the
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

// commit writes a batch. On a store without conditionalBatch (single-owner
// only) the conditions are checked by reading, then the writes go as an
// atomic batch: safe because this process is the only writer and serialises
// its own writers per run.
func (e *Engine) commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if e.store.Capabilities().ConditionalBatch || len(b.Conditions) == 0 {
		return e.store.Commit(ctx, b)
	}
	err := store.CheckConditions(b.Conditions, func(key []byte) (bool, uint64, error) {
		item, err := e.store.Get(ctx, key)
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
	return e.store.Commit(ctx, &store.Batch{Ops: b.Ops})
}
