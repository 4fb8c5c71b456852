package engine

import (
	"context"

	"github.com/weft-dev/weft/engine/runstate"
)

// SnapshotAtParams names a run and the watermark SnapshotAt may not pass.
type SnapshotAtParams struct {
	TenantID string
	RunID    string
	Seq      uint64
}

// SnapshotAt answers a snapshot of a run whose watermark is at or before seq,
// for a projector's FROM_SNAPSHOT resync (docs/semantics.md#resync): the
// run's current snapshot when it is not newer than seq, else one rebuilt from
// the run's log up to seq. It answers nil when there is none to give — seq 0,
// before the run's first event — and the caller falls back to FULL.
func (e *Engine) SnapshotAt(ctx context.Context, p SnapshotAtParams) (*runstate.Snapshot, error) {
	tenantID, runID, seq := p.TenantID, p.RunID, p.Seq
	current, err := e.GetRun(ctx, GetRunParams{TenantID: tenantID, RunID: runID})
	if err != nil || current.LastEventSeq <= seq {
		return current, err
	}
	if seq == 0 {
		return nil, nil
	}
	base, err := e.ProjectionBase(ctx, ProjectionParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, err
	}
	var upTo []runstate.Event
	for after := uint64(0); after < seq; {
		page, err := e.ListEvents(ctx, ListEventsParams{TenantID: tenantID, RunID: runID, AfterSeq: after, PageSize: 1000})
		if err != nil {
			return nil, err
		}
		for _, ev := range page.Events {
			if ev.Seq > seq {
				return runstate.Project(base, upTo), nil
			}
			upTo = append(upTo, ev)
			after = ev.Seq
		}
		if !page.HasMore || len(page.Events) == 0 {
			break
		}
	}
	return runstate.Project(base, upTo), nil
}
