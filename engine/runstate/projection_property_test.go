package runstate

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
)

// runEventTo answers the run event that moves a run from one status to
// another, as the engine emits it.
func runEventTo(from, to RunStatus) string {
	switch to {
	case RunApproved:
		return EvRunApproved
	case RunQueued:
		return EvRunQueued
	case RunRunning:
		switch from {
		case RunBlocked:
			return EvRunUnblocked
		case RunPaused:
			return EvRunResumed
		}
		return EvRunStarted
	case RunBlocked:
		return EvRunBlocked
	case RunPaused:
		return EvRunPaused
	case RunCompensating:
		return EvRunCompensating
	case RunCompleted:
		return EvRunCompleted
	case RunFailed:
		return EvRunFailed
	case RunCancelled:
		return EvRunCancelled
	}
	panic("no run event moves a run to " + string(to))
}

// stepEventTo answers the step event that moves a step to a status, or ""
// for a move no status-setting event records (a retry's return to PENDING
// is recorded as attempt evidence, not as a status).
func stepEventTo(from, to StepStatus) string {
	switch to {
	case StepScheduled:
		return EvStepScheduled
	case StepRunning:
		return EvStepStarted
	case StepWaitingManual, StepWaitingSignal:
		return EvStepWaiting
	case StepSucceeded:
		return EvStepCompleted
	case StepFailed:
		return EvStepFailed
	case StepSkipped:
		return EvStepSkipped
	case StepCancelled:
		return EvStepCancelled
	case StepPending:
		if from == StepFailed || from == StepCancelled {
			return EvStepRetried
		}
	}
	return ""
}

// legalLog builds a random legal event log for a run of two steps: a random
// walk over the run transition table, with random legal step walks while the
// run is running, each event carrying the status it moves to. It answers the
// log and the statuses the walk reached after each event.
func legalLog(rng *rand.Rand) ([]Event, []RunStatus) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var log []Event
	var runs []RunStatus
	run := RunPending
	steps := map[string]StepStatus{"a": StepPending, "b": StepPending}
	emit := func(typ, stepID string, status string) {
		at = at.Add(time.Second)
		ev := Event{Type: typ, RunID: "r", Seq: uint64(len(log) + 1), StepID: stepID, EmittedAt: at,
			Data: EventData{Status: status, StartedAt: at, CompletedAt: at, NewLogicalAttempt: 2}}
		log, runs = append(log, ev), append(runs, run)
	}
	emit(EvRunSubmitted, RunStepID, string(RunPending))
	for len(log) < 60 && !run.Terminal() {
		if run == RunRunning && rng.IntN(2) == 0 {
			id := []string{"a", "b"}[rng.IntN(2)]
			next := pick(stepTransitions[steps[id]], rng)
			if next != "" && stepEventTo(steps[id], next) != "" {
				typ := stepEventTo(steps[id], next)
				steps[id] = next
				emit(typ, id, string(next))
			}
			continue
		}
		next := pick(runTransitions[run], rng)
		typ := runEventTo(run, next)
		run = next
		emit(typ, RunStepID, string(next))
	}
	return log, runs
}

func pick[S ~string](from []S, rng *rand.Rand) S {
	if len(from) == 0 {
		return ""
	}
	return from[rng.IntN(len(from))]
}

func base() *Snapshot {
	return &Snapshot{RunID: "r", Status: RunPending, Steps: []StepState{
		{ActionID: "a", Status: StepPending, LogicalAttempt: 1}, {ActionID: "b", Status: StepPending, LogicalAttempt: 1}},
		Definition: definition.Definition{Actions: []definition.Action{{ID: "a", Order: 1}, {ID: "b", Order: 2}}}}
}

// TestProjection_PropertyALegalLogProjectsOntoTheStatusesItWalked: for
// random legal logs, the projection after each event shows the run status
// the walk reached, every run status change it shows is in the transition
// table, and once terminal the status never changes again.
func TestProjection_PropertyALegalLogProjectsOntoTheStatusesItWalked(t *testing.T) {
	for seed := range uint64(500) {
		log, walked := legalLog(rand.New(rand.NewPCG(seed, 7)))
		snap := base()
		for i, ev := range log {
			prev := snap.Status
			snap = Project(snap, []Event{ev})
			require.Equal(t, walked[i], snap.Status, "seed %d, event %d (%s)", seed, i, ev.Type)
			if prev != snap.Status {
				require.True(t, RunTransitionAllowed(prev, snap.Status), "seed %d: %s -> %s", seed, prev, snap.Status)
			}
			if prev.Terminal() {
				require.Equal(t, prev, snap.Status, "seed %d: a terminal run changed", seed)
			}
			if ev.StepID != RunStepID {
				require.Equal(t, StepStatus(ev.Data.Status), snap.Step(ev.StepID).Status, "seed %d, event %d", seed, i)
			}
		}
	}
}

// TestProjection_PropertyReplayIsIdempotentBySeqAndIncrementalEqualsWhole:
// projecting a log again changes nothing (every event is at or below the
// watermark), projecting it in two parts equals projecting it at once, and
// the base is never changed.
func TestProjection_PropertyReplayIsIdempotentBySeqAndIncrementalEqualsWhole(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 11))
		log, _ := legalLog(rng)
		b := base()
		pristine := base()
		whole := Project(b, log)
		require.Equal(t, log[len(log)-1].Seq, whole.LastEventSeq)
		require.True(t, reflect.DeepEqual(whole, Project(whole, log)), "seed %d: replaying the log changed the projection", seed)
		k := rng.IntN(len(log) + 1)
		parts := Project(Project(b, log[:k]), log)
		require.True(t, reflect.DeepEqual(whole, parts), "seed %d: projecting %d events then all differs from all at once", seed, k)
		require.True(t, reflect.DeepEqual(pristine, b), "seed %d: Project changed its base", seed)
	}
}

func TestProjection_EventsAtOrBelowTheWatermarkAreIgnored(t *testing.T) {
	snap := Project(base(), []Event{{Type: EvRunSubmitted, Seq: 1}, {Type: EvRunQueued, Seq: 2}})
	again := Project(snap, []Event{{Type: EvRunCancelled, Seq: 2, Data: EventData{Status: string(RunCancelled)}}})
	require.Equal(t, RunQueued, again.Status)
	require.Equal(t, uint64(2), again.LastEventSeq)
	require.Equal(t, fmt.Sprint(snap), fmt.Sprint(again))
}
