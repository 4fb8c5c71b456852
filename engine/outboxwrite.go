package engine

import (
	"context"

	"github.com/weft-dev/weft/engine/runlog"
)

// outboxWrite answers what a decision's batch does with its run's outbox
// entry (docs/semantics.md#outbox): nothing without events or with export
// off; else put it when the run has none, or assert it when it has. A new
// run has none. A decision made the first time takes what this process
// knows of the entry (Config.OutboxCache: what its engine committed and its
// export worker deleted); one made again, or a run this process knows
// nothing of, reads it. Either way the batch's condition on the entry is
// what proves the answer: a wrong one fails the commit on the entry's key,
// and the decision is made again (decideOnce).
func outboxWrite(ctx context.Context, e *Engine, c *change, fresh bool) (runlog.OutboxWrite, error) {
	switch {
	case c.e == nil || !e.cfg.Outbox || len(c.events) == 0:
		return runlog.NoOutbox, nil
	case c.newRun:
		return runlog.OutboxPut, nil
	}
	runID := c.run.RunID
	if !fresh {
		if live, known := e.cfg.OutboxCache.Live(runID); known {
			return outboxWriteFor(live), nil
		}
	}
	_, live, err := getValue(ctx, e.store, runlog.RunOutboxKey(runID))
	if err != nil {
		return runlog.NoOutbox, err
	}
	e.cfg.OutboxCache.Saw(runID, live)
	return outboxWriteFor(live), nil
}

func outboxWriteFor(live bool) runlog.OutboxWrite {
	if live {
		return runlog.OutboxKept
	}
	return runlog.OutboxPut
}
