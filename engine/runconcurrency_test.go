package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// keyed is a one-step definition whose runs are limited per input.customer.
func keyed(limit int, strategy definition.ConcurrencyStrategy) definition.Definition {
	d := seq("charge")
	d.PlanID = "charges"
	d.Concurrency = &definition.RunConcurrency{Key: "input.customer", Limit: limit, Strategy: strategy}
	return d
}

// submitFor submits a run of def for customer at priority (0: the default).
func (b *bundle) submitFor(def definition.Definition, customer string, priority int) *runstate.Snapshot {
	b.t.Helper()
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice",
		Input: json.RawMessage(fmt.Sprintf(`{"customer": %q}`, customer)), Priority: priority})
	require.NoError(b.t, err)
	return res.Run
}

// keySlotsHeld counts the slots of every run concurrency key held.
func (b *bundle) keySlotsHeld() map[string]int {
	b.t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Slot.KeyPrefix(tenant, "key")})
	require.NoError(b.t, err)
	out := map[string]int{}
	for _, it := range res.Items {
		_, _, key, ok := admission.SlotKeyParts(it.Key)
		require.True(b.t, ok)
		out[key]++
	}
	return out
}

// queueEntries counts the run queue's entries and the key queues'.
func (b *bundle) queueEntries() (int, int) {
	b.t.Helper()
	q, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: admission.QueuePrefix()})
	require.NoError(b.t, err)
	k, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Slot.KeyPrefix(tenant, "keyq")})
	require.NoError(b.t, err)
	return len(q.Items), len(k.Items)
}

func (b *bundle) statusOf(runID string) runstate.RunStatus { return b.run(runID).Status }

// TestRunConcurrency_AKeyStartsAtMostLimitRunsTheOthersQueueByPriorityThenSubmission:
// limit 2 per customer; the third, fourth and fifth runs of one customer
// wait QUEUED (saying why) while another customer's run starts; as runs end
// the waiting ones start in priority order, then submission order.
func TestRunConcurrency_AKeyStartsAtMostLimitRunsTheOthersQueueByPriorityThenSubmission(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			def := keyed(2, "")
			r1, r2 := b.submitFor(def, "c1", 0), b.submitFor(def, "c1", 0)
			r3, r4 := b.submitFor(def, "c1", 0), b.submitFor(def, "c1", 4)
			r5 := b.submitFor(def, "c1", 1)
			other := b.submitFor(def, "c2", 0)
			for _, r := range []*runstate.Snapshot{r1, r2, other} {
				require.Equal(t, runstate.RunRunning, r.Status)
			}
			for _, r := range []*runstate.Snapshot{r3, r4, r5} {
				require.Equal(t, runstate.RunQueued, r.Status)
				got := b.run(r.RunID).Concurrency
				require.NotNil(t, got)
				require.Equal(t, runstate.KeyConcurrency{Key: "c1", Limit: 2, Strategy: "queue", InUse: 2, Wait: "concurrency key c1 at 2/2"}, *got)
			}
			require.Equal(t, map[string]int{"c1": 2, "c2": 1}, b.keySlotsHeld())
			b.tick()
			require.Equal(t, runstate.RunQueued, b.statusOf(r3.RunID), "a tick with the key full starts nothing")

			var order []string
			startNext := func() {
				b.tick()
				for _, r := range []*runstate.Snapshot{r3, r4, r5} {
					if b.statusOf(r.RunID) == runstate.RunRunning && !contains(order, r.RunID) {
						order = append(order, r.RunID)
					}
				}
			}
			tasks := b.pollAll("act-charge", 10)
			require.Len(t, tasks, 3)
			byRun := map[string]*Task{}
			for _, task := range tasks {
				byRun[task.RunID] = task
			}
			b.complete(byRun[r1.RunID], `1`)
			startNext()
			require.Equal(t, []string{r5.RunID}, order, "priority 1 goes first")
			b.complete(byRun[r2.RunID], `1`)
			startNext()
			require.Equal(t, []string{r5.RunID, r3.RunID}, order, "then priority 3, before 4")
			require.Equal(t, map[string]int{"c1": 2, "c2": 1}, b.keySlotsHeld())
			for _, task := range b.pollAll("act-charge", 10) {
				if task.RunID == r5.RunID {
					b.complete(task, `1`)
				}
			}
			startNext()
			require.Equal(t, []string{r5.RunID, r3.RunID, r4.RunID}, order)
			require.Equal(t, "", b.run(r4.RunID).Concurrency.Wait)
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRunConcurrency_ANewRunDoesNotOvertakeTheQueuedRunsOfItsKey: a slot
// that frees between ticks goes to the oldest queued run of the key, not
// to a run submitted meanwhile.
func TestRunConcurrency_ANewRunDoesNotOvertakeTheQueuedRunsOfItsKey(t *testing.T) {
	b := setup(t)
	def := keyed(1, definition.StrategyQueue)
	first := b.submitFor(def, "c1", 0)
	waiting := b.submitFor(def, "c1", 0)
	b.complete(b.poll("act-charge"), `1`)
	require.Equal(t, runstate.RunCompleted, b.statusOf(first.RunID))
	late := b.submitFor(def, "c1", 0)
	require.Equal(t, runstate.RunQueued, late.Status)
	require.Equal(t, "concurrency key c1: earlier runs of the key wait first", b.run(late.RunID).Concurrency.Wait)
	b.tick()
	require.Equal(t, runstate.RunRunning, b.statusOf(waiting.RunID))
	require.Equal(t, runstate.RunQueued, b.statusOf(late.RunID))
}

// TestRunConcurrency_EveryEndOfARunGivesItsKeySlotBack is the table of a
// run's ends: completed, failed, cancelled, and cancelled then deleted;
// each frees the slot, and the queued run of the key starts on the next
// tick.
func TestRunConcurrency_EveryEndOfARunGivesItsKeySlotBack(t *testing.T) {
	ends := []struct {
		name string
		end  func(b *bundle, run *runstate.Snapshot)
	}{
		{"completed", func(b *bundle, _ *runstate.Snapshot) { b.complete(b.poll("act-charge"), `1`) }},
		{"failed", func(b *bundle, _ *runstate.Snapshot) { b.fail(b.poll("act-charge"), definition.ErrorValidation) }},
		{"cancelled", func(b *bundle, run *runstate.Snapshot) {
			_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Reason: "stop"})
			require.NoError(b.t, err)
		}},
		{"cancelled while paused, then deleted", func(b *bundle, run *runstate.Snapshot) {
			_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID})
			require.NoError(b.t, err)
			require.Equal(b.t, map[string]int{"c1": 1}, b.keySlotsHeld(), "a paused run keeps its slot")
			_, err = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID})
			require.NoError(b.t, err)
			_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID})
			require.NoError(b.t, err)
		}},
	}
	for _, backend := range scenarioBackends {
		for _, c := range ends {
			t.Run(backend.name+"/"+c.name, func(t *testing.T) {
				b := setupWith(t, backend.open(t))
				def := keyed(1, "")
				holder, waiting := b.submitFor(def, "c1", 0), b.submitFor(def, "c1", 0)
				require.Equal(t, runstate.RunQueued, waiting.Status)
				c.end(b, holder)
				require.Empty(t, b.keySlotsHeld(), "the end gave the slot back")
				b.tick()
				require.Equal(t, runstate.RunRunning, b.statusOf(waiting.RunID))
				require.Equal(t, map[string]int{"c1": 1}, b.keySlotsHeld())
				q, k := b.queueEntries()
				require.Zero(t, q+k, "no queue entry is left")
			})
		}
	}
}

// TestRunConcurrency_CancelNewestCancelsTheRunThatFindsItsKeyFull.
func TestRunConcurrency_CancelNewestCancelsTheRunThatFindsItsKeyFull(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			def := keyed(1, definition.StrategyCancelNewest)
			holder := b.submitFor(def, "c1", 0)
			newer := b.submitFor(def, "c1", 0)
			require.Equal(t, runstate.RunRunning, b.statusOf(holder.RunID))
			got := b.run(newer.RunID)
			require.Equal(t, runstate.RunCancelled, got.Status)
			require.NotNil(t, got.Cancellation)
			require.Equal(t, "concurrency key c1 at 1/1: strategy cancelNewest cancels the run that finds its key full", got.Cancellation.Reason)
			require.Equal(t, runstate.RunRunning, b.submitFor(def, "c2", 0).Status, "another key is not full")
			require.Equal(t, map[string]int{"c1": 1, "c2": 1}, b.keySlotsHeld())
			q, k := b.queueEntries()
			require.Zero(t, q+k)
		})
	}
}

// TestRunConcurrency_CancelInProgressCancelsTheOldestRunAndTheNewOneTakesItsSlot.
func TestRunConcurrency_CancelInProgressCancelsTheOldestRunAndTheNewOneTakesItsSlot(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			def := keyed(2, definition.StrategyCancelInProgress)
			oldest := b.submitFor(def, "c1", 0)
			b.clock.Advance(1e6)
			second := b.submitFor(def, "c1", 0)
			newer := b.submitFor(def, "c1", 0)
			require.Equal(t, runstate.RunQueued, newer.Status)
			b.tick()
			got := b.run(oldest.RunID)
			require.Equal(t, runstate.RunCancelled, got.Status)
			require.Contains(t, got.Cancellation.Reason, "newer run "+newer.RunID)
			require.Contains(t, got.Cancellation.Reason, "cancelInProgress")
			require.Equal(t, runstate.RunRunning, b.statusOf(second.RunID))
			require.Equal(t, runstate.RunRunning, b.statusOf(newer.RunID), "the new run took the freed slot")
			require.Equal(t, map[string]int{"c1": 2}, b.keySlotsHeld())
			b.tick()
			require.Equal(t, runstate.RunRunning, b.statusOf(second.RunID), "nothing more is cancelled")
		})
	}
}

// TestRunConcurrency_TheKeyLimitHoldsUnderEveryBackpressureMode: a key's
// limit is its own: DELAY starts a run over the plan's limit, but never
// one over its key's, and REJECT does not refuse a run for its key.
func TestRunConcurrency_TheKeyLimitHoldsUnderEveryBackpressureMode(t *testing.T) {
	for _, mode := range []definition.BackpressureMode{definition.BackpressureReject, definition.BackpressureQueue, definition.BackpressureDelay} {
		t.Run(string(mode), func(t *testing.T) {
			b := setup(t)
			b.eng.cfg.Limits.PerDefinition = 2
			def := keyed(1, "")
			def.Backpressure = mode
			first := b.submitFor(def, "c1", 0)
			second := b.submitFor(def, "c1", 0)
			require.Equal(t, runstate.RunRunning, first.Status)
			require.Equal(t, runstate.RunQueued, second.Status, "the key is full, the plan is not")
			require.Equal(t, runstate.RunRunning, b.submitFor(def, "c2", 0).Status)
			require.Equal(t, map[string]int{"c1": 1, "c2": 1}, b.keySlotsHeld())

			// Now the plan is full (2/2), and key c3 is free.
			res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true,
				Input: json.RawMessage(`{"customer": "c3"}`)})
			switch mode {
			case definition.BackpressureReject:
				var fe *Error
				require.ErrorAs(t, err, &fe)
				require.Equal(t, CodeResourceExhausted, fe.Code)
				require.Equal(t, map[string]int{"c1": 1, "c2": 1}, b.keySlotsHeld())
			case definition.BackpressureQueue:
				require.NoError(t, err)
				require.Equal(t, runstate.RunQueued, res.Run.Status)
				require.Equal(t, "plan charges at 2/2", b.run(res.Run.RunID).Concurrency.Wait)
				require.Equal(t, map[string]int{"c1": 1, "c2": 1}, b.keySlotsHeld())
			case definition.BackpressureDelay:
				require.NoError(t, err)
				require.Equal(t, runstate.RunRunning, res.Run.Status)
				require.Equal(t, map[string]int{"c1": 1, "c2": 1, "c3": 1}, b.keySlotsHeld(), "a delayed start takes its key's slot")
			}
		})
	}
}

// TestRunConcurrency_RerunTakesTheKeySlotAgainOrIsRefusedWhenTheKeyIsFull.
func TestRunConcurrency_RerunTakesTheKeySlotAgainOrIsRefusedWhenTheKeyIsFull(t *testing.T) {
	b := setup(t)
	def := keyed(1, "")
	first := b.submitFor(def, "c1", 0)
	b.complete(b.poll("act-charge"), `1`)
	second := b.submitFor(def, "c1", 0)
	require.Equal(t, runstate.RunRunning, second.Status)
	_, err := b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: first.RunID, ActionID: "charge"})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, CodeOperationConflict, fe.Code)
	b.complete(b.poll("act-charge"), `1`)
	_, err = b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: first.RunID, ActionID: "charge"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"c1": 1}, b.keySlotsHeld())
}

// TestRunConcurrency_BadConcurrencyInAYAMLFileIsRefusedByItsYAMLPath: limit
// 0, a key that is not a string, a key reading steps, an unknown strategy.
func TestRunConcurrency_BadConcurrencyInAYAMLFileIsRefusedByItsYAMLPath(t *testing.T) {
	for _, c := range []struct {
		name, concurrency, want string
	}{
		{"limit 0", "{key: input.customer, limit: 0}", "spec.concurrency.limit flow.limit_range"},
		{"not a string", "{key: \"1 + 2\", limit: 1}", "spec.concurrency.key expression_result_type"},
		{"reads steps", "{key: steps.a.output.id, limit: 1}", "spec.concurrency.key concurrency.key_steps"},
		{"no key", "{limit: 1}", "spec.concurrency.key flow.key_required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			doc := "planId: pay\nspec:\n  concurrency: " + c.concurrency + "\n  steps:\n    - name: a\n"
			d, paths, err := definition.ReadYAML([]byte(doc))
			require.NoError(t, err)
			_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true, Input: json.RawMessage(`{"customer":"x"}`)})
			var fe *Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, CodeInvalidArgument, fe.Code)
			var got []string
			for _, v := range fe.Violations {
				got = append(got, paths.YAMLPath(v.Field)+" "+v.Rule)
			}
			require.Contains(t, got, c.want)
			list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
			require.NoError(t, err)
			require.Empty(t, list.Runs, "nothing is written")
		})
	}
}

// TestRunConcurrency_AnUnknownStrategyIsRefusedByItsYAMLPath: the YAML
// loader refuses it (the API's strategy is an enum); the engine refuses one
// given in Go by its field.
func TestRunConcurrency_AnUnknownStrategyIsRefusedByItsYAMLPath(t *testing.T) {
	_, _, err := definition.ReadYAML([]byte("planId: pay\nspec:\n  concurrency: {key: input.customer, limit: 1, strategy: cancelOldest}\n  steps:\n    - name: a\n"))
	require.ErrorContains(t, err, "spec.concurrency.strategy")
	require.ErrorContains(t, err, "strategy must be one of queue, cancelNewest, cancelInProgress")
	b := setup(t)
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: keyed(1, "cancelOldest"), Start: true,
		Input: json.RawMessage(`{"customer":"x"}`)})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "definition.concurrency.strategy", fe.Violations[0].Field)
	require.Equal(t, "concurrency.strategy_known", fe.Violations[0].Rule)
}

// TestRunConcurrency_AKeyThatDoesNotAnswerAStringOverTheInputIsRefusedAtSubmit:
// input.customer typed dyn compiles, but a number in the input is refused
// naming the field, never quoting the value.
func TestRunConcurrency_AKeyThatDoesNotAnswerAStringOverTheInputIsRefusedAtSubmit(t *testing.T) {
	b := setup(t)
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: keyed(1, ""), Start: true,
		Input: json.RawMessage(`{"customer": 424242}`)})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, CodeInvalidArgument, fe.Code)
	require.Equal(t, "definition.concurrency.key", fe.Violations[0].Field)
	require.NotContains(t, fe.Error(), "424242")
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: keyed(1, ""), Start: true,
		Input: json.RawMessage(`{"customer": "` + strings.Repeat("k", MaxConcurrencyKeyBytes+1) + `"}`)})
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "concurrency.key_length", fe.Violations[0].Rule)
}

// BenchmarkRunConcurrencyStart runs one-step workflows on the in-memory
// store — submitted with start, the step claimed and completed — without
// and with a run concurrency key (one per run, limit 1, never full): the
// run-start path's cost of the key (its evaluation at submission, the
// slot's read and write at the start, its delete at the end; b.N counts
// runs).
//
//	go test -run '^$' -bench RunConcurrencyStart -benchmem ./engine/
func BenchmarkRunConcurrencyStart(b *testing.B) {
	for _, keyed := range []bool{false, true} {
		name := "none"
		if keyed {
			name = "key"
		}
		b.Run(name, func(b *testing.B) {
			eng, err := New(Config{Store: memstore.New(memstore.Config{})})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			def := seq("s1")
			if keyed {
				def.Concurrency = &definition.RunConcurrency{Key: "run.id", Limit: 1}
			}
			poll := PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-s1"}, MaxTasks: 1}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true}); err != nil {
					b.Fatal(err)
				}
				tasks, err := eng.PollTasks(ctx, poll)
				if err != nil || len(tasks) != 1 {
					b.Fatalf("poll: %v, %d tasks", err, len(tasks))
				}
				if _, err := eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w", Output: json.RawMessage(`{}`)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRunConcurrency_ANewerRunCancelsEachHolderOnce: cancelInProgress's
// cancel is keyed by the newer run, so a holder it cancelled once that
// holds the key again (rerun) is passed over, never answered as cancelled
// again while it runs.
func TestRunConcurrency_ANewerRunCancelsEachHolderOnce(t *testing.T) {
	b := setup(t)
	def := keyed(1, definition.StrategyCancelInProgress)
	holder := b.submitFor(def, "c1", 0)
	newer := b.submitFor(def, "c1", 0)
	require.Equal(t, runstate.RunQueued, newer.Status)
	rec, err := b.eng.records.LoadRun(b.ctx, newer.RunID)
	require.NoError(t, err)
	ok, err := preemptOldest(b.ctx, b.eng, rec)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, runstate.RunCancelled, b.statusOf(holder.RunID))
	_, err = b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: holder.RunID, ActionID: "charge"})
	require.NoError(t, err, "the slot is free until the newer run takes it")
	ok, err = preemptOldest(b.ctx, b.eng, rec)
	require.NoError(t, err)
	require.False(t, ok, "the holder was cancelled for this run once: nothing is freed for it now")
	require.Equal(t, runstate.RunRunning, b.statusOf(holder.RunID))
	require.Equal(t, runstate.RunQueued, b.statusOf(newer.RunID))
}

// TestRunConcurrency_ARunsEndStartsTheQueuedRunWithoutWaitingForATick:
// with a poll interval of an hour, Run's only pass after its first is the
// one the end's commit asks for, so the queued run of the key starts
// because the holder ended, not because a tick came.
func TestRunConcurrency_ARunsEndStartsTheQueuedRunWithoutWaitingForATick(t *testing.T) {
	eng, err := New(Config{Store: memstore.New(memstore.Config{}), PollInterval: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); eng.Run(ctx) }()
	defer func() { cancel(); <-done }()
	def := keyed(1, "")
	submit := func() string {
		res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, Input: json.RawMessage(`{"customer":"c1"}`)})
		require.NoError(t, err)
		return res.Run.RunID
	}
	submit()
	waiting := submit()
	status := func(id string) runstate.RunStatus {
		s, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
		require.NoError(t, err)
		return s.Status
	}
	require.Equal(t, runstate.RunQueued, status(waiting))
	tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-charge"}, MaxTasks: 1})
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	_, err = eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w", Output: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return status(waiting) == runstate.RunRunning }, 30*time.Second, 5*time.Millisecond,
		"the end's commit asks for a run-queue pass")
}
