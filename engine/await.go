package engine

import (
	"context"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
)

// AwaitRun answers the run's snapshot as soon as it is terminal, or once
// wait has passed (then as it is; 0 answers at once). It looks at the run's
// checkpoint each time this engine appends to the run's log
// (EventsAppended; another engine's appends arrive through a Notifier, not
// reliably) and at least every PollInterval, and builds a snapshot only to
// answer, where watching the run's events reads, converts and sends each
// one. The first look reads the store; a later one takes the engine's cached
// checkpoint when a commit of this engine advanced it since the look before
// (lookAgain), and reads the store otherwise.
// It answers the context's error when ctx ends first.
func (e *Engine) AwaitRun(ctx context.Context, tenantID, runID string, wait time.Duration) (*runstate.Snapshot, error) {
	rec, err := e.runFor(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	deadline := e.clock.Now().Add(wait)
	var seen uint64 // the version of the last look; 0: none yet
	for {
		state, version, err := e.awaitOnce(ctx, runID, seen, deadline)
		if err != nil {
			return nil, err
		}
		if state != nil {
			return snapshotOf(rec, state), nil
		}
		seen = version
	}
}

// awaitOnce looks at the run once: it answers the state when the run is
// terminal or the deadline has passed, else waits for an append or the poll
// interval and answers the version it saw.
func (e *Engine) awaitOnce(ctx context.Context, runID string, seen uint64, deadline time.Time) (*runstate.State, uint64, error) {
	appended, release := e.EventsAppended(runID) // before the look: an append in between closes it
	defer release()
	state, version, err := e.lookAgain(ctx, runID, seen)
	if err != nil {
		return nil, 0, err
	}
	remaining := deadline.Sub(e.clock.Now())
	if state.Status.Terminal() || remaining <= 0 {
		return state, version, nil
	}
	return nil, version, awaitAppend(ctx, appended, min(remaining, e.cfg.PollInterval))
}

// lookAgain answers the run's checkpoint for a waiter that last saw version
// seen: the cached one when it is newer (a commit of this engine advanced it,
// so no read is needed to see it), else the store's. A cached terminal state
// is final; a non-terminal one is at worst overtaken by another engine's
// commit, whose wake-up, or the next interval, finds the cache not advanced
// and reads the store.
func (e *Engine) lookAgain(ctx context.Context, runID string, seen uint64) (*runstate.State, uint64, error) {
	if c, ok := e.checkpoints.get(runID); ok && seen != 0 && c.version > seen {
		return c.state, c.version, nil
	}
	return e.loadCheckpoint(ctx, runID)
}

// awaitAppend waits until appended closes or d passes; it answers ctx's
// error if ctx ends first.
func awaitAppend(ctx context.Context, appended <-chan struct{}, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-appended:
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
