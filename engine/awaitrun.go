package engine

import (
	"context"
	"time"

	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/runstate"
)

// AwaitParams asks for a run's snapshot once it ends.
type AwaitParams struct {
	TenantID string
	RunID    string
	// Wait is the longest to wait for the run to end; 0 answers at once.
	Wait time.Duration
	// Seen is the checkpoint version of the run the caller already holds
	// from this engine (SubmitResult.Version), 0 none: the first look then
	// takes the engine's cached checkpoint when it is that version or newer
	// instead of reading the store, unless it has nothing to wait for.
	Seen uint64
}

// AwaitRun answers the run's snapshot as soon as it is terminal, or once
// p.Wait has passed (then as it is; 0 answers at once). It looks at the run's
// checkpoint when a commit of this engine ends the run (dispatch.RunEndKey:
// not at each step before), when another engine's append to the run's log
// arrives through a Notifier (not reliably), and at least every
// PollInterval, and builds a snapshot only to answer, where watching the
// run's events reads, converts and sends each one. The first look reads the
// store, unless the caller holds a version this engine committed (p.Seen,
// as a submission with start does) and the cache holds it or a newer one
// (cache.Records.LookSince); a later one takes the engine's cached checkpoint
// when a commit of this engine advanced it since the look before
// (cache.Records.LookAgain), and reads the store otherwise. So a wait that
// ends at the deadline, or on the interval, with the cache not advanced
// answers the store's state, and only committed states ever answer: the
// cache holds a checkpoint only once its commit succeeded. It answers the context's error when ctx
// ends first.
func (e *Engine) AwaitRun(ctx context.Context, p AwaitParams) (*runstate.Snapshot, error) {
	runID := p.RunID
	rec, err := e.records.RunFor(ctx, p.TenantID, runID)
	if err != nil {
		return nil, err
	}
	deadline := e.clock.Now().Add(p.Wait)
	var (
		state *runstate.State
		seen  uint64 // the version of the last look; 0: none yet
	)
	err = e.dispatch.Waker().Await(ctx, dispatch.RunEndKey(runID), func() (time.Duration, error) {
		look := e.records.LookAgain
		if seen == 0 && p.Seen != 0 && deadline.After(e.clock.Now()) {
			seen, look = p.Seen, e.records.LookSince // the first look, with a version in hand
		}
		s, version, err := look(ctx, runID, seen)
		if err != nil {
			return 0, err
		}
		state, seen = s, version
		remaining := deadline.Sub(e.clock.Now())
		if s.Status.Terminal() || remaining <= 0 {
			return 0, nil
		}
		return min(remaining, e.cfg.PollInterval), nil
	})
	if err != nil {
		return nil, err
	}
	return snapshotOf(rec, state), nil
}
