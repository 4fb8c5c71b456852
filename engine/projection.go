package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine/definition"
)

// Project reduces events onto base (spec 004 §1.4–1.5) and answers a new
// snapshot; base is never changed. Events at or below the watermark are
// ignored, so reprocessing is idempotent; unknown event types advance the
// watermark and change nothing. The checkpoint keeps a few details no event
// carries (the engine attempt of a scheduled retry and its start time);
// everything else agrees with GetRun, which tests check after every scenario.
func Project(base *Snapshot, events []Event) *Snapshot {
	snap := base.copy()
	for _, ev := range events {
		if ev.Seq <= snap.LastEventSeq {
			continue
		}
		reduce(snap, ev)
		snap.LastEventSeq = ev.Seq
	}
	return snap
}

// copy answers a deep-enough copy for reduction (steps and their attempts).
func (s *Snapshot) copy() *Snapshot {
	out := *s
	out.Steps = make([]StepState, len(s.Steps))
	for i, st := range s.Steps {
		st.Attempts = append([]Attempt(nil), st.Attempts...)
		out.Steps[i] = st
	}
	return &out
}

// reduce applies one event.
func reduce(s *Snapshot, ev Event) {
	if fn, ok := runReducers[ev.Type]; ok {
		fn(s, ev)
		return
	}
	if fn, ok := stepReducers[ev.Type]; ok {
		if st := s.Step(ev.StepID); st != nil {
			fn(s, st, ev)
		}
	}
}

var runReducers = map[string]func(*Snapshot, Event){
	EvRunSubmitted: func(s *Snapshot, ev Event) { s.Status, s.CreatedAt = RunPending, ev.EmittedAt },
	EvRunApproved:  func(s *Snapshot, _ Event) { s.Status = RunApproved },
	EvRunQueued:    func(s *Snapshot, _ Event) { s.Status = RunQueued },
	EvRunStarted:   func(s *Snapshot, ev Event) { s.Status, s.StartedAt = RunRunning, ev.Data.StartedAt },
	EvRunBlocked:   func(s *Snapshot, _ Event) { s.Status, s.Substatus, s.Message = RunBlocked, "", "" },
	EvRunUnblocked: func(s *Snapshot, _ Event) { s.Status, s.Substatus, s.Message = RunRunning, "", "" },
	EvRunPaused: func(s *Snapshot, ev Event) {
		s.Status, s.Substatus, s.Message = RunPaused, ev.Data.Substatus, "Workflow paused."
		if ev.Data.Substatus == "DRAINING" {
			s.Message = fmt.Sprintf("Workflow paused. Waiting for %d in-flight tasks to complete.", ev.Data.InFlightTasks)
		}
	},
	EvRunDrained: func(s *Snapshot, ev Event) {
		s.Substatus, s.Message = "", "Workflow paused."
		if ev.Data.TimedOut {
			s.Message = fmt.Sprintf("Workflow paused. Drain timed out with %d tasks still in flight.", ev.Data.InFlightTasks)
		}
	},
	EvRunResumed: func(s *Snapshot, _ Event) { s.Status, s.Substatus, s.Message = RunRunning, "", "" },
	EvRunCompensating: func(s *Snapshot, ev Event) {
		s.Status, s.Error = RunCompensating, ev.Data.RunError
		for _, id := range ev.Data.CompensationOrder {
			if st := s.Step(id); st != nil {
				st.CompStatus = CompPending
			}
		}
	},
	EvRunCompleted: func(s *Snapshot, ev Event) { s.Status, s.CompletedAt = RunCompleted, ev.Data.CompletedAt; s.finish() },
	EvRunFailed: func(s *Snapshot, ev Event) {
		s.Status, s.CompletedAt, s.Error = RunFailed, ev.Data.CompletedAt, ev.Data.RunError
		s.CompensationOutcome = ev.Data.CompensationOutcome
		s.finish()
	},
	EvRunCancelled: func(s *Snapshot, ev Event) {
		s.Status, s.CompletedAt, s.Cancellation = RunCancelled, ev.Data.CompletedAt, ev.Data.Cancellation
		s.finish()
	},
}

// finish records the duration of a terminal run.
func (s *Snapshot) finish() {
	s.Substatus, s.Message = "", ""
	if !s.StartedAt.IsZero() && !s.CompletedAt.IsZero() {
		s.TotalDuration = s.CompletedAt.Sub(s.StartedAt)
	}
}

var stepReducers = map[string]func(*Snapshot, *StepState, Event){
	EvStepScheduled: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.ScheduledAt, st.EngineAttempt = StepScheduled, ev.EmittedAt, 1
	},
	EvStepStarted: func(_ *Snapshot, st *StepState, ev Event) { st.Status, st.StartedAt = StepRunning, ev.Data.StartedAt },
	EvStepAttemptRecorded: func(_ *Snapshot, st *StepState, ev Event) {
		if a := ev.Data.Attempt; a != nil {
			st.Attempts = append(st.Attempts, *a)
			st.EngineAttempt = a.EngineAttempt
			if a.Error != nil {
				st.Error = a.Error
			}
		}
		st.NextAttemptAt = ev.Data.NextAttemptAt
	},
	EvStepCompleted: func(s *Snapshot, st *StepState, ev Event) {
		st.Status, st.Output, st.Artifacts, st.CompletedAt = StepSucceeded, ev.Data.Output, ev.Data.Artifacts, ev.Data.CompletedAt
		st.Error, st.CompletionToken, st.WaitingSignal = nil, "", ""
		s.Artifacts = append(s.Artifacts, ev.Data.Artifacts...)
	},
	EvStepFailed: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.Error, st.CompletedAt = StepFailed, ev.Data.Error, ev.Data.CompletedAt
		st.CompletionToken, st.WaitingSignal, st.NextAttemptAt = "", "", time.Time{}
	},
	EvStepSkipped: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.Reason, st.CompletedAt = StepSkipped, ev.Data.Reason, ev.EmittedAt
	},
	EvStepCancelled: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.Reason, st.CompletedAt = StepCancelled, ev.Data.Reason, ev.EmittedAt
		st.CompletionToken, st.WaitingSignal = "", ""
	},
	EvStepWaiting: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.CompletionToken, st.WaitingSignal = StepStatus(ev.Data.Status), ev.Data.CompletionToken, ev.Data.SignalName
		if st.Status == StepWaitingManual {
			st.Manual = nil
		}
		if len(ev.Data.Output) > 0 {
			st.Output = ev.Data.Output // the activity's result, awaiting a person's confirmation
		}
	},
	EvSignalAccepted: func(_ *Snapshot, st *StepState, ev Event) {
		if ev.Data.SignalKind == SignalManual {
			st.Manual = ManualResultOf(ev)
		}
	},
	EvStepRetried: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.LogicalAttempt, st.EngineAttempt = StepPending, ev.Data.NewLogicalAttempt, 0
		st.Error, st.Reason = nil, ""
	},
	EvCompensationStarted:   func(_ *Snapshot, st *StepState, _ Event) { st.CompStatus = CompRunning },
	EvCompensationSucceeded: func(_ *Snapshot, st *StepState, _ Event) { st.CompStatus, st.CompError = CompSucceeded, nil },
	EvCompensationFailed: func(_ *Snapshot, st *StepState, ev Event) {
		st.CompStatus, st.CompError = CompFailed, ev.Data.Error
	},
}

// ProjectionBase answers the snapshot a projection of the run starts from:
// its identity and definition, every step PENDING, watermark 0.
func (e *Engine) ProjectionBase(ctx context.Context, tenantID, runID string) (*Snapshot, error) {
	rec, err := e.runFor(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	base := &RunState{RunID: runID, Status: RunPending}
	for _, a := range rec.Definition.Actions {
		base.Steps = append(base.Steps, &StepState{ActionID: a.ID, Status: StepPending, LogicalAttempt: 1})
	}
	return snapshotOf(rec, base), nil
}

// Projector keeps a snapshot current from a run's event log, incrementally
// from its watermark, and rebuilds it from scratch (FULL resync) when a fetch
// is not contiguous with the watermark (spec 004 §1.5).
type Projector struct {
	eng    *Engine
	tenant string
	runID  string
	snap   *Snapshot
	// Resyncs counts the FULL rebuilds a non-contiguous fetch caused.
	Resyncs int
}

// NewProjector answers a projector of one run, starting empty.
func (e *Engine) NewProjector(ctx context.Context, tenantID, runID string) (*Projector, error) {
	base, err := e.ProjectionBase(ctx, tenantID, runID)
	if err != nil {
		return nil, err
	}
	return &Projector{eng: e, tenant: tenantID, runID: runID, snap: base}, nil
}

// Snapshot answers the current projection (immutable: callers get their own copy).
func (p *Projector) Snapshot() *Snapshot { return p.snap.copy() }

// ProjectorLagThreshold is the lag above which a projector raises
// PROJECTOR_LAG_HIGH (spec 004 §1.5 rule 5: > 5s).
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
// run_seq order (spec 004 §1.0.1).
func (p *Projector) project(ctx context.Context, base *Snapshot, events []Event, watermark uint64) *Snapshot {
	snap := base.copy()
	for _, ev := range events {
		if ev.Seq <= snap.LastEventSeq {
			continue
		}
		if ev.Seq > watermark && (ev.Type == EvStepStarted || ev.Type == EvStepCompleted) {
			if dep, ok := unmetDependency(snap, ev.StepID); ok {
				p.eng.alert(ctx, AlertProjectorCausalViolation, slog.String("run_id", p.runID),
					slog.Uint64("run_seq", ev.Seq), slog.String("event_type", ev.Type),
					slog.String("step_id", ev.StepID), slog.String("dependency", dep))
			}
		}
		reduce(snap, ev)
		snap.LastEventSeq = ev.Seq
	}
	return snap
}

// unmetDependency answers a dependency of a step that the projection does
// not show as done: for a DAG, a depends_on predecessor not SUCCEEDED; for a
// sequential definition, an action of lower order that later steps may not
// yet pass (the scheduler's rule).
func unmetDependency(s *Snapshot, stepID string) (string, bool) {
	var step *definition.Action
	sequential := !s.Definition.DAG
	for i := range s.Definition.Actions {
		a := &s.Definition.Actions[i]
		if a.ID == stepID {
			step = a
		}
		if len(a.DependsOn) > 0 {
			sequential = false
		}
	}
	if step == nil {
		return "", false
	}
	if !sequential {
		for _, d := range step.DependsOn {
			if st := s.Step(d); st != nil && st.Status != StepSucceeded {
				return d, true
			}
		}
		return "", false
	}
	for _, a := range s.Definition.Actions {
		if st := s.Step(a.ID); a.Order < step.Order && st != nil && !passed(st, a) {
			return a.ID, true
		}
	}
	return "", false
}

// passed mirrors the scheduler's rule for a sequence: later steps may start
// once a step SUCCEEDED or was SKIPPED, or was CANCELLED under on_failure skip.
func passed(st *StepState, a definition.Action) bool {
	switch st.Status {
	case StepSucceeded, StepSkipped:
		return true
	case StepCancelled:
		return a.OnFailure == definition.OnFailureSkip
	}
	return false
}

// resync rebuilds the projection from every event (FULL mode).
func (p *Projector) resync(ctx context.Context, before uint64) error {
	base, err := p.eng.ProjectionBase(ctx, p.tenant, p.runID)
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
func (p *Projector) fetch(ctx context.Context, after uint64) ([]Event, error) {
	var out []Event
	for {
		page, err := p.eng.ListEvents(ctx, p.tenant, p.runID, after, 1000)
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
