package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
)

// ProjectionParams names the run a projection is of.
type ProjectionParams struct {
	TenantID string
	RunID    string
}

// projectionBase answers the snapshot a projection of the run starts from:
// its identity and definition, every step PENDING, watermark 0.
func projectionBase(ctx context.Context, e *Engine, p ProjectionParams) (*runstate.Snapshot, error) {
	runID := p.RunID
	rec, err := e.records.RunFor(ctx, p.TenantID, runID)
	if err != nil {
		return nil, err
	}
	base := &runstate.State{RunID: runID, Status: runstate.RunPending}
	for _, a := range rec.Definition.Actions {
		base.Steps = append(base.Steps, &runstate.StepState{ActionID: a.ID, Status: runstate.StepPending, LogicalAttempt: 1})
	}
	return snapshotOf(rec, base), nil
}

// Projector keeps a snapshot current from a run's event log, incrementally
// from its watermark, and rebuilds it from scratch (FULL resync) when a fetch
// is not contiguous with the watermark (docs/semantics.md#projection).
type Projector struct {
	eng    *Engine
	tenant string
	runID  string
	snap   *runstate.Snapshot
	// Resyncs counts the FULL rebuilds a non-contiguous fetch caused.
	Resyncs int
}

// NewProjector answers a projector of one run, starting empty.
func NewProjector(ctx context.Context, e *Engine, p ProjectionParams) (*Projector, error) {
	base, err := projectionBase(ctx, e, p)
	if err != nil {
		return nil, err
	}
	return &Projector{eng: e, tenant: p.TenantID, runID: p.RunID, snap: base}, nil
}

// Snapshot answers the current projection (immutable: callers get their own copy).
func (p *Projector) Snapshot() *runstate.Snapshot { return p.snap.Clone() }

// ProjectorLagThreshold is the lag above which a projector raises
// PROJECTOR_LAG_HIGH (docs/semantics.md#projector-alert-thresholds: over 5 s).
const ProjectorLagThreshold = 5 * time.Second

// Catch fetches every event after the watermark and applies it. A fetch
// whose first event does not follow the watermark is treated as eventual
// consistency, not corruption: the projector raises
// PROJECTOR_NON_CONTIGUOUS_FETCH_DETECTED, rebuilds from the start, and
// counts the resync complete only when the watermark advanced.
//
// Its lag is the age, on the engine's clock, of the oldest event it had not
// applied (the first one fetched: emitted_at is when the event was
// persisted): how long its snapshot has been stale. Over
// ProjectorLagThreshold it raises PROJECTOR_LAG_HIGH.
func (p *Projector) Catch(ctx context.Context) error {
	before := p.snap.LastEventSeq
	events, err := p.fetch(ctx, before)
	if err != nil || len(events) == 0 {
		return err
	}
	if lag := p.eng.clock.Now().Sub(events[0].EmittedAt); lag > ProjectorLagThreshold {
		p.eng.alert(ctx, AlertProjectorLagHigh, slog.String("run_id", p.runID), slog.Uint64("watermark", before),
			slog.Uint64("last_event_seq", events[len(events)-1].Seq), slog.Duration("lag", lag))
	}
	if events[0].Seq != before+1 {
		p.eng.alert(ctx, AlertProjectorNonContiguousFetch, slog.String("run_id", p.runID),
			slog.Uint64("watermark", before), slog.Uint64("next_seq", events[0].Seq))
		return p.resync(ctx, before)
	}
	p.snap = p.project(ctx, p.snap, events, before)
	return nil
}

// project reduces events onto base like Project, and raises
// PROJECTOR_CAUSAL_VIOLATION for each event after watermark that starts or
// completes a step whose dependencies have not all succeeded in the
// projection. The alert is informational: the event is applied anyway, in
// run_seq order (docs/semantics.md#run-seq).
func (p *Projector) project(ctx context.Context, base *runstate.Snapshot, events []runstate.Event, watermark uint64) *runstate.Snapshot {
	return runstate.ProjectEach(base, events, func(snap *runstate.Snapshot, ev runstate.Event) {
		if ev.Seq <= watermark || (ev.Type != runstate.EvStepStarted && ev.Type != runstate.EvStepCompleted) {
			return
		}
		if dep, ok := runstate.UnmetDependency(snap, ev.StepID); ok {
			p.eng.alert(ctx, AlertProjectorCausalViolation, slog.String("run_id", p.runID),
				slog.Uint64("run_seq", ev.Seq), slog.String("event_type", ev.Type),
				slog.String("step_id", ev.StepID), slog.String("dependency", dep))
		}
	})
}

// resync rebuilds the projection from every event (FULL mode).
func (p *Projector) resync(ctx context.Context, before uint64) error {
	base, err := projectionBase(ctx, p.eng, ProjectionParams{TenantID: p.tenant, RunID: p.runID})
	if err != nil {
		return err
	}
	events, err := p.fetch(ctx, 0)
	if err != nil {
		return err
	}
	rebuilt := p.project(ctx, base, events, before)
	if rebuilt.LastEventSeq <= before {
		return fmt.Errorf("resync of run %s did not advance the watermark past %d", p.runID, before)
	}
	p.snap = rebuilt
	p.Resyncs++
	return nil
}

// fetch pages through the events after a watermark.
func (p *Projector) fetch(ctx context.Context, after uint64) ([]runstate.Event, error) {
	var out []runstate.Event
	for {
		page, err := p.eng.ListEvents(ctx, ListEventsParams{TenantID: p.tenant, RunID: p.runID, AfterSeq: after, PageSize: 1000})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Events...)
		if !page.HasMore || len(page.Events) == 0 {
			return out, nil
		}
		after = page.Events[len(page.Events)-1].Seq
	}
}

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
	base, err := projectionBase(ctx, e, ProjectionParams{TenantID: tenantID, RunID: runID})
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
