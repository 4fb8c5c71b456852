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
	Status string // STARTED, SKIPPED or FAILED
}

// dequeueAndStart is the run-queue reconciler of docs/semantics.md#backpressure: stateless and
// idempotent, safe in several engines at once. Each QUEUED run, oldest
// first, is started when a slot is free (STARTED), left queued when not
// (SKIPPED), or reported FAILED when its start failed; the start is a fenced,
// conditional claim, so no run is ever started twice.
func dequeueAndStart(ctx context.Context, e *Engine) ([]QueueResult, error) {
	queued, err := admission.Oldest(ctx, e.store)
	if err != nil {
		return nil, err
	}
	var out []QueueResult
	for _, it := range queued {
		runID := it.RunID
		started := false
		owned, err := driveOwned(ctx, e, runID, func(ch *change) error {
			started = false // a decision made again after a lost race starts afresh
			if ch.state.Status != runstate.RunQueued {
				ch.del(it.Key) // started elsewhere, or cancelled: the index entry is stale
				return nil
			}
			if err := ch.rules().Admit(); err != nil {
				return err
			}
			started = ch.state.Status != runstate.RunQueued
			return nil
		})
		var lostSlot *store.ConditionFailedError
		switch {
		case errors.As(err, &lostSlot):
			out = append(out, QueueResult{RunID: runID, Status: "SKIPPED"}) // another engine took the slot: next pass
		case err != nil:
			out = append(out, QueueResult{RunID: runID, Status: "FAILED"})
		case started && owned: // not when this engine learned it was stale: its last attempt lost its race
			out = append(out, QueueResult{RunID: runID, Status: "STARTED"})
		default:
			out = append(out, QueueResult{RunID: runID, Status: "SKIPPED"})
		}
	}
	return out, nil
}
