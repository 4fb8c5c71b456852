package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// fairPropertyWeights are the weights of the property test's four keys.
var fairPropertyWeights = map[string]float64{"k0": 1, "k1": 2, "k2": 1, "k3": 3}

// fairStarvationBound is how many tasks of other keys may be claimed while
// key k has a ready task before one of k's is (docs/semantics.md#fairness):
// a head of k starts at most one task of k's cost past the virtual time,
// and each other key j has at most floor(w_j / w_k) + 1 start tags in that
// span (the +1 for ties, which the older task or the smaller key wins).
func fairStarvationBound(k string) int {
	n := 0
	for j, w := range fairPropertyWeights {
		if j != k {
			n += int(math.Floor(w/fairPropertyWeights[k])) + 1
		}
	}
	return n
}

// TestFairProperty_NoTaskLostNoneClaimedTwiceNoKeyStarved drives random
// schedules of submissions (of four keys of weights 1, 2, 1, 3), claims,
// completions, failures (retried), worker crashes (the claim is forgotten
// and times out), give-backs and clock steps. After every claim: no task
// is held by two live workers at once, and no key with a ready task has
// waited while more tasks of other keys were claimed than
// fairStarvationBound allows. At the end, with every worker back, every
// run ends.
func TestFairProperty_NoTaskLostNoneClaimedTwiceNoKeyStarved(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 6
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			fairSchedule(t, uint64(seed))
		})
	}
}

func fairSchedule(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 37))
	b := setupWith(t, memstore.New(memstore.Config{}))
	def := fairPlan(1, "input.w")
	def.Actions[0].Timeout = definition.Ms(1000)
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 10, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(50)}
	keys := []string{"k0", "k1", "k2", "k3"}
	var runs []string
	submit := func() {
		k := keys[rng.IntN(len(keys))]
		b.clock.Advance(time.Millisecond)
		runs = append(runs, b.submitInput(def, fmt.Sprintf(`{"key":%q,"w":%g}`, k, fairPropertyWeights[k])).RunID)
	}
	for range 30 {
		submit()
	}
	held := map[string]*Task{} // task id → its live claim
	waited := map[string]int{} // key → tasks of other keys claimed while it had one ready
	keyOf := func(task *Task) string {
		var in struct{ Key string }
		require.NoError(t, json.Unmarshal(task.RunInput, &in))
		return in.Key
	}
	claim := func(n int, where string) {
		ready := fairReadyKeys(t, b)
		for k := range waited {
			if ready[k] == 0 {
				delete(waited, k)
			}
		}
		for _, task := range b.pollAll("act-work", n) {
			require.NotContains(t, held, task.TaskID, "%s: task %s handed out while another worker holds it", where, task.TaskID)
			held[task.TaskID] = task
			got := keyOf(task)
			for k := range ready {
				if k != got {
					waited[k]++
					require.LessOrEqual(t, waited[k], fairStarvationBound(k), "%s: key %s starved", where, k)
				}
			}
			delete(waited, got)
			if ready[got]--; ready[got] <= 0 { // its last ready task: it waits no more
				delete(ready, got)
			}
		}
	}
	pick := func() string {
		ids := slices.Sorted(maps.Keys(held))
		return ids[rng.IntN(len(ids))]
	}
	report := func(id string, ok bool) {
		task := held[id]
		delete(held, id)
		var err error
		if ok {
			_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`{}`)})
		} else {
			_, err = b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", ErrorClass: definition.ErrorTransient, Message: "boom"})
		}
		if err != nil {
			require.Equal(t, CodeTaskClaimLost, CodeOf(err), "%v", err) // timed out meanwhile
		}
	}
	for step := range 300 {
		where := fmt.Sprintf("seed %d step %d", seed, step)
		switch op := rng.IntN(10); {
		case op < 2:
			submit()
		case op < 5:
			claim(1+rng.IntN(3), where)
		case op < 7 && len(held) > 0:
			report(pick(), true)
		case op < 8 && len(held) > 0:
			report(pick(), false)
		case op < 9 && len(held) > 0: // the worker crashes: its claim is never reported
			delete(held, pick())
		case len(held) > 0 && rng.IntN(2) == 0:
			id := pick()
			giveBack(b.eng, []*Task{held[id]})
			delete(held, id)
		default:
			b.clock.Advance(time.Duration(rng.IntN(700)) * time.Millisecond)
			b.tick()
			for id, task := range held { // a claim that timed out is no longer held
				if !claimedWith(t, b, id, task.Token) {
					delete(held, id)
				}
			}
		}
	}
	for range 200 { // every worker back: drain
		claim(10, fmt.Sprintf("seed %d drain", seed))
		for id := range held {
			report(id, true)
		}
		b.clock.Advance(time.Second)
		b.tick()
		if allEnded(b, runs) {
			break
		}
	}
	require.True(t, allEnded(b, runs), "every run ends: no task lost")
}

// fairReadyKeys answers how many tasks each fairness key has ready now.
func fairReadyKeys(t *testing.T, b *bundle) map[string]int {
	t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Task.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	now := b.clock.Now()
	out := map[string]int{}
	for _, it := range res.Items {
		var task record.Task
		require.NoError(t, record.DecodeTask(it.Value, &task))
		if task.State == record.TaskReady && !task.NotBefore.After(now) && task.FairKey != "" {
			out[task.FairKey]++
		}
	}
	return out
}

// claimedWith reports whether the task is still claimed with token.
func claimedWith(t *testing.T, b *bundle, taskID, token string) bool {
	t.Helper()
	it, err := b.store.Get(b.ctx, record.TaskKey(taskID))
	require.NoError(t, err)
	var task record.Task
	require.NoError(t, record.DecodeTask(it.Value, &task))
	return task.State == record.TaskClaimed && task.Token == token
}
