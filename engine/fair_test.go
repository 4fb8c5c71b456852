package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/queues"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// fairScenarios run on every backend (TestFairness).
var fairScenarios = map[string]func(t *testing.T, b *bundle){
	"Fairness_ASmallKeyIsNotStarvedByADeepBacklogOfEqualWeight":   scenarioFairness_ASmallKeyIsNotStarvedByADeepBacklogOfEqualWeight,
	"Fairness_ClaimsFollowTheWeights":                             scenarioFairness_ClaimsFollowTheWeights,
	"Fairness_PriorityComesBeforeFairness":                        scenarioFairness_PriorityComesBeforeFairness,
	"Fairness_TasksWithoutAKeyShareAsOneImplicitKey":              scenarioFairness_TasksWithoutAKeyShareAsOneImplicitKey,
	"Fairness_BadFairnessIsRefusedAtSubmitNamingTheField":         scenarioFairness_BadFairnessIsRefusedAtSubmitNamingTheField,
	"Fairness_DescribeQueueGetRunAndMetricsShowTheKeys":           scenarioFairness_DescribeQueueGetRunAndMetricsShowTheKeys,
	"Fairness_AStepsOwnFairnessReplacesTheDefinitions":            scenarioFairness_AStepsOwnFairnessReplacesTheDefinitions,
	"Fairness_ATaskHeldByStepConcurrencyIsPassedOverUncharged":    scenarioFairness_ATaskHeldByStepConcurrencyIsPassedOverUncharged,
	"Fairness_AKeyThatFailsToEvaluateFailsTheAttemptAsValidation": scenarioFairness_AKeyThatFailsToEvaluateFailsTheAttemptAsValidation,
}

func TestFairness(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			for name, scenario := range fairScenarios {
				t.Run(name, func(t *testing.T) {
					scenario(t, setupWith(t, backend.open(t)))
				})
			}
		})
	}
}

// fairPlan is a plan of width parallel steps of activity act-work, whose
// tasks' fairness key is input.key and weight weight.
func fairPlan(width int, weight string) definition.Definition {
	d := definition.Definition{PlanID: "fair", PlanVersion: "1", DAG: true,
		Fairness: &definition.Fairness{Key: "input.key", Weight: weight}}
	for i := range width {
		d.Actions = append(d.Actions, definition.Action{ID: fmt.Sprintf("s%d", i), Order: i + 1, Activity: "act-work"})
	}
	return d
}

// submitFair submits runs runs of d with input {"key": key}, their tasks
// ready one millisecond after another's.
func (b *bundle) submitFair(d definition.Definition, key string, runs, priority int) []string {
	b.t.Helper()
	in, _ := json.Marshal(map[string]string{"key": key})
	var ids []string
	for range runs {
		b.clock.Advance(time.Millisecond)
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Input: in, Start: true, Priority: priority})
		require.NoError(b.t, err)
		ids = append(ids, res.Run.RunID)
	}
	return ids
}

// claimKeys claims n tasks of act-work one poll of one task at a time and
// answers each one's fairness key (its run's input.key), in claim order.
func (b *bundle) claimKeys(n int) []string {
	b.t.Helper()
	keys := make([]string, 0, n)
	for range n {
		tasks := b.pollAll("act-work", 1)
		require.Len(b.t, tasks, 1, "a task is ready")
		var in struct{ Key string }
		require.NoError(b.t, json.Unmarshal(tasks[0].RunInput, &in))
		keys = append(keys, in.Key)
	}
	return keys
}

func countKey(keys []string, key string) int {
	n := 0
	for _, k := range keys {
		if k == key {
			n++
		}
	}
	return n
}

func scenarioFairness_ASmallKeyIsNotStarvedByADeepBacklogOfEqualWeight(t *testing.T, b *bundle) {
	b.submitFair(fairPlan(10, ""), "A", 100, 0) // 1,000 tasks of A, ready first
	b.submitFair(fairPlan(10, ""), "B", 1, 0)   // then 10 of B
	keys := b.claimKeys(20)
	require.Equal(t, 10, countKey(keys, "B"), "every task of B within the first 20 claims: %v", keys)
	more := b.claimKeys(10)
	require.Equal(t, 10, countKey(more, "A"), "then A's backlog, FIFO")
}

func scenarioFairness_ClaimsFollowTheWeights(t *testing.T, b *bundle) {
	b.submitFair(fairPlan(10, "input.key == 'heavy' ? 3 : 1"), "heavy", 10, 0)
	b.submitFair(fairPlan(10, "input.key == 'heavy' ? 3 : 1"), "light", 10, 0)
	keys := b.claimKeys(80)
	for end := 8; end <= 80; end += 8 { // every window from the start: 3:1 within one task of each
		heavy := countKey(keys[:end], "heavy")
		require.InDelta(t, float64(end)*3/4, float64(heavy), 1.01, "claims %d: %d heavy of %v", end, heavy, keys[:end])
	}
}

func scenarioFairness_PriorityComesBeforeFairness(t *testing.T, b *bundle) {
	b.submitFair(fairPlan(10, ""), "A", 3, 1) // 30 of A at priority 1
	b.submitFair(fairPlan(10, ""), "B", 1, 3) // 10 of B at priority 3, a key never served
	keys := b.claimKeys(30)
	require.Equal(t, 30, countKey(keys, "A"), "priority 1 first, whatever the keys' turns: %v", keys)
	require.Equal(t, 10, countKey(b.claimKeys(10), "B"))
}

func scenarioFairness_TasksWithoutAKeyShareAsOneImplicitKey(t *testing.T, b *bundle) {
	plain := fairPlan(10, "")
	plain.Fairness = nil
	b.submitFair(plain, "none", 10, 0)        // 100 tasks without a key, ready first
	b.submitFair(fairPlan(10, ""), "B", 1, 0) // then 10 of B
	keys := b.claimKeys(20)
	require.Equal(t, 10, countKey(keys, "B"), "the implicit key is one key of weight 1: %v", keys)
}

func scenarioFairness_BadFairnessIsRefusedAtSubmitNamingTheField(t *testing.T, b *bundle) {
	for _, c := range []struct {
		name   string
		f      definition.Fairness
		onStep bool
		field  string
		rule   string
	}{
		{"negative weight", definition.Fairness{Key: "input.key", Weight: "-1"}, false, "definition.fairness.weight", "flow.weight_range"},
		{"zero weight", definition.Fairness{Key: "input.key", Weight: "0"}, false, "definition.fairness.weight", "flow.weight_range"},
		{"a weight that is no number", definition.Fairness{Key: "input.key", Weight: "heavy"}, false, "definition.fairness.weight", ""},
		{"a weight expression out of range", definition.Fairness{Key: "input.key", Weight: "input.n"}, false, "definition.fairness.weight", "flow.weight_range"},
		{"a key that is not a string", definition.Fairness{Key: "1 + 2"}, false, "definition.fairness.key", "expression_result_type"},
		{"no key", definition.Fairness{}, false, "definition.fairness.key", "flow.key_required"},
		{"on a step", definition.Fairness{Key: "input.key", Weight: "5000"}, true, "definition.actions[0].fairness.weight", "flow.weight_range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := fairPlan(1, "")
			if c.onStep {
				d.Actions[0].Fairness = &c.f
			} else {
				d.Fairness = &c.f
			}
			_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Input: json.RawMessage(`{"key":"k","n":-2}`), Start: true})
			var fe *Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, CodeInvalidArgument, fe.Code)
			require.Equal(t, c.field, fe.Violations[0].Field)
			if c.rule != "" {
				require.Equal(t, c.rule, fe.Violations[0].Rule)
			}
		})
	}
}

// BenchmarkFairClaims queues b.N one-step runs, their tasks spread over
// 100 fairness keys or without fairness, then claims and completes them
// all, 64 per poll (b.N counts tasks): the claim's cost with fairness next
// to none.
//
//	go test -run '^$' -bench FairClaims -benchtime 2000x ./engine/
func BenchmarkFairClaims(b *testing.B) {
	for _, keys := range []int{0, 100} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			eng, err := New(Config{Store: memstore.New(memstore.Config{})})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			def := fairPlan(1, "")
			if keys == 0 {
				def.Fairness = nil
			}
			b.ReportAllocs()
			for i := range b.N {
				in := json.RawMessage(fmt.Sprintf(`{"key":"k%d"}`, i%max(keys, 1)))
				if _, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Input: in, Start: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for done := 0; done < b.N; {
				tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-work"}, MaxTasks: 64})
				if err != nil || len(tasks) == 0 {
					b.Fatalf("poll: %v, %d tasks", err, len(tasks))
				}
				for _, task := range tasks {
					if _, err := eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{}`)}); err != nil {
						b.Fatal(err)
					}
				}
				done += len(tasks)
			}
		})
	}
}

func TestFairness_BadFairnessInAYAMLFileIsRefusedByItsYAMLPath(t *testing.T) {
	b := setup(t)
	doc := `planId: fair
spec:
  fairness: {key: "1 + 2", weight: -1}
  steps:
    - name: lookup
    - name: charge
      dependsOn: lookup
      fairness: {key: steps.lookup.output.tenant, weight: heavy}
`
	d, paths, err := definition.ReadYAML([]byte(doc))
	require.NoError(t, err)
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, CodeInvalidArgument, fe.Code)
	var got []string
	for _, v := range fe.Violations {
		got = append(got, paths.YAMLPath(v.Field)+" "+v.Rule)
	}
	require.ElementsMatch(t, []string{
		"spec.fairness.key expression_result_type",
		"spec.fairness.weight flow.weight_range",
		"spec.steps[1].fairness.weight expression_type",
	}, got)
}

func TestFairness_YAMLRefusesAFairnessKeyTheShapeDoesNotHave(t *testing.T) {
	_, _, err := definition.ReadYAML([]byte("planId: p\nfairness: {key: input.k, wieght: 2}\nsteps:\n  - name: a\n"))
	require.ErrorContains(t, err, "fairness.wieght")
}

// TestFairness_TwoEnginesOnOnePostgreSQLStillGiveASmallKeyItsTurn claims,
// from two engines (separate connection pools) on one PostgreSQL store at
// once, the tasks of keys A (200 ready first) and B (10): no task is
// handed out twice, and B's all go within the first 24 claims (20 in fair
// order, and one turn early per engine for a pick made on a state the
// other engine had moved).
func TestFairness_TwoEnginesOnOnePostgreSQLStillGiveASmallKeyItsTurn(t *testing.T) {
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var engines []*Engine
	for i := range 2 {
		eng, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: fmt.Sprintf("engine-%d", i)})
		require.NoError(t, err)
		engines = append(engines, eng)
	}
	submit := func(key string, runs int) {
		in, _ := json.Marshal(map[string]string{"key": key})
		for range runs {
			_, err := engines[0].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: fairPlan(10, ""), Input: in, Start: true})
			require.NoError(t, err)
			time.Sleep(time.Millisecond) // ready order: A's first
		}
	}
	submit("A", 20)
	submit("B", 1)
	const total = 210
	var (
		mu    sync.Mutex
		order []string
		seen  = map[string]bool{}
		twice []string
	)
	var wg sync.WaitGroup
	for w, eng := range engines {
		wg.Go(func() {
			for idle := 0; idle < 50; {
				mu.Lock()
				n := len(order)
				mu.Unlock()
				if n >= total {
					return
				}
				tasks, err := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: fmt.Sprint("w", w), Activities: []string{"act-work"}, MaxTasks: 1})
				if err != nil || len(tasks) == 0 {
					idle++
					continue
				}
				var in struct{ Key string }
				_ = json.Unmarshal(tasks[0].RunInput, &in)
				mu.Lock()
				if seen[tasks[0].TaskID] {
					twice = append(twice, tasks[0].TaskID)
				}
				seen[tasks[0].TaskID] = true
				order = append(order, in.Key)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, twice, "no task handed out twice")
	require.Len(t, order, total, "every task claimed once")
	require.Equal(t, 10, countKey(order[:24], "B"), "B's tasks within the first 24 claims: %v", order[:30])
}

func scenarioFairness_DescribeQueueGetRunAndMetricsShowTheKeys(t *testing.T, b *bundle) {
	as := b.submitFair(fairPlan(10, "input.key == 'A' ? 2 : 1"), "A", 3, 0) // 30 of A, weight 2
	bs := b.submitFair(fairPlan(1, "input.key == 'A' ? 2 : 1"), "B", 2, 0)  // 2 of B, weight 1
	require.Equal(t, []string{"A"}, b.claimKeys(1))                         // A's oldest first: B's turn next
	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Equal(t, 31, q.Backlog, "the fair sub-lanes count in the queue's backlog")
	require.Equal(t, []queues.FairKey{{Priority: 3, Key: "A", Backlog: 29, Weight: 2}, {Priority: 3, Key: "B", Backlog: 2, Weight: 1}}, q.FairKeys)

	for i, id := range as {
		waits, want := b.run(id).FlowWaits, 10
		if i == 0 {
			want = 9 // its first step was claimed
		}
		require.Len(t, waits, want, "every ready step of A's runs says why")
		for _, why := range waits {
			require.Equal(t, "waits its fair turn: key A (weight 2) at priority 3, key B goes first", why)
		}
	}
	require.Empty(t, b.run(bs[0]).FlowWaits, "B's oldest is next: it waits for a worker only")
	require.Equal(t, map[string]string{"s0": "waits its fair turn: key B (weight 1) at priority 3, behind older tasks of its key"}, b.run(bs[1]).FlowWaits)

	stats, err := b.eng.Stats(b.ctx)
	require.NoError(t, err)
	var fair []FlowKeyStat
	for _, k := range stats.FlowKeys {
		if k.Kind == "fairness" {
			fair = append(fair, k)
		}
	}
	require.ElementsMatch(t, []FlowKeyStat{
		{TenantID: tenant, Kind: "fairness", Scope: "queue:default", Key: "A", Ready: 29},
		{TenantID: tenant, Kind: "fairness", Scope: "queue:default", Key: "B", Ready: 2},
	}, fair)
}

// BenchmarkFairEagerSteps runs five-step sequential runs through one
// worker that completes each task asking for its next (eager dispatch)
// and polls when it got none, and reports commits and writes per step
// (b.N counts steps): without fairness each completion claims the run's
// next task in its own commit; with a fairness key the next task goes to
// its sub-lane and a poll claims it in fair order — what refusing eager
// dispatch and hand-off to fair tasks costs.
//
//	go test -run '^$' -bench FairEagerSteps -benchtime 2000x ./engine/
func BenchmarkFairEagerSteps(b *testing.B) {
	for _, fair := range []bool{false, true} {
		b.Run(fmt.Sprintf("fairness=%v", fair), func(b *testing.B) {
			cc := &commitCounter{Store: memstore.New(memstore.Config{})}
			eng, err := New(Config{Store: cc})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			def := definition.Definition{PlanID: "eager", PlanVersion: "1"}
			for i := range 5 {
				def.Actions = append(def.Actions, definition.Action{ID: fmt.Sprintf("s%d", i), Order: i + 1, Activity: "act-work"})
			}
			if fair {
				def.Fairness = &definition.Fairness{Key: "input.key"}
			}
			poll := PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-work"}, MaxTasks: 1}
			runs := (b.N + 4) / 5
			for i := range runs {
				in := json.RawMessage(fmt.Sprintf(`{"key":"k%d"}`, i%10))
				if _, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Input: in, Start: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			commits, ops := cc.n.Load(), cc.ops.Load()
			var next []*Task
			for done := 0; done < runs*5; {
				if len(next) == 0 {
					if next, err = eng.PollTasks(ctx, poll); err != nil || len(next) == 0 {
						b.Fatalf("poll: %v, %d tasks", err, len(next))
					}
				}
				task := next[0]
				res, err := eng.CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{}`), Next: &poll})
				if err != nil {
					b.Fatal(err)
				}
				next = res.Tasks
				done++
			}
			b.StopTimer()
			b.ReportMetric(float64(cc.n.Load()-commits)/float64(runs*5), "commits/step")
			b.ReportMetric(float64(cc.ops.Load()-ops)/float64(runs*5), "writes/step")
		})
	}
}

func scenarioFairness_AStepsOwnFairnessReplacesTheDefinitions(t *testing.T, b *bundle) {
	d := fairPlan(2, "")
	d.Actions[1].Fairness = &definition.Fairness{Key: "'shared-' + input.key", Weight: "4"}
	b.submitFair(d, "A", 1, 0)
	got := map[string]string{}
	for _, task := range b.pollAll("act-work", 10) {
		rec, _, err := b.eng.records.Task(b.ctx, task.TaskID)
		require.NoError(t, err)
		got[task.ActionID] = fmt.Sprintf("%s/%g", rec.FairKey, weightOf(rec.FairWeight))
	}
	require.Equal(t, map[string]string{"s0": "A/1", "s1": "shared-A/4"}, got)
}

func scenarioFairness_ATaskHeldByStepConcurrencyIsPassedOverUncharged(t *testing.T, b *bundle) {
	d := fairPlan(1, "")
	d.Actions[0].Concurrency = &definition.StepConcurrency{Key: "'psp'", Limit: 1}
	b.submitFair(d, "A", 3, 0)
	b.submitFair(d, "B", 1, 0)
	first := b.pollAll("act-work", 1)
	require.Len(t, first, 1)
	require.Empty(t, b.pollAll("act-work", 5), "the key psp is at its limit: every task is held")
	_, err := b.store.Get(b.ctx, fairTagKey(tenant, "default", 3, "B"))
	require.ErrorIs(t, err, store.ErrNotFound, "a held task is not charged to its key")
	b.complete(first[0], `{}`)
	require.Equal(t, []string{"B"}, b.claimKeys(1), "the slot is free: B's turn, A went once")
}

func scenarioFairness_AKeyThatFailsToEvaluateFailsTheAttemptAsValidation(t *testing.T, b *bundle) {
	d := seq("a", "charge")
	d.Actions[1].Fairness = &definition.Fairness{Key: "steps.a.output.tenant"}
	run := b.submit(d)
	b.complete(b.poll("act-a"), `{"tenant": 42}`) // not a string
	b.pollNone("act-charge")
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	st := snap.Step("charge")
	require.Equal(t, definition.ErrorValidation, st.Error.Class)
	require.Contains(t, st.Error.Message, "fairness")
	require.NotContains(t, st.Error.Message, "42", "no payload in the message")
}

func TestFairness_AFanOutsItemsHaveTheirStepsFairness(t *testing.T) {
	b := setup(t)
	d := definition.Definition{PlanID: "fan", PlanVersion: "1", Fairness: &definition.Fairness{Key: "input.key", Weight: "2"},
		Actions: []definition.Action{{ID: "each", Order: 1, Activity: "act-work", ForEach: "lists.range(3)", MaxConcurrency: 3}}}
	b.submitFair(d, "A", 1, 0)
	tasks := b.pollAll("act-work", 10)
	require.Len(t, tasks, 3)
	for _, task := range tasks {
		rec, _, err := b.eng.records.Task(b.ctx, task.TaskID)
		require.NoError(t, err)
		require.Equal(t, "A", rec.FairKey, "item %s", task.ActionID)
		require.InDelta(t, 2.0, rec.FairWeight, 0)
	}
}

// TestFairness_AnIdleKeysFinishTagIsDeletedOnceStale: a key's finish tag
// is deleted once the virtual time has passed it and the key has nothing
// ready, so the fair-queueing state is bounded by the keys served recently
// (docs/semantics.md#fairness); a key with tasks ready keeps its tag.
func TestFairness_AnIdleKeysFinishTagIsDeletedOnceStale(t *testing.T) {
	b := setup(t)
	b.submitFair(fairPlan(1, ""), "A", 1, 0)
	b.submitFair(fairPlan(1, ""), "B", 1, 0)
	require.ElementsMatch(t, []string{"A", "B"}, b.claimKeys(2))
	b.submitFair(fairPlan(1, ""), "C", 4, 0)
	b.submitFair(fairPlan(1, ""), "D", 2, 0)
	require.Equal(t, []string{"C", "D", "C", "D"}, b.claimKeys(4)) // the virtual time reaches A's, B's and D's tags
	tags := func() []string {
		res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: fairStatePrefix(tenant, "default", 3), Limit: 100})
		require.NoError(t, err)
		var out []string
		for _, it := range res.Items {
			parts, err := store.SplitKey(it.Key)
			require.NoError(t, err)
			if len(parts) == 6 {
				out = append(out, parts[5])
			}
		}
		return out
	}
	require.Equal(t, []string{"C"}, b.claimKeys(1))
	require.Equal(t, []string{"C"}, tags(), "A's, B's and D's tags, at or before the virtual time with nothing ready, are gone; C's, with tasks ready, stays")
}
