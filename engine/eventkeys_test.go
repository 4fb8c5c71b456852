package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// requireEventKeysMatchCheckpoints checks, after every test that set up a
// bundle, the rule of docs/semantics.md#event-idempotency-key on every run
// of the store: no two events of a run share an idempotency key, and a
// checkpoint that records its run's keys (KeysTracked) records exactly the
// keys of the run's log and the run has no key rows; a run without the
// record has a key row per event.
func (b *bundle) requireEventKeysMatchCheckpoints() {
	t := b.t
	if t.Failed() {
		return
	}
	var checkpoints []*runstate.State
	for after := []byte(nil); ; {
		res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Run.KeyPrefix(), After: after, Limit: store.MaxScanLimit})
		if errors.Is(err, store.ErrClosed) {
			return // a crash test closed it
		}
		require.NoError(t, err)
		for _, it := range res.Items {
			parts, err := store.SplitKey(it.Key)
			require.NoError(t, err)
			if len(parts) != 3 || parts[2] != "ckpt" {
				continue
			}
			s, err := runlog.DecodeCheckpoint(parts[1], it.Value)
			require.NoError(t, err)
			checkpoints = append(checkpoints, s)
		}
		if res.Next == nil {
			break
		}
		after = res.Next
	}
	for _, s := range checkpoints {
		requireRunKeysExact(t, b.ctx, b.store, s)
	}
}

// requireRunKeysExact checks one run's log against its checkpoint's record.
func requireRunKeysExact(t *testing.T, ctx context.Context, st store.Store, s *runstate.State) {
	t.Helper()
	var events []runstate.Event
	for after := uint64(0); ; {
		page, more, err := runlog.ReadEvents(ctx, st, s.RunID, after, 1000)
		require.NoError(t, err)
		events = append(events, page...)
		if !more || len(page) == 0 {
			break
		}
		after = page[len(page)-1].Seq
	}
	seen := map[string]uint64{}
	for _, ev := range events {
		require.Equal(t, runstate.IdempotencyKey(ev.RunID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt),
			ev.IdempotencyKey, "event %d of run %s carries the key of its own fields", ev.Seq, s.RunID)
		prior, dup := seen[ev.IdempotencyKey]
		require.False(t, dup, "run %s: events %d and %d (%s) share one idempotency key", s.RunID, prior, ev.Seq, ev.Type)
		seen[ev.IdempotencyKey] = ev.Seq
	}
	rows, err := st.Scan(ctx, &store.ScanParams{Prefix: runlog.IdemPrefix(s.RunID), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	if !s.KeysTracked {
		require.Len(t, rows.Items, len(events), "run %s without a key record has a key row per event", s.RunID)
		return
	}
	require.Empty(t, rows.Items, "run %s whose checkpoint records its keys has no key rows", s.RunID)
	inLog, recorded := logKeys(events), recordKeys(s, events)
	if uint64(len(events)) != s.LastSeq {
		// A test cut a hole in the log on purpose: the removed event's key
		// was appended, and stays in the record.
		for k := range inLog {
			require.True(t, recorded[k], "run %s: the checkpoint's record lacks %v", s.RunID, k)
		}
		return
	}
	require.Equal(t, inLog, recorded, "run %s: the checkpoint's record is not the set of its log's keys", s.RunID)
}

// eventKey is a key's coordinates: (scope, type, logical, engine attempt if
// the key has one).
type eventKey struct {
	scope, typ      string
	logical, engine int
}

func keyOf(typ, stepID string, logical, engine int) eventKey {
	if stepID == "" {
		stepID = runstate.RunStepID
	}
	if logical < 1 {
		logical = 1
	}
	if !runstate.KeyHasEngineAttempt(typ) {
		engine = 0
	}
	return eventKey{stepID, typ, logical, engine}
}

// logKeys answers the keys of a log.
func logKeys(events []runstate.Event) map[eventKey]bool {
	out := map[eventKey]bool{}
	for _, ev := range events {
		out[keyOf(ev.Type, ev.StepID, ev.LogicalAttempt, ev.EngineAttempt)] = true
	}
	return out
}

// recordKeys answers every key the checkpoint's record holds, asked over
// every scope and type and beyond every number the log or the record uses.
func recordKeys(s *runstate.State, events []runstate.Event) map[eventKey]bool {
	scopes := []string{runstate.RunStepID}
	maxN := 2
	for _, st := range s.Steps {
		scopes = append(scopes, st.ActionID)
		for _, sp := range st.Keys {
			maxN = max(maxN, sp.To+1, sp.Logical+1)
		}
	}
	for _, sp := range s.RunKeys {
		maxN = max(maxN, sp.To+1, sp.Logical+1)
	}
	for _, ev := range events {
		maxN = max(maxN, ev.LogicalAttempt+1, ev.EngineAttempt+1)
	}
	out := map[eventKey]bool{}
	for _, scope := range scopes {
		for _, typ := range runstate.EventTypes() {
			for l := 1; l <= maxN; l++ {
				if !runstate.KeyHasEngineAttempt(typ) {
					if s.HasKey(typ, scope, l, 0) {
						out[keyOf(typ, scope, l, 0)] = true
					}
					continue
				}
				for e := 0; e <= maxN; e++ {
					if s.HasKey(typ, scope, l, e) {
						out[keyOf(typ, scope, l, e)] = true
					}
				}
			}
		}
	}
	return out
}

// TestEventKeys_RandomRunsKeepOneEventPerKeyAndTheCheckpointRecordsExactlyTheLog
// drives random runs — retries, failures of every policy, timeouts, pauses
// and resumes, signals and waits, manual completions, cancellations with
// and without compensation, operator retries and skips — and checks after
// every operation that no run's log holds two events with one key and that
// its checkpoint records exactly its log's keys.
func TestEventKeys_RandomRunsKeepOneEventPerKeyAndTheCheckpointRecordsExactlyTheLog(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 16))
			b := setupWith(t, memstore.New(memstore.Config{}))
			b.noProjectionCheck = true // random operations may leave tasks claimed by nobody
			var runs []string
			for range 1 + r.IntN(3) {
				runs = append(runs, b.submit(randomKeysDefinition(r)).RunID)
			}
			for range 60 {
				randomKeysOperation(t, b, r, runs[r.IntN(len(runs))])
				b.requireEventKeysMatchCheckpoints()
				if t.Failed() {
					return
				}
			}
		})
	}
}

// randomKeysDefinition answers a sequence or DAG of 2-4 actions with random
// retries, failure policies, compensations, signal waits and manual steps.
func randomKeysDefinition(r *rand.Rand) definition.Definition {
	n := 2 + r.IntN(3)
	d := definition.Definition{PlanID: "plan", PlanVersion: "1"}
	for i := range n {
		a := definition.Action{ID: fmt.Sprint("s", i), Order: i + 1, Activity: "x"}
		if i > 0 && r.IntN(3) > 0 {
			a.DependsOn = []string{fmt.Sprint("s", r.IntN(i))}
		}
		a.Retry.MaxAttempts = 1 + r.IntN(3)
		a.Retry.InitialBackoff = definition.Duration(time.Second)
		a.OnFailure = []definition.OnFailure{definition.OnFailureAbort, definition.OnFailureSkip,
			definition.OnFailureCompensate, definition.OnFailureHold}[r.IntN(4)]
		if r.IntN(2) == 0 {
			a.Compensation = &definition.CompensationHook{Operation: "undo"}
		}
		switch r.IntN(6) {
		case 0:
			a.Activity = ""
			a.WaitForSignal = &definition.SignalWait{SignalName: "go"}
		case 1:
			a.Activity = ""
			a.Completion = definition.CompletionManual
		}
		d.Actions = append(d.Actions, a)
	}
	return d
}

// randomKeysOperation applies one random operation to a run; operations the
// run refuses are part of the scenario.
func randomKeysOperation(t *testing.T, b *bundle, r *rand.Rand, runID string) {
	ctx := b.ctx
	control := ControlParams{TenantID: tenant, RunID: runID, Actor: "op", Reason: "random"}
	if r.IntN(3) == 0 {
		id := fmt.Sprint("sig-", r.IntN(4)) // some repeat: duplicates of an idempotent signal
		control.SignalID = &id
	}
	snap := b.run(runID)
	step := snap.Steps[r.IntN(len(snap.Steps))]
	control.ActionID = step.ActionID
	switch op := r.IntN(14); op {
	case 0, 1, 2, 3: // a worker completes or fails what it claims
		tasks, err := b.eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"x"},
			Compensations: []string{"undo"}, MaxTasks: 1})
		require.NoError(t, err)
		for _, task := range tasks {
			report := ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1"}
			switch r.IntN(3) {
			case 0:
				report.ErrorClass = []definition.ErrorClass{definition.ErrorTransient, definition.ErrorGovernance}[r.IntN(2)]
				report.Message = "boom"
				_, err = b.eng.FailTask(ctx, report)
			default:
				report.Output = json.RawMessage(`{"ok":true}`)
				_, err = b.eng.CompleteTask(ctx, report)
			}
			_ = err // a task the run retired meanwhile is refused
		}
	case 4:
		_, _ = b.eng.PauseRun(ctx, control)
	case 5:
		_, _ = b.eng.ResumeRun(ctx, control)
	case 6:
		control.Compensate = r.IntN(2) == 0
		_, _ = b.eng.CancelRun(ctx, control)
	case 7:
		_, _ = b.eng.RetryStep(ctx, control)
	case 8:
		_, _ = b.eng.SkipStep(ctx, control)
	case 9, 10:
		name := []string{"go", "other"}[r.IntN(2)]
		_, _ = b.eng.SignalRun(ctx, SignalParams{TenantID: tenant, RunID: runID, SignalName: name, SignalID: control.SignalID,
			Payload: json.RawMessage(`{"s":1}`)})
	case 11:
		outcome := []runstate.ManualOutcome{runstate.ManualSucceeded, runstate.ManualFailed}[r.IntN(2)]
		token := step.CompletionToken
		if r.IntN(4) == 0 {
			token = "stale"
		}
		_, _ = b.eng.CompleteManualAction(ctx, ManualCompletionParams{TenantID: tenant, RunID: runID, ActionID: step.ActionID,
			CompletionToken: token, Outcome: outcome, ActorUserID: "bob", CompletedAt: b.clock.Now()})
	default: // time passes: backoffs, timeouts, drains
		b.clock.Advance(time.Duration(1+r.IntN(90)) * time.Second)
		require.NoError(t, b.eng.Tick(ctx))
	}
}

// eventAt answers the run's first event of type typ at step.
func (b *bundle) eventAt(runID, typ, step string) runstate.Event {
	b.t.Helper()
	for _, ev := range b.runEvents(runID) {
		if ev.Type == typ && ev.StepID == step {
			return ev
		}
	}
	b.t.Fatalf("run %s has no %s at %s", runID, typ, step)
	return runstate.Event{}
}

// TestEventKeys_AnEventWhoseKeyExistsInsertsNothingAndTheRestOfTheDecisionCommits:
// docs/semantics.md#event-idempotency-key — appending an event whose key the
// run has (from an earlier decision, or earlier in the same one) inserts
// nothing, and the decision's other events and writes commit.
func TestEventKeys_AnEventWhoseKeyExistsInsertsNothingAndTheRestOfTheDecisionCommits(t *testing.T) {
	b := setup(t)
	b.noProjectionCheck = true // the decision below schedules b by hand, without its task
	run := b.submit(seq("a", "b"))
	scheduled := b.eventAt(run.RunID, runstate.EvStepScheduled, "a")
	before := b.runEvents(run.RunID)
	lastSeq := mustLastSeq(t, b.store, run.RunID)
	other := store.Key("test", run.RunID, "other")
	_, err := mutate(b.ctx, b.eng, run.RunID, "op", func(ch *change) error {
		ch.emit(runstate.EvStepScheduled, "a", 1, 0, scheduled.Data) // the key of an earlier decision's event
		ch.emit(runstate.EvStepScheduled, "b", 1, 0, scheduled.Data) // a new key
		ch.emit(runstate.EvStepScheduled, "b", 1, 0, scheduled.Data) // the same, again in this decision
		ch.put(other, map[string]int{"n": 1})
		return nil
	})
	require.NoError(t, err)
	after := b.runEvents(run.RunID)
	require.Len(t, after, len(before)+1, "only the new key's event is appended")
	added := after[len(after)-1]
	require.Equal(t, runstate.EvStepScheduled, added.Type)
	require.Equal(t, "b", added.StepID)
	require.Equal(t, lastSeq+1, added.Seq, "a skipped event takes no run_seq")
	require.Equal(t, lastSeq+1, mustLastSeq(t, b.store, run.RunID))
	require.True(t, b.exists(other), "the decision's other writes commit")
	require.Equal(t, scheduled, b.eventAt(run.RunID, runstate.EvStepScheduled, "a"), "the existing event is unchanged")
}

// asKeyRowsWeftd rewrites a run as an engine before checkpoint key records
// stored it: a checkpoint without KeysTracked or a record, and a key row per
// event.
func asKeyRowsWeftd(t *testing.T, b *bundle, runID string) {
	t.Helper()
	item, err := b.store.Get(b.ctx, runlog.CheckpointKey(runID))
	require.NoError(t, err)
	s, err := runlog.DecodeCheckpoint(runID, item.Value)
	require.NoError(t, err)
	s.KeysTracked, s.RunKeys = false, nil
	for _, st := range s.Steps {
		st.Keys = nil
	}
	batch := &store.Batch{Ops: []store.Op{runlog.PutCheckpoint(runID, s)}}
	for _, ev := range b.runEvents(runID) {
		batch.Ops = append(batch.Ops, store.Put(keyspace.Run.Key(runID, "ek", ev.IdempotencyKey), []byte(store.Uint64(ev.Seq))))
	}
	_, err = b.store.Commit(b.ctx, batch)
	require.NoError(t, err)
}

// TestEventKeys_ARunWhoseCheckpointHasNoKeyRecordKeepsItsKeyRowsAndTheirConditions:
// a run an older engine stored (its checkpoint does not record its keys)
// goes on writing a key row per event on an absent-condition, and gets no
// record.
func TestEventKeys_ARunWhoseCheckpointHasNoKeyRecordKeepsItsKeyRowsAndTheirConditions(t *testing.T) {
	st := memstore.New(memstore.Config{})
	older := setupWith(t, st)
	run := older.submit(seq("a", "b", "c"))
	asKeyRowsWeftd(t, older, run.RunID)

	b := setupWith(t, st) // a newer weftd: no cache, only the store
	b.complete(b.poll("act-a"), `1`)
	events := b.runEvents(run.RunID)
	for _, ev := range events {
		require.True(t, b.exists(keyspace.Run.Key(run.RunID, "ek", ev.IdempotencyKey)), "event %d (%s) has its key row", ev.Seq, ev.Type)
	}
	s, err := runlog.DecodeCheckpoint(run.RunID, mustGet(t, st, runlog.CheckpointKey(run.RunID)))
	require.NoError(t, err)
	require.False(t, s.KeysTracked)
	require.Empty(t, s.RunKeys)

	// The condition still guards: a row already holding the key of b's
	// completion fails the decision that would append it.
	tb := b.poll("act-b")
	events = b.runEvents(run.RunID)
	key := runstate.IdempotencyKey(run.RunID, "b", 1, runstate.EvStepCompleted, "1", 0)
	_, err = st.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(keyspace.Run.Key(run.RunID, "ek", key), []byte(store.Uint64(999)))}})
	require.NoError(t, err)
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
	require.Error(t, err, "the key row's absent-condition fails the decision")
	require.Len(t, b.runEvents(run.RunID), len(events), "nothing of the failed decision is appended")
	_, err = st.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Delete(keyspace.Run.Key(run.RunID, "ek", key))}})
	require.NoError(t, err) // the end-of-test check wants a row per event
}

func mustGet(t *testing.T, st store.Store, key []byte) []byte {
	t.Helper()
	item, err := st.Get(t.Context(), key)
	require.NoError(t, err)
	return item.Value
}

// TestEventKeys_ANewRunsEventsHaveNoKeyRows: a new run's checkpoint records
// its keys, and its events are written without key rows.
func TestEventKeys_ANewRunsEventsHaveNoKeyRows(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `1`)
	s, err := runlog.DecodeCheckpoint(run.RunID, mustGet(t, b.store, runlog.CheckpointKey(run.RunID)))
	require.NoError(t, err)
	require.True(t, s.KeysTracked)
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: runlog.IdemPrefix(run.RunID)})
	require.NoError(t, err)
	require.Empty(t, res.Items)
}
