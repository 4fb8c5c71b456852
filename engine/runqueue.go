package engine

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Limits cap concurrently started runs (RUNNING, BLOCKED, PAUSED or
// COMPENSATING). Zero means no limit. A definition's max_concurrent_runs, when
// set, caps its own runs in addition to the tenant's limit.
type Limits struct {
	PerTenant     int
	PerDefinition int
}

// Backpressure defaults.
const (
	// DefaultBackpressure is what a definition without a mode gets.
	DefaultBackpressure = definition.BackpressureQueue
	// DefaultRetryAfter is what REJECT tells a client to wait.
	DefaultRetryAfter = time.Second
	// DefaultDelay is how far DELAY pushes the start of an over-limit run's activities.
	DefaultDelay = 5 * time.Second
)

// limitsOf answers the concurrency limits that apply to run (package
// admission): the tenant's, and its definition's max_concurrent_runs or
// else the deployment's per-definition limit.
func (c Config) limitsOf(run *record.Run) []admission.Limit {
	perPlan := run.Definition.MaxConcurrentRuns
	if perPlan == 0 {
		perPlan = c.Limits.PerDefinition
	}
	return admission.Limits(run.TenantID, run.Definition.PlanID, c.Limits.PerTenant, perPlan)
}

// backpressureOf answers what run does at a limit: its definition's mode,
// else the deployment's.
func (c Config) backpressureOf(run *record.Run) definition.BackpressureMode {
	return cmp.Or(run.Definition.Backpressure, c.Backpressure)
}

// checkAdmission refuses a submission under REJECT when a limit is reached,
// before anything is written.
func checkAdmission(ctx context.Context, e *Engine, rec *record.Run) error {
	if e.cfg.backpressureOf(rec) != definition.BackpressureReject {
		return nil
	}
	_, full, err := admission.FreeSlots(ctx, e.store, e.cfg.limitsOf(rec))
	if err != nil || full == nil {
		return err
	}
	return fault.LimitReached(full.Size, full.Of, DefaultRetryAfter)
}

// QueueResult is what one reconciler pass did with one run (docs/semantics.md#backpressure).
type QueueResult struct {
	RunID  string
	Status string // STARTED, SKIPPED, CANCELLED (strategy cancelNewest) or FAILED
}

// dequeueAndStart is the run-queue reconciler of docs/semantics.md#backpressure: stateless and
// idempotent, safe in several engines at once. Each QUEUED run, by priority
// then oldest first, is started when a slot is free (STARTED), left queued
// when not (SKIPPED), or reported FAILED when its start failed; the start is
// a fenced, conditional claim, so no run is ever started twice. A pass
// reads up to admission.QueueScan entries and decides on up to
// admission.QueuedRuns of them: once a run finds its concurrency key full,
// the later runs of that key are skipped without a decision
// (docs/semantics.md#run-concurrency). A run left QUEUED under strategy
// cancelInProgress has the key's oldest started run cancelled, then is
// decided on again at once.
func dequeueAndStart(ctx context.Context, e *Engine) ([]QueueResult, error) {
	queued, err := admission.Oldest(ctx, e.store)
	if err != nil {
		return nil, err
	}
	var out []QueueResult
	full := map[string]bool{} // the concurrency keys found full in this pass, by slot prefix
	decided := 0
	for _, it := range queued {
		if it.KeySlots != "" && full[it.KeySlots] {
			out = append(out, QueueResult{RunID: it.RunID, Status: "SKIPPED"})
			continue
		}
		if decided == admission.QueuedRuns {
			break
		}
		decided++
		res, keyFull, preempt := admitQueued(ctx, e, it)
		if preempt {
			rec, err := e.records.LoadRun(ctx, it.RunID)
			if err == nil {
				if ok, perr := preemptOldest(ctx, e, rec); perr == nil && ok {
					res, keyFull, _ = admitQueued(ctx, e, it)
				}
			}
		}
		if keyFull && res.Status != "STARTED" && it.KeySlots != "" {
			full[it.KeySlots] = true
		}
		out = append(out, res)
	}
	return out, nil
}

// admitQueued decides on one queued run: admitted, left queued or failed,
// and whether its concurrency key was full and, under cancelInProgress,
// a run of the key is to be cancelled for it.
func admitQueued(ctx context.Context, e *Engine, it admission.Queued) (res QueueResult, keyFull, preempt bool) {
	runID := it.RunID
	started, cancelled := false, false
	owned, err := driveOwned(ctx, e, runID, func(ch *change) error {
		started, cancelled, keyFull, preempt = false, false, false, false // a decision made again after a lost race starts afresh
		if ch.state.Status != runstate.RunQueued {
			ch.del(it.Key) // started elsewhere, or cancelled: the index entry is stale
			return nil
		}
		if err := ch.rules().Admit(); err != nil {
			return err
		}
		cancelled = ch.state.Status == runstate.RunCancelled // strategy cancelNewest
		started = ch.state.Status != runstate.RunQueued && !cancelled
		keyFull, preempt = ch.prepared.rules.KeyFull, ch.preempt
		return nil
	})
	var lostSlot *store.ConditionFailedError
	switch {
	case errors.As(err, &lostSlot):
		return QueueResult{RunID: runID, Status: "SKIPPED"}, false, false // another engine took the slot: next pass
	case err != nil:
		return QueueResult{RunID: runID, Status: "FAILED"}, false, false
	case cancelled && owned:
		return QueueResult{RunID: runID, Status: "CANCELLED"}, true, false
	case started && owned: // not when this engine learned it was stale: its last attempt lost its race
		return QueueResult{RunID: runID, Status: "STARTED"}, keyFull, false
	}
	return QueueResult{RunID: runID, Status: "SKIPPED"}, keyFull, preempt && owned
}

// kickRunQueue asks Run for a run-queue pass now, without waiting: a
// committed decision gave a run's concurrency slots back, so a queued run
// of this engine's store may start within this pass rather than at the
// next tick (other engines start theirs at their next tick). A kick
// already pending is enough.
func kickRunQueue(e *Engine) {
	select {
	case e.runQueueKick <- struct{}{}:
	default:
	}
}
