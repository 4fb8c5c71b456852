package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// cacheSize bounds each generation of the engine's caches of run records and
// decoded checkpoints (recentCache): with two generations, at most twice
// this many runs are held. What they save is decoding for the runs in
// flight, a few times the concurrent clients; each run costs about 3.4 KB
// (five steps), so 2 x 4,096 held 28 MB of live heap in a weftd that had
// just accepted 100k runs, a third of its heap, for runs it would not read
// again.
const cacheSize = 1024

// cachedCheckpoint is a decoded checkpoint and the version it was stored
// at. Its state is shared by readers and is never changed: a decision works
// on a clone.
type cachedCheckpoint struct {
	version uint64
	state   *runstate.State
}

// loadCheckpoint reads a run's checkpoint and its version. The state it
// answers is shared and must not be changed; mutate works on a clone
// (loadCheckpointForChange).
//
// The store is always read, so the answer is as fresh as without a cache;
// what is saved is decoding, when the version read is the one decoded last.
// A read never replaces a newer version a commit cached meanwhile.
func (e *Engine) loadCheckpoint(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	item, err := e.store.Get(ctx, checkpointKey(runID))
	if errors.Is(err, store.ErrNotFound) {
		e.checkpoints.remove(runID)
		return nil, 0, runNotFound(runID)
	}
	if err != nil {
		return nil, 0, err
	}
	if c, ok := e.checkpoints.get(runID); ok && c.version == item.Version {
		return c.state, item.Version, nil
	}
	var s runstate.State
	if err := json.Unmarshal(item.Value, &s); err != nil {
		return nil, 0, fmt.Errorf("checkpoint %s: %w", runID, err)
	}
	e.checkpoints.putUnless(runID, cachedCheckpoint{version: item.Version, state: &s},
		func(held cachedCheckpoint) bool { return held.version > item.Version })
	return &s, item.Version, nil
}

// checkpointToDecideOn answers a private copy of the checkpoint a decision
// starts from and its version: the cached one unless fromStore (answering
// cached true), else the store's.
func (e *Engine) checkpointToDecideOn(ctx context.Context, runID string, fromStore bool) (*runstate.State, uint64, bool, error) {
	if c, ok := e.checkpoints.get(runID); ok && !fromStore {
		return c.state.Clone(), c.version, true, nil
	}
	s, version, err := e.loadCheckpointForChange(ctx, runID)
	return s, version, false, err
}

// loadCheckpointForChange answers a private copy of the checkpoint that a
// decision may change.
func (e *Engine) loadCheckpointForChange(ctx context.Context, runID string) (*runstate.State, uint64, error) {
	s, version, err := e.loadCheckpoint(ctx, runID)
	if err != nil {
		return nil, 0, err
	}
	return s.Clone(), version, nil
}

// checkpointCommitted remembers the checkpoint a decision just committed at
// version, so that the next decision or read of the run need not decode it.
// The decision must not change state afterwards.
func (e *Engine) checkpointCommitted(runID string, version uint64, state *runstate.State) {
	e.checkpoints.put(runID, cachedCheckpoint{version: version, state: state})
}
