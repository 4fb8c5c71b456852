package engine

import (
	"context"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// StatsCap bounds each count Stats makes: a count at the cap means "at least".
const StatsCap = store.MaxScanLimit

// Stats is a cheap picture of the store's work, for metrics.
type Stats struct {
	// RunsByStatus counts runs of every tenant by their current status.
	RunsByStatus map[runstate.RunStatus]int
	// ReadyTasks counts tasks waiting in a queue (due or not yet due).
	ReadyTasks int
	// QueuedRuns counts runs waiting for a concurrency slot.
	QueuedRuns int
}

// AllRunStatuses lists every run status, in lifecycle order.
var AllRunStatuses = []runstate.RunStatus{runstate.RunPending, runstate.RunApproved, runstate.RunQueued, runstate.RunRunning, runstate.RunBlocked, runstate.RunPaused,
	runstate.RunCompensating, runstate.RunCompleted, runstate.RunFailed, runstate.RunCancelled}

// Stats counts runs by status and the queues' depth, each up to StatsCap,
// from index keys alone (no checkpoint is read).
func (e *Engine) Stats(ctx context.Context) (*Stats, error) {
	out := &Stats{RunsByStatus: map[runstate.RunStatus]int{}}
	for _, s := range AllRunStatuses {
		n, err := e.count(ctx, store.KeyPrefix("rs", string(s)))
		if err != nil {
			return nil, err
		}
		out.RunsByStatus[s] = n
	}
	var err error
	if out.ReadyTasks, err = e.count(ctx, store.KeyPrefix("op")); err != nil {
		return nil, err
	}
	if out.QueuedRuns, err = e.count(ctx, store.KeyPrefix("rq")); err != nil {
		return nil, err
	}
	return out, nil
}

// count counts the keys under a prefix, up to StatsCap.
func (e *Engine) count(ctx context.Context, prefix []byte) (int, error) {
	res, err := e.store.Scan(ctx, &store.ScanParams{Prefix: prefix, Limit: StatsCap})
	if err != nil {
		return 0, err
	}
	return len(res.Items), nil
}
