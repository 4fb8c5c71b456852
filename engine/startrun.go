package engine

import (
	"context"

	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
)

// StartParams names the run StartRun triggers and who asks.
type StartParams struct {
	TenantID string
	RunID    string
	// Actor is who starts the run; "" is the system.
	Actor string
}

// StartRun triggers a PENDING or APPROVED run.
func (e *Engine) StartRun(ctx context.Context, p StartParams) (*runstate.Snapshot, error) {
	return startSubmitted(ctx, e, p.TenantID, p.RunID, p.Actor)
}

// startSubmitted triggers a submitted run: StartRun.
func startSubmitted(ctx context.Context, e *Engine, tenantID, runID, actor string) (*runstate.Snapshot, error) {
	if _, err := e.records.RunFor(ctx, tenantID, runID); err != nil {
		return nil, err
	}
	if _, err := mutate(ctx, e, runID, decide.ActorOf(actor), triggerDecision((*decide.Decision).Start)); err != nil {
		return nil, err
	}
	return e.GetRun(ctx, GetRunParams{TenantID: tenantID, RunID: runID})
}

// triggerRun moves a run QUEUED and then RUNNING, scheduling its first steps,
// and removes the pending-trigger marker in the same batch.
func triggerRun(ctx context.Context, e *Engine, runID, actor string) error {
	_, err := mutate(ctx, e, runID, decide.ActorOf(actor), triggerDecision((*decide.Decision).Trigger))
	return err
}

// triggerDecision is the decision a trigger makes (decide.Trigger, or
// StartRun's decide.Start), removing the run's pending-trigger marker in
// the same batch.
func triggerDecision(trigger func(*decide.Decision) error) func(*change) error {
	return func(ch *change) error {
		ch.del(record.PendingTriggerKey(ch.run.RunID))
		return fault.Refused(trigger(ch.rules()))
	}
}
