package engine

import (
	"context"
	"errors"
	"log/slog"

	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/internal/retention"
	"github.com/weft-dev/weft/store"
)

// DeleteRunParams names the finished run DeleteRun removes, and who asks.
type DeleteRunParams struct {
	TenantID string
	RunID    string
	Actor    string
}

// DeleteRunResult says how far the removal got before DeleteRun answered.
type DeleteRunResult struct {
	// Removed: every record of the run is gone. False: the run is invisible
	// and the removal goes on in the background (its events wait for
	// export, or another engine owns the run and its next pass finishes it).
	Removed bool
}

// DeleteRun removes a finished run and every record it owns at once
// (docs/semantics.md#delete-run). A run that is not finished is refused
// with CodeFailedPrecondition; a run that does not exist, or is already
// being removed, is not found — so a second DeleteRun of one run answers
// not found.
func (e *Engine) DeleteRun(ctx context.Context, p DeleteRunParams) (*DeleteRunResult, error) {
	rec, err := e.records.RunFor(ctx, p.TenantID, p.RunID)
	if err != nil {
		return nil, err
	}
	if err := deleteChildren(ctx, e, rec, p); err != nil {
		return nil, err
	}
	var indexKey []byte
	_, err = commitDecision(ctx, e, decision{runID: p.RunID, actor: p.Actor, decide: func(ch *change) error {
		s := ch.state
		if !s.Status.Terminal() {
			return fault.FailedPrecondition(p.RunID, "run "+p.RunID+" is "+string(s.Status)+
				": only a finished run (COMPLETED, FAILED or CANCELLED) can be deleted")
		}
		var old []byte
		if !s.RetainUntil.IsZero() {
			old = retention.ExpiryKey(s.RetainUntil, p.RunID)
		}
		r := removal{ch}
		r.Reindex(old, ch.now)
		r.Hide()
		indexKey = retention.ExpiryKey(ch.now, p.RunID)
		return nil
	}})
	if err != nil {
		return nil, err
	}
	forgetRun(e, p.RunID)
	gone, err := removeRun(ctx, e, indexKey, p.RunID)
	if err == nil && !gone {
		// This call did not finish the removal; the retention pass (of this
		// engine or another) may have: the answer says what happened.
		gone, err = runGone(ctx, e, p.RunID)
	}
	if err != nil {
		// The run is invisible and indexed as expired now: the next pass goes on.
		e.log.Warn("delete run: removal continues in the background", slog.String("run_id", p.RunID), slog.String("error", err.Error()))
	}
	return &DeleteRunResult{Removed: gone}, nil
}

// dropIfRunGone deletes a due timer whose run retention removed (a timer
// the removal could not name): with no run there is nothing to decide.
func dropIfRunGone(ctx context.Context, e *Engine, runID string, timer []byte) error {
	_, err := e.store.Get(ctx, record.RunKey(runID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return deleteOrphan(ctx, e, timer)
	case err != nil:
		return err
	}
	return nil // the run is there (or being removed): look again next tick
}
