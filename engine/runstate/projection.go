package runstate

import (
	"fmt"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/definition"
)

// Project reduces events onto base (docs/semantics.md#projection) and answers a new
// snapshot; base is never changed. Events at or below the watermark are
// ignored, so reprocessing is idempotent; unknown event types advance the
// watermark and change nothing. The checkpoint keeps a few details no event
// carries (the engine attempt of a scheduled retry and its start time);
// everything else agrees with GetRun, which tests check after every scenario.
func Project(base *Snapshot, events []Event) *Snapshot { return ProjectEach(base, events, nil) }

// ProjectEach is Project, calling before (when not nil) ahead of each event
// it applies with the projection as it stands, so that a caller can check
// the event against it.
func ProjectEach(base *Snapshot, events []Event, before func(*Snapshot, Event)) *Snapshot {
	snap := base.Clone()
	for _, ev := range events {
		if ev.Seq <= snap.LastEventSeq {
			continue
		}
		if before != nil {
			before(snap, ev)
		}
		reduce(snap, ev)
		snap.LastEventSeq = ev.Seq
	}
	return snap
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

// fanOut creates the items of a forEach step its StepFannedOut announced,
// those it does not have yet (a RETRY_STEP keeps its items;
// docs/semantics.md#for-each), PENDING under the step's logical attempt.
func (s *Snapshot) fanOut(st *StepState, ev Event) {
	parent := st.ActionID
	st.ItemCount = ev.Data.ItemCount
	have := map[int]bool{}
	for i := range s.Steps {
		if s.Steps[i].Parent == parent {
			have[s.Steps[i].Index] = true
		}
	}
	for i := range ev.Data.ItemCount {
		if !have[i] {
			s.Steps = append(s.Steps, StepState{ActionID: definition.ItemID(parent, i), Parent: parent, Index: i,
				Status: StepPending, LogicalAttempt: ev.LogicalAttempt})
		}
	}
}

// reopenItems applies a forEach step's StepRetried to its items: a
// rerun's reopens every one (the list is evaluated again), a RETRY_STEP's
// those that did not succeed.
func (s *Snapshot) reopenItems(parent string, ev Event) {
	for i := range s.Steps {
		if it := &s.Steps[i]; it.Parent == parent && (ev.Data.Rerun || it.Status != StepSkipped) {
			it.ReopenItem(ev.Data.NewLogicalAttempt, ev.Data.Rerun)
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
		if ev.Data.CancelRequested {
			s.Cancellation = ev.Data.Cancellation
		}
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
		s.CompensationOutcome = ev.Data.CompensationOutcome
		s.finish()
	},
	// RerunRun took the ended run back to RUNNING (docs/semantics.md#rerun);
	// the StepRetried events after it reopen its steps.
	EvSearchAttributesUpserted: func(s *Snapshot, ev Event) {
		s.SearchAttributes = UpsertAttributes(s.SearchAttributes, ev.Data.Attributes)
	},
	EvRunRerun: func(s *Snapshot, _ Event) {
		s.Status, s.Substatus, s.Message = RunRunning, "", ""
		s.CompletedAt, s.TotalDuration, s.Error, s.Cancellation, s.CompensationOutcome = time.Time{}, 0, nil, nil, ""
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
	EvStepScheduled: func(s *Snapshot, st *StepState, ev Event) {
		st.Status, st.ScheduledAt, st.EngineAttempt = StepScheduled, ev.EmittedAt, 1
		if len(ev.Data.Input) > 0 {
			st.Input = ev.Data.Input
		}
		if a := s.Definition.Action(st.ActionID); a != nil && a.Repeat != nil && st.Iteration == 0 {
			st.Iteration = 1 // a repeat step's first iteration (docs/semantics.md#repeat)
		}
	},
	EvStepIterated: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.LogicalAttempt, st.EngineAttempt, st.Iteration = StepPending, ev.Data.NewLogicalAttempt, 0, ev.Data.Iteration+1
		st.Output, st.Artifacts, st.Error = ev.Data.Output, nil, nil
	},
	EvStepSleeping: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.ScheduledAt, st.StartedAt, st.WakeAt = StepRunning, ev.EmittedAt, ev.Data.StartedAt, ev.Data.WakeAt
	},
	EvStepStarted: func(_ *Snapshot, st *StepState, ev Event) { st.Status, st.StartedAt = StepRunning, ev.Data.StartedAt },
	EvStepFannedOut: func(s *Snapshot, st *StepState, ev Event) {
		st.Status, st.ScheduledAt, st.StartedAt = StepRunning, ev.EmittedAt, ev.Data.StartedAt
		s.fanOut(st, ev) // st may move: the steps grow
	},
	EvChildRunStarted: func(_ *Snapshot, st *StepState, ev Event) {
		st.Status, st.StartedAt, st.ChildRunID = StepRunning, ev.Data.StartedAt, ev.Data.ChildRunID
	},
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
	EvStepFailed: func(s *Snapshot, st *StepState, ev Event) {
		s.StepFailures++
		st.Status, st.Error, st.CompletedAt = StepFailed, ev.Data.Error, ev.Data.CompletedAt
		st.CompletionToken, st.WaitingSignal, st.NextAttemptAt = "", "", time.Time{}
		if len(ev.Data.Output) > 0 {
			st.Output = ev.Data.Output // a repeat step's last iteration (docs/semantics.md#repeat)
		}
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
	EvStepRetried: func(s *Snapshot, st *StepState, ev Event) {
		if st.Status == StepFailed { // RETRY_STEP reopened a failed step
			s.StepFailures--
		}
		st.Status, st.LogicalAttempt, st.EngineAttempt = StepPending, ev.Data.NewLogicalAttempt, 0
		st.Error, st.Reason = nil, ""
		if ev.Data.Rerun {
			s.setAside(st)
		}
		if a := s.Definition.Action(st.ActionID); a != nil && a.ForEach != "" {
			s.reopenItems(st.ActionID, ev)
		}
	},
	EvCompensationStarted: func(_ *Snapshot, st *StepState, ev Event) {
		st.CompStatus = CompRunning
		if len(ev.Data.Input) > 0 {
			st.CompInput = ev.Data.Input
		}
	},
	EvCompensationSucceeded: func(_ *Snapshot, st *StepState, _ Event) { st.CompStatus, st.CompError = CompSucceeded, nil },
	EvCompensationFailed: func(_ *Snapshot, st *StepState, ev Event) {
		st.CompStatus, st.CompError = CompFailed, ev.Data.Error
	},
}

// setAside clears what a step's earlier logical attempt left when a rerun
// reopens it (docs/semantics.md#rerun): its output and artifacts (also from
// the run's), its times, its wait and its compensation. Its attempts stay.
func (s *Snapshot) setAside(st *StepState) {
	if len(st.Artifacts) > 0 {
		kept := s.Artifacts[:0:0]
		for _, a := range s.Artifacts {
			if !slices.Contains(st.Artifacts, a) {
				kept = append(kept, a)
			}
		}
		s.Artifacts = kept
	}
	st.SetAside()
}

// SetAside clears what the step's ended logical attempt left, for a rerun's
// new one (docs/semantics.md#rerun): output, artifacts, times, the wait, the
// manual result and the compensation. Attempts and event keys stay.
func (st *StepState) SetAside() {
	st.Output, st.Artifacts, st.Manual, st.HeartbeatDetails = nil, nil, nil, nil
	st.ScheduledAt, st.StartedAt, st.CompletedAt, st.NextAttemptAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	st.CompletionToken, st.WaitingSignal = "", ""
	st.CompStatus, st.CompAttempt, st.CompError, st.CompInput = "", 0, nil, nil
	st.WakeAt, st.Iteration = time.Time{}, 0
}

// UnmetDependency answers a dependency of a step that the projection does
// not show as done: for a DAG, a depends_on predecessor not SUCCEEDED; for a
// sequential definition, an action of lower order that later steps may not
// yet pass (the scheduler's rule).
func UnmetDependency(s *Snapshot, stepID string) (string, bool) {
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
