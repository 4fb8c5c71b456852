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

// owned is a run this engine drives: a held lease, and the fencing epoch this
// engine wrote into the run's checkpoint (0 until its first write).
type owned struct {
	ctx   context.Context
	stop  func()
	epoch uint64
}

// ownership tracks the runs this engine drives.
type ownership struct {
	mu    sync.Mutex
	runs  map[string]*owned
	stale atomic.Int64
}

// StaleCommitsRejected counts decisions this engine made as a run's owner
// that the fencing epoch refused, because another engine had taken over.
func (e *Engine) StaleCommitsRejected() int64 { return e.own.stale.Load() }

// drive runs a background decision (a timer, a recovery, retention) as the
// run's owner. The engine takes the run's lease first — when another engine
// holds it, that engine drives the run and this one does nothing. The first
// write under a new lease bumps the run's fencing epoch in the same
// conditional batch; every later decision checks it, so an owner that lost
// its lease (paused, partitioned, slow) can never commit, and stops.
func (e *Engine) drive(ctx context.Context, runID string, decide func(*change) error) error {
	o, err := e.acquire(ctx, runID)
	if o == nil {
		return err
	}
	var bumped uint64
	ch, err := e.mutate(o.ctx, runID, "engine:"+e.cfg.Owner, func(ch *change) error {
		bumped = 0
		if o.epoch != 0 && ch.state.Epoch != o.epoch {
			return errStaleOwner
		}
		if err := decide(ch); err != nil {
			return err
		}
		if o.epoch == 0 && (ch.dirty || len(ch.ops) > 0) {
			ch.state.Epoch++
			ch.dirty = true
			bumped = ch.state.Epoch
		}
		return nil
	})
	switch {
	case errors.Is(err, errStaleOwner):
		e.own.stale.Add(1)
		e.log.Info("stale owner stopped driving a run", slog.String("run_id", runID))
		e.release(runID)
		return nil
	case err != nil && o.ctx.Err() != nil:
		e.own.stale.Add(1) // the lease was lost mid-decision: nothing committed, stop
		e.release(runID)
		return nil
	case err != nil:
		return err
	}
	if bumped != 0 {
		o.epoch = bumped
	}
	if ch != nil && ch.state.Status.Terminal() {
		e.release(runID)
	}
	return nil
}

// acquire answers the run's ownership, taking its lease when needed; nil
// when another engine holds it.
func (e *Engine) acquire(ctx context.Context, runID string) (*owned, error) {
	e.own.mu.Lock()
	o := e.own.runs[runID]
	e.own.mu.Unlock()
	if o != nil && o.ctx.Err() == nil {
		return o, nil
	}
	if o != nil {
		e.release(runID)
	}
	l, err := e.cfg.Leases.Acquire(ctx, "run:"+runID, e.cfg.Owner, e.cfg.LeaseTTL)
	if errors.Is(err, lease.ErrHeld) {
		return nil, nil
	}
	if err != nil {
		return nil, err // the lease service is down: do no background work, lose nothing
	}
	held, stop := lease.Hold(context.WithoutCancel(ctx), e.cfg.Leases, l)
	o = &owned{ctx: held, stop: stop}
	e.own.mu.Lock()
	e.own.runs[runID] = o
	e.own.mu.Unlock()
	return o, nil
}

// release gives a run's lease up.
func (e *Engine) release(runID string) {
	e.own.mu.Lock()
	o := e.own.runs[runID]
	delete(e.own.runs, runID)
	e.own.mu.Unlock()
	if o != nil {
		o.stop()
	}
}

// releaseAll gives every lease up (the engine is stopping).
func (e *Engine) releaseAll() {
	e.own.mu.Lock()
	ids := make([]string, 0, len(e.own.runs))
	for id := range e.own.runs {
		ids = append(ids, id)
	}
	e.own.mu.Unlock()
	for _, id := range ids {
		e.release(id)
	}
}
