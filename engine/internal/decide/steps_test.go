package decide_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/runstate"
)

// fireDueSleeps applies every sleep timer due at r.now, deleting each as
// the engine does in the batch that applies it.
func (r *run) fireDueSleeps() error {
	for t := range r.rec.timers {
		if t.Kind != decide.TimerSleep || t.Due.After(r.now) {
			continue
		}
		delete(r.rec.timers, t)
		if err := r.decide(func(d *decide.Decision) error { return d.TimerDue(t) }); err != nil {
			return err
		}
	}
	return nil
}

// requireSleepTimersMatchSleepingSteps: a sleep timer exists exactly for
// each step that sleeps, due at its wake time — none lost, none left over —
// but for a sleep whose timer fired while its run was paused.
func requireSleepTimersMatchSleepingSteps(t *testing.T, r *run, seed uint64) {
	t.Helper()
	want := map[decide.Timer]bool{}
	for _, st := range r.s.Steps {
		if st.Status == runstate.StepRunning && !st.WakeAt.IsZero() && st.TaskID == "" {
			if r.s.Status == runstate.RunPaused && !st.WakeAt.After(r.now) {
				continue // its timer may have fired while the run was paused: the resume wakes it
			}
			want[decide.Timer{Kind: decide.TimerSleep, Ref: st.ActionID, Due: st.WakeAt}] = true
		}
	}
	got := map[decide.Timer]bool{}
	for tm := range r.rec.timers {
		if st := r.s.Step(tm.Ref); tm.Kind == decide.TimerSleep &&
			!(r.s.Status == runstate.RunPaused && !tm.Due.After(r.now) && st.Status == runstate.StepRunning) {
			got[tm] = true // (a paused run's due sleep may have its timer yet, or not)
		}
	}
	require.Equal(t, want, got, "seed %d: sleep timers", seed)
}

// TestRules_RandomHistoriesWithConditionsRepeatsAndSleeps drives random
// definitions whose steps have when conditions (true, false, or failing),
// repeats and sleeps through random outcomes, pauses, resumes, cancels, time
// passing and timeouts, with the rules alone: no move the transition tables
// refuse, an ended run stays ended, a sleep's timer exists exactly while it
// sleeps, a sleep never ends before its wake time, a repeat never passes its
// maxIterations, and a step its condition skipped is SKIPPED with reason
// condition (docs/semantics.md#when, #repeat, #sleep).
func TestRules_RandomHistoriesWithConditionsRepeatsAndSleeps(t *testing.T) {
	whens := []string{"", "", "true", "false", "input.go", "steps.s0.output > 0"}
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var actions []definition.Action
		policies := []definition.OnFailure{definition.OnFailureAbort, definition.OnFailureSkip, definition.OnFailureCompensate, definition.OnFailureHold}
		dag := rng.IntN(2) == 0
		for i := range 1 + rng.IntN(5) {
			a := action(fmt.Sprint("s", i), i+1)
			if dag && i > 0 && rng.IntN(2) == 0 {
				a.DependsOn = []string{fmt.Sprint("s", rng.IntN(i))}
			}
			a.OnFailure, a.Retry.MaxAttempts = policies[rng.IntN(4)], 1+rng.IntN(2)
			if w := whens[rng.IntN(len(whens))]; i > 0 && (w != "steps.s0.output > 0" || !dag || (len(a.DependsOn) > 0 && a.DependsOn[0] == "s0")) {
				a.When = w
			}
			switch rng.IntN(4) {
			case 0:
				a.Activity = ""
				a.Sleep = definition.Duration(time.Duration(1+rng.IntN(3)) * time.Minute)
			case 1:
				a.Repeat = &definition.Repeat{Until: fmt.Sprintf("steps.%s.output > 1", a.ID), MaxIterations: 1 + rng.IntN(3)}
			}
			actions = append(actions, a)
		}
		r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", DAG: dag, Actions: actions})
		require.NoError(t, r.decide((*decide.Decision).Trigger))
		var ended runstate.RunStatus
		for range 40 {
			var err error
			switch op := rng.IntN(12); {
			case op < 6:
				if ready := r.scheduled(); len(ready) > 0 {
					id := ready[rng.IntN(len(ready))]
					if rng.IntN(3) > 0 {
						err = r.attemptWith(id, json.RawMessage(fmt.Sprint(rng.IntN(3))))
					} else {
						err = r.attempt(id, false, definition.ErrorTransient)
					}
				} else if st := compensating(r.s); st != "" {
					err = r.attempt(st, rng.IntN(2) == 0, definition.ErrorTransient)
				}
			case op < 8:
				r.now = r.now.Add(time.Duration(rng.IntN(90)) * time.Second)
				err = r.fireDueSleeps()
			case op == 8:
				err = r.decide(func(d *decide.Decision) error { return d.Pause(decide.Control{}, time.Minute) })
			case op == 9:
				err = r.decide(func(d *decide.Decision) error { return d.Resume(decide.Control{}) })
			case op == 10:
				err = r.decide(func(d *decide.Decision) error { return d.Cancel(decide.Control{Compensate: rng.IntN(2) == 0}) })
			default:
				r.now = r.now.Add(time.Hour)
				err = r.decide(func(d *decide.Decision) error { return d.TimerDue(decide.Timer{Kind: decide.TimerWorkflow}) })
			}
			var refusal *decide.Refusal
			if err != nil && !errors.As(err, &refusal) {
				t.Fatalf("seed %d: %v (illegal moves: %v)", seed, err, r.rec.illegal)
			}
			if ended != "" {
				require.Equal(t, ended, r.s.Status, "seed %d: a run that ended never changes", seed)
			} else if r.s.Status.Terminal() {
				ended = r.s.Status
			}
			requireSleepTimersMatchSleepingSteps(t, r, seed)
			for _, st := range r.s.Steps {
				a := r.action(st.ActionID)
				if a.Sleeps() && st.Status == runstate.StepSucceeded {
					require.False(t, st.CompletedAt.Before(st.WakeAt), "seed %d: %s woke early", seed, st.ActionID)
				}
				if a.Repeat != nil {
					require.LessOrEqual(t, st.Iteration, a.Repeat.MaxIterations, "seed %d: %s", seed, st.ActionID)
				}
				if st.Reason == decide.ReasonCondition {
					require.Equal(t, runstate.StepSkipped, st.Status, "seed %d", seed)
					require.NotEmpty(t, a.When, "seed %d", seed)
				}
			}
		}
		require.Empty(t, r.rec.illegal, "seed %d", seed)
	}
}

// attemptWith claims and completes one attempt of a step with output.
func (r *run) attemptWith(actionID string, output json.RawMessage) error {
	st, a := r.s.Step(actionID), r.action(actionID)
	if st.CompTaskID != "" || !decide.Claimable(r.s, actionID, st.TaskID) {
		return nil
	}
	kind := r.rec.tasks[st.TaskID]
	if err := r.decide(func(d *decide.Decision) error { return d.Claimed(kind, a, st, "w", false) }); err != nil {
		return err
	}
	return r.decide(func(d *decide.Decision) error {
		return d.SucceedAttempt(a, st, decide.Attempt{Outcome: runstate.AttemptSucceeded, Output: output})
	})
}

// TestRules_RandomHistoriesWithFanOuts drives random definitions whose
// steps fan out (forEach over lists of 0 to 6 items, maxConcurrency 1 to
// 3, random failure policies, retries and compensation hooks) through
// random outcomes of random items, pauses, resumes, cancels, RETRY_STEP of
// a held step, reruns of an ended run, time and timeouts, with the rules
// alone: no move the transition tables refuse, never more than
// maxConcurrency items of a step in flight, no item started while the run
// is paused, a succeeded fan-out's output is its items' outputs in item
// order, and a failed item fails its step only once nothing of it is in
// flight (docs/semantics.md#for-each).
func TestRules_RandomHistoriesWithFanOuts(t *testing.T) {
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 23))
		policies := []definition.OnFailure{definition.OnFailureAbort, definition.OnFailureSkip, definition.OnFailureCompensate, definition.OnFailureHold}
		dag := rng.IntN(2) == 0
		var actions []definition.Action
		for i := range 1 + rng.IntN(4) {
			a := action(fmt.Sprint("s", i), i+1)
			if dag && i > 0 && rng.IntN(2) == 0 {
				a.DependsOn = []string{fmt.Sprint("s", rng.IntN(i))}
			}
			a.OnFailure, a.Retry.MaxAttempts = policies[rng.IntN(4)], 1+rng.IntN(2)
			if rng.IntN(3) > 0 {
				a.ForEach, a.MaxConcurrency = fmt.Sprintf("lists.range(%d)", rng.IntN(7)), 1+rng.IntN(3)
				a.Input = json.RawMessage(`{"i":"${{ index }}","v":"${{ item }}"}`)
			}
			if rng.IntN(3) == 0 {
				a.Compensation = &definition.CompensationHook{Operation: "undo"}
			}
			actions = append(actions, a)
		}
		r := newRun(t, definition.Definition{PlanID: "p", PlanVersion: "1", DAG: dag, Actions: actions})
		require.NoError(t, r.decide((*decide.Decision).Trigger))
		for range 80 {
			before := startedItems(r.s)
			wasPaused := r.s.Status == runstate.RunPaused
			var err error
			switch op := rng.IntN(14); {
			case op < 8:
				if ready := r.scheduled(); len(ready) > 0 {
					id := ready[rng.IntN(len(ready))]
					if rng.IntN(4) > 0 {
						err = r.attemptWith(id, json.RawMessage(fmt.Sprintf("%q", id)))
					} else {
						err = r.attempt(id, false, definition.ErrorTransient)
					}
				} else if st := compensating(r.s); st != "" {
					err = r.attempt(st, rng.IntN(2) == 0, definition.ErrorTransient)
				}
			case op == 8:
				r.now = r.now.Add(time.Duration(rng.IntN(90)) * time.Second)
				err = r.decide(func(d *decide.Decision) error { return d.TimerDue(decide.Timer{Kind: decide.TimerBackoff, Ref: "s0"}) })
			case op == 9:
				err = r.decide(func(d *decide.Decision) error { return d.Pause(decide.Control{}, time.Minute) })
			case op == 10:
				err = r.decide(func(d *decide.Decision) error { return d.Resume(decide.Control{}) })
			case op == 11:
				if held := r.s.HeldOn; held != "" {
					err = r.decide(func(d *decide.Decision) error { return d.RetryStep(decide.Control{ActionID: held}) })
				} else if r.s.Status.Terminal() && rng.IntN(2) == 0 {
					r.rec.slots = true
					err = r.decide(func(d *decide.Decision) error { return d.Rerun(decide.Control{ActionID: "s0"}) })
				}
			case op == 12:
				err = r.decide(func(d *decide.Decision) error { return d.Cancel(decide.Control{Compensate: rng.IntN(2) == 0}) })
			default:
				r.now = r.now.Add(time.Hour)
				err = r.decide(func(d *decide.Decision) error { return d.TimerDue(decide.Timer{Kind: decide.TimerWorkflow}) })
			}
			var refusal *decide.Refusal
			if err != nil && !errors.As(err, &refusal) {
				t.Fatalf("seed %d: %v (illegal moves: %v)", seed, err, r.rec.illegal)
			}
			if wasPaused && r.s.Status == runstate.RunPaused {
				require.LessOrEqual(t, startedItems(r.s), before, "seed %d: no item starts while the run is paused", seed)
			}
			requireFanOutsHoldTheirRules(t, r, seed)
		}
		require.Empty(t, r.rec.illegal, "seed %d", seed)
	}
}

// startedItems counts the items that left PENDING.
func startedItems(s *runstate.State) int {
	n := 0
	for _, st := range s.Steps {
		if st.IsItem() && st.Status != runstate.StepPending {
			n++
		}
	}
	return n
}

// requireFanOutsHoldTheirRules checks every forEach step of the run: at
// most maxConcurrency items in flight, the output of a succeeded one in
// item order, a FAILED one with nothing of it in flight.
func requireFanOutsHoldTheirRules(t *testing.T, r *run, seed uint64) {
	t.Helper()
	for i := range r.def.Actions {
		a := &r.def.Actions[i]
		if a.ForEach == "" {
			continue
		}
		st := r.s.Step(a.ID)
		inFlight := 0
		var outs []json.RawMessage
		for _, it := range r.s.Steps {
			if it.Parent != a.ID || it.Index >= st.ItemCount {
				continue
			}
			require.Equal(t, a.ID+"["+fmt.Sprint(it.Index)+"]", it.ActionID, "seed %d", seed)
			switch it.Status {
			case runstate.StepScheduled, runstate.StepRunning:
				inFlight++
			}
			outs = append(outs, it.Output)
			if st.Status == runstate.StepSucceeded {
				require.Equal(t, runstate.StepSucceeded, it.Status, "seed %d: %s of a succeeded fan-out", seed, it.ActionID)
				require.JSONEq(t, fmt.Sprintf("%q", it.ActionID), string(it.Output), "seed %d", seed)
			}
		}
		require.LessOrEqual(t, inFlight, a.MaxConcurrency, "seed %d: %s has more than maxConcurrency items in flight", seed, a.ID)
		if st.Status == runstate.StepSucceeded && st.Attempts == nil {
			want := "["
			for k, o := range outs {
				if k > 0 {
					want += ","
				}
				want += string(o)
			}
			require.JSONEq(t, want+"]", string(st.Output), "seed %d: %s's output is its items' outputs in order", seed, a.ID)
			require.Len(t, outs, st.ItemCount, "seed %d", seed)
		}
		if st.Status == runstate.StepFailed {
			require.Zero(t, inFlight, "seed %d: %s failed with items in flight", seed, a.ID)
		}
	}
}
