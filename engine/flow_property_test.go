package engine

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// TestFlowProperty_ALimitIsNeverExceededAndNoSlotLeaks drives random
// schedules of claims, completions, failures (retried), worker crashes
// (the claim is forgotten and times out), give-backs, cancellations and
// clock steps over runs of three concurrency keys with limit 2. After every
// step: no key has more than 2 tasks claimed, every held slot names a task
// claimed with the slot's token, and every claimed task holds exactly one
// slot. At the end, with every worker back, every run ends and no slot is
// held.
func TestFlowProperty_ALimitIsNeverExceededAndNoSlotLeaks(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 8
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			flowSchedule(t, uint64(seed))
		})
	}
}

func flowSchedule(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 31))
	b := setupWith(t, memstore.New(memstore.Config{}))
	def := limited("input.customer", 2)
	def.Actions[0].Timeout = definition.Ms(1000)
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 10, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(50)}
	keys := []string{"k0", "k1", "k2"}
	var runs []string
	for i := range 24 {
		runs = append(runs, b.submitInput(def, fmt.Sprintf(`{"customer":%q}`, keys[i%3])).RunID)
	}
	var held []*Task // claimed by live workers
	report := func(i int, ok bool) {
		task := held[i]
		held = append(held[:i], held[i+1:]...)
		var err error
		if ok {
			_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`{}`)})
		} else {
			_, err = b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", ErrorClass: definition.ErrorTransient, Message: "boom"})
		}
		if err != nil {
			require.Equal(t, CodeTaskClaimLost, CodeOf(err), "%v", err) // timed out or cancelled meanwhile
		}
	}
	for step := range 300 {
		switch op := rng.IntN(10); {
		case op < 3:
			held = append(held, b.pollAll("act-charge", 1+rng.IntN(4))...)
		case op < 5 && len(held) > 0:
			report(rng.IntN(len(held)), true)
		case op < 6 && len(held) > 0:
			report(rng.IntN(len(held)), false)
		case op < 7 && len(held) > 0: // the worker crashes: its claim is never reported
			i := rng.IntN(len(held))
			held = append(held[:i], held[i+1:]...)
		case op < 8 && len(held) > 0:
			i := rng.IntN(len(held))
			giveBack(b.eng, held[i:i+1])
			held = append(held[:i], held[i+1:]...)
		case op < 9 && rng.IntN(4) == 0:
			_, _ = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: runs[rng.IntN(len(runs))], Reason: "test", Actor: "alice"})
		default:
			b.clock.Advance(time.Duration(rng.IntN(700)) * time.Millisecond)
			b.tick()
		}
		requireFlowInvariant(t, b, 2, fmt.Sprintf("seed %d step %d", seed, step))
	}
	for range 200 { // every worker back: drain
		for _, task := range b.pollAll("act-charge", 10) {
			held = append(held, task)
		}
		for len(held) > 0 {
			report(0, true)
		}
		b.clock.Advance(time.Second)
		b.tick()
		requireFlowInvariant(t, b, 2, fmt.Sprintf("seed %d drain", seed))
		if allEnded(b, runs) {
			break
		}
	}
	require.True(t, allEnded(b, runs), "every run ends")
	require.Zero(t, b.slotsHeld(), "no slot is left held")
}

func allEnded(b *bundle, runs []string) bool {
	for _, id := range runs {
		if !b.run(id).Status.Terminal() {
			return false
		}
	}
	return true
}

// requireFlowInvariant checks the slots against the task records.
func requireFlowInvariant(t *testing.T, b *bundle, limit int, where string) {
	t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Task.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	claimed := map[string]string{} // token → key
	perKey := map[string]int{}
	for _, it := range res.Items {
		var task record.Task
		require.NoError(t, record.DecodeTask(it.Value, &task))
		if task.State == record.TaskClaimed && task.Flow != nil {
			claimed[task.Token] = task.Flow.ConcurrencyKey
			perKey[task.Flow.ConcurrencyKey]++
		}
	}
	for k, n := range perKey {
		require.LessOrEqual(t, n, limit, "%s: key %s has %d tasks claimed", where, k, n)
	}
	slots, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.FlowSlot.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, it := range slots.Items {
		token := string(it.Value)
		key, ok := claimed[token]
		require.True(t, ok, "%s: slot %s is held by a task not claimed with its token (a leak)", where, it.Key)
		require.Contains(t, string(it.Key), ":"+key+":", "%s: a task holds a slot of another key", where)
		require.False(t, seen[token], "%s: a task holds two slots", where)
		seen[token] = true
	}
	require.Len(t, seen, len(claimed), "%s: every claimed task holds a slot", where)
	_ = strings.Contains
}
