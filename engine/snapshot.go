package engine

import (
	"cmp"
	"context"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
)

// snapshotOf builds a snapshot from a run's record and checkpoint.
func snapshotOf(rec *record.Run, s *runstate.State) *runstate.Snapshot {
	snap := &runstate.Snapshot{
		RunID: rec.RunID, TenantID: rec.TenantID, ProjectID: rec.ProjectID, EnvironmentID: rec.EnvironmentID,
		PlanID: rec.Definition.PlanID, PlanVersion: rec.Definition.PlanVersion, RunRequestID: rec.RunRequestID,
		SubmittedBy: rec.SubmittedBy, TriggerSource: cmp.Or(rec.TriggerSource, TriggerAPI), Status: s.Status, Substatus: s.Substatus, Message: s.Message,
		CreatedAt: s.CreatedAt, StartedAt: s.StartedAt, CompletedAt: s.CompletedAt, LastEventSeq: s.LastSeq,
		Error: s.Error, Cancellation: s.Cancellation, Definition: rec.Definition, Input: rec.Input, Deadline: s.Deadline,
		RetainUntil: s.RetainUntil, StepFailures: s.StepFailures, SearchAttributes: s.SearchAttributes, Priority: rec.EffectivePriority(),
	}
	if s.Compensation != nil {
		snap.CompensationOutcome = s.Compensation.Outcome
	}
	if c := rec.Definition.Concurrency; c != nil && rec.ConcurrencyKey != "" {
		snap.Concurrency = &runstate.KeyConcurrency{Key: rec.ConcurrencyKey, Limit: c.Limit, Strategy: string(definition.StrategyOf(c.Strategy))}
	}
	if p := rec.Parent; p != nil {
		snap.ParentRunID, snap.ParentStep = p.RunID, p.Step
	}
	if !s.CompletedAt.IsZero() && !s.StartedAt.IsZero() {
		snap.TotalDuration = s.CompletedAt.Sub(s.StartedAt)
	}
	if len(s.Steps) > 0 {
		snap.Steps = make([]runstate.StepState, len(s.Steps))
	}
	artifacts := 0
	for i, st := range s.Steps {
		snap.Steps[i] = *st
		artifacts += len(st.Artifacts)
	}
	if artifacts > 0 {
		snap.Artifacts = make([]runstate.ArtifactRef, 0, artifacts)
		for _, st := range s.Steps {
			snap.Artifacts = append(snap.Artifacts, st.Artifacts...)
		}
	}
	snap.Result = snap.RunResult()
	return snap
}

// GetRunParams names the run GetRun answers.
type GetRunParams struct {
	TenantID string
	RunID    string
}

// GetRun answers a run's snapshot.
func (e *Engine) GetRun(ctx context.Context, p GetRunParams) (*runstate.Snapshot, error) {
	tenantID, runID := p.TenantID, p.RunID
	rec, err := e.records.RunFor(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	state, _, err := e.records.LoadCheckpoint(ctx, runID)
	if err != nil {
		return nil, err
	}
	snap := snapshotOf(rec, state)
	if snap.FlowWaits, err = flowWaitsOf(ctx, e, rec, state); err != nil {
		return nil, err
	}
	if snap.Concurrency, err = runKeyConcurrencyOf(ctx, e, rec, state); err != nil {
		return nil, err
	}
	return snap, nil
}

// ListEventsResult is one page of a run's events.
type ListEventsResult struct {
	Events       []runstate.Event
	LastEventSeq uint64
	HasMore      bool
}

// ListEventsParams asks for one page of a run's events.
type ListEventsParams struct {
	TenantID string
	RunID    string
	// AfterSeq is the watermark: the page starts at the event after it.
	AfterSeq uint64
	// PageSize is the most events answered; 0 or less answers 100.
	PageSize int
}

// ListEvents answers a run's events after a watermark, in run_seq order.
func (e *Engine) ListEvents(ctx context.Context, p ListEventsParams) (*ListEventsResult, error) {
	tenantID, runID, afterSeq, pageSize := p.TenantID, p.RunID, p.AfterSeq, p.PageSize
	if _, err := e.records.RunFor(ctx, tenantID, runID); err != nil {
		return nil, err
	}
	if pageSize <= 0 {
		pageSize = 100
	}
	state, _, err := e.records.LoadCheckpoint(ctx, runID)
	if err != nil {
		return nil, err
	}
	events, more, err := runlog.ReadEvents(ctx, e.store, runID, afterSeq, pageSize)
	if err != nil {
		return nil, err
	}
	return &ListEventsResult{Events: events, LastEventSeq: state.LastSeq, HasMore: more}, nil
}
