package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/admission"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// TestRunConcurrencyProperty_AKeyLimitIsNeverExceededAndNoSlotLeaks drives
// random schedules of submissions (three plans, one per strategy, three
// customers, random priorities), completions, failures, cancels, pauses and
// resumes, reruns, ticks and crashes (the engine replaced by a new one over
// the same store) on every store. After every step: no key has more
// started runs than its limit, every slot of a key is held by a started
// run of that key and every started run with a key holds exactly one, and
// the key queues hold exactly the QUEUED runs. At the end, with every
// task completed, every run ends, and no slot or queue entry is left.
func TestRunConcurrencyProperty_AKeyLimitIsNeverExceededAndNoSlotLeaks(t *testing.T) {
	for _, backend := range scenarioBackends {
		seeds := 12
		if backend.name == "postgresql" || testing.Short() {
			seeds = 2
		}
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed%d", backend.name, seed), func(t *testing.T) {
				runConcurrencySchedule(t, setupWith(t, backend.open(t)), uint64(seed))
			})
		}
	}
}

func runConcurrencySchedule(t *testing.T, b *bundle, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 33))
	plans := map[string]definition.Definition{}
	for i, s := range []definition.ConcurrencyStrategy{definition.StrategyQueue, definition.StrategyCancelNewest, definition.StrategyCancelInProgress} {
		d := keyed(1+i%2, s)
		d.PlanID = "plan-" + string(s)
		plans[d.PlanID] = d
	}
	names := []string{"plan-queue", "plan-cancelNewest", "plan-cancelInProgress"}
	customers := []string{"c0", "c1", "c2"}
	var runs []string
	var held []*Task
	for step := range 250 {
		where := fmt.Sprintf("seed %d step %d", seed, step)
		switch op := rng.IntN(20); {
		case op < 5 && len(runs) < 40:
			def := plans[names[rng.IntN(len(names))]]
			runs = append(runs, b.submitFor(def, customers[rng.IntN(len(customers))], rng.IntN(6)).RunID)
		case op < 8:
			held = append(held, b.pollAll("act-charge", 1+rng.IntN(3))...)
		case op < 11 && len(held) > 0:
			i := rng.IntN(len(held))
			task := held[i]
			held = append(held[:i], held[i+1:]...)
			var err error
			if rng.IntN(4) == 0 {
				_, err = b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1",
					ErrorClass: definition.ErrorValidation, Message: "no"})
			} else {
				_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
			}
			if err != nil {
				require.Equal(t, CodeTaskClaimLost, CodeOf(err), "%s: %v", where, err) // its run was cancelled meanwhile
			}
		case op < 12 && len(runs) > 0:
			_, _ = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: runs[rng.IntN(len(runs))], Reason: "test"})
		case op < 13 && len(runs) > 0:
			id := runs[rng.IntN(len(runs))]
			_, _ = b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: id})
			if rng.IntN(2) == 0 {
				_, _ = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: id})
			}
		case op < 14 && len(runs) > 0:
			_, _ = b.eng.RerunRun(b.ctx, ControlParams{TenantID: tenant, RunID: runs[rng.IntN(len(runs))], ActionID: "charge"})
		case op < 15:
			b.restart() // a crash: a new engine over the same store
		default:
			b.clock.Advance(time.Duration(rng.IntN(300)) * time.Millisecond)
			b.tick()
		}
		requireKeyInvariant(t, b, plans, runs, where)
	}
	for _, id := range runs { // resume what is paused, then drain
		_, _ = b.eng.ResumeRun(b.ctx, ControlParams{TenantID: tenant, RunID: id})
	}
	for range 100 {
		held = append(held, b.pollAll("act-charge", 20)...)
		for _, task := range held {
			_, _ = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`1`)})
		}
		held = held[:0]
		b.clock.Advance(time.Second)
		b.tick()
		requireKeyInvariant(t, b, plans, runs, fmt.Sprintf("seed %d drain", seed))
		if allEnded(b, runs) {
			break
		}
	}
	require.True(t, allEnded(b, runs), "every run ends")
	require.Empty(t, b.keySlotsHeld(), "no slot is left held")
	q, k := b.queueEntries()
	require.Zero(t, q+k, "no queue entry is left")
}

// requireKeyInvariant checks the key slots and queues against the runs.
func requireKeyInvariant(t *testing.T, b *bundle, plans map[string]definition.Definition, runs []string, where string) {
	t.Helper()
	type keyOf struct{ plan, key string }
	startedBy := map[keyOf]map[string]bool{}
	queued := map[string]bool{}
	for _, id := range runs {
		s := b.run(id)
		k := keyOf{s.PlanID, s.Concurrency.Key}
		if started(s.Status) {
			if startedBy[k] == nil {
				startedBy[k] = map[string]bool{}
			}
			startedBy[k][id] = true
		}
		if s.Status == runstate.RunQueued {
			queued[id] = true
		}
	}
	for k, set := range startedBy {
		require.LessOrEqual(t, len(set), plans[k.plan].Concurrency.Limit, "%s: %v has %d started runs", where, k, len(set))
	}
	slots, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Slot.KeyPrefix(tenant, "key"), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	holding := map[string]int{}
	for _, it := range slots.Items {
		_, plan, key, ok := admission.SlotKeyParts(it.Key)
		require.True(t, ok)
		id := string(it.Value)
		require.True(t, startedBy[keyOf{plan, key}][id], "%s: slot %s is held by run %s, which is not a started run of its key (a leak)", where, it.Key, id)
		holding[id]++
	}
	for _, set := range startedBy {
		for id := range set {
			require.Equal(t, 1, holding[id], "%s: started run %s holds %d slots of its key", where, id, holding[id])
		}
	}
	kq, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Slot.KeyPrefix(tenant, "keyq"), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	inQueue := map[string]bool{}
	for _, it := range kq.Items {
		inQueue[string(it.Value)] = true
	}
	require.Equal(t, queued, inQueue, "%s: the key queues hold exactly the QUEUED runs", where)
}
