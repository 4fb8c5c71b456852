package engine

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// flowScenarios run on every backend (TestFlow).
var flowScenarios = map[string]func(t *testing.T, b *bundle){
	"Concurrency_AKeyNeverHasMoreThanLimitTasksInFlight":        scenarioConcurrency_AKeyNeverHasMoreThanLimitTasksInFlight,
	"Concurrency_ASlotReturnsWhenTheAttemptTimesOut":            scenarioConcurrency_ASlotReturnsWhenTheAttemptTimesOut,
	"Concurrency_ACancelledRunGivesItsSlotBack":                 scenarioConcurrency_ACancelledRunGivesItsSlotBack,
	"Concurrency_TenantScopeIsSharedByEveryPlanNamingTheKey":    scenarioConcurrency_TenantScopeIsSharedByEveryPlanNamingTheKey,
	"Concurrency_AHeldTaskDoesNotCountTowardScheduleToStart":    scenarioConcurrency_AHeldTaskDoesNotCountTowardScheduleToStart,
	"Throttle_DispatchFollowsTheRateAfterTheBurst":              scenarioThrottle_DispatchFollowsTheRateAfterTheBurst,
	"Flow_AKeyThatFailsToEvaluateFailsTheAttemptAsValidation":   scenarioFlow_AKeyThatFailsToEvaluateFailsTheAttemptAsValidation,
	"Flow_BadFlowControlIsRefusedAtSubmitNamingTheField":        scenarioFlow_BadFlowControlIsRefusedAtSubmitNamingTheField,
	"Concurrency_AGivenBackTaskGivesItsSlotBack":                scenarioConcurrency_AGivenBackTaskGivesItsSlotBack,
	"Concurrency_AStaleHolderIsReplacedOnceItsTaskIsNotClaimed": scenarioConcurrency_AStaleHolderIsReplacedOnceItsTaskIsNotClaimed,
	"Visibility_DescribeQueueAndGetRunSayWhatHoldsATask":        scenarioVisibility_DescribeQueueAndGetRunSayWhatHoldsATask,
	"Priority_TasksAreHandedOutInPriorityOrderFIFOWithinOne":    scenarioPriority_TasksAreHandedOutInPriorityOrderFIFOWithinOne,
	"Priority_OutOfRangeIsRefusedNamingTheField":                scenarioPriority_OutOfRangeIsRefusedNamingTheField,
}

func TestFlow(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			for name, scenario := range flowScenarios {
				t.Run(name, func(t *testing.T) {
					scenario(t, setupWith(t, backend.open(t)))
				})
			}
		})
	}
}

// limited is a one-step plan whose step has a concurrency key.
func limited(key string, limit int) definition.Definition {
	d := seq("charge")
	d.Actions[0].Concurrency = &definition.StepConcurrency{Key: key, Limit: limit}
	return d
}

// customers answers the customer of each task, sorted.
func customers(tasks []*Task) []string {
	out := make([]string, 0, len(tasks))
	for _, t := range tasks {
		var in struct{ Customer string }
		_ = json.Unmarshal(t.RunInput, &in)
		out = append(out, in.Customer)
	}
	sort.Strings(out)
	return out
}

// slots answers how many concurrency slots are held, by key prefix.
func (b *bundle) slotsHeld() int {
	b.t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.FlowSlot.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(b.t, err)
	return len(res.Items)
}

func scenarioConcurrency_AKeyNeverHasMoreThanLimitTasksInFlight(t *testing.T, b *bundle) {
	def := limited("input.customer", 2)
	for range 4 {
		b.submitInput(def, `{"customer":"A"}`)
	}
	b.submitInput(def, `{"customer":"B"}`)
	first := b.pollAll("act-charge", 10)
	require.Equal(t, []string{"A", "A", "B"}, customers(first), "two of A's four, and B's one")
	require.Empty(t, b.pollAll("act-charge", 10), "A is at its limit")
	require.Equal(t, 3, b.slotsHeld())
	var a *Task
	for _, task := range first {
		if customers([]*Task{task})[0] == "A" {
			a = task
		}
	}
	b.complete(a, `{}`)
	next := b.pollAll("act-charge", 10)
	require.Equal(t, []string{"A"}, customers(next), "the slot A's completion gave back is taken by A's next task")
	require.Empty(t, b.pollAll("act-charge", 10))
	require.Equal(t, 3, b.slotsHeld())
}

func scenarioConcurrency_ASlotReturnsWhenTheAttemptTimesOut(t *testing.T, b *bundle) {
	def := limited("'one'", 1)
	def.Actions[0].Timeout = definition.Ms(1000)
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 3, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(10)}
	b.submit(def)
	b.submit(def)
	first := b.pollAll("act-charge", 10)
	require.Len(t, first, 1)
	require.Empty(t, b.pollAll("act-charge", 10))
	b.clock.Advance(1500 * time.Millisecond) // the worker crashed: its attempt times out
	b.tick()
	b.clock.Advance(50 * time.Millisecond) // past the retry's backoff
	b.tick()
	got := b.pollAll("act-charge", 10)
	require.Len(t, got, 1, "the timed-out claim's slot is free again")
	require.Equal(t, 1, b.slotsHeld())
}

func scenarioConcurrency_ACancelledRunGivesItsSlotBack(t *testing.T, b *bundle) {
	def := limited("'one'", 1)
	b.submit(def)
	b.submit(def)
	got := b.pollAll("act-charge", 10)
	require.Len(t, got, 1)
	claimed := got[0].RunID
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: claimed, Reason: "test", Actor: "alice"})
	require.NoError(t, err)
	require.Zero(t, b.slotsHeld(), "the cancelled run's slot is given back when it ends")
	require.Len(t, b.pollAll("act-charge", 10), 1)
}

func scenarioConcurrency_TenantScopeIsSharedByEveryPlanNamingTheKey(t *testing.T, b *bundle) {
	p1, p2 := limited("'psp'", 1), limited("'psp'", 1)
	p2.PlanID = "other"
	p1.Actions[0].Concurrency.Scope, p2.Actions[0].Concurrency.Scope = definition.ScopeTenant, definition.ScopeTenant
	b.submit(p1)
	b.submit(p2)
	require.Len(t, b.pollAll("act-charge", 10), 1, "one key, one slot, across both plans")
	p3 := limited("'psp'", 1)
	p3.PlanID = "third" // scope plan: a key of its own
	b.submit(p3)
	require.Len(t, b.pollAll("act-charge", 10), 1)
}

func scenarioConcurrency_AHeldTaskDoesNotCountTowardScheduleToStart(t *testing.T, b *bundle) {
	def := limited("'one'", 1)
	def.Actions[0].ScheduleToStartTimeout = definition.Ms(1000)
	def.Actions[0].Timeout = definition.Ms(60_000)
	r1 := b.submit(def)
	second := b.submit(def)
	first := b.pollAll("act-charge", 10)
	require.Len(t, first, 1)
	if first[0].RunID == second.RunID {
		second = r1 // whichever waits
	}
	b.clock.Advance(5 * time.Second)
	b.tick()
	st := b.run(second.RunID).Step("charge")
	require.Equal(t, runstate.StepScheduled, st.Status, "a task held by its concurrency key does not time out waiting to start")
	b.complete(first[0], `{}`)
	require.Len(t, b.pollAll("act-charge", 10), 1, "the held task goes once the slot is free")
}

func scenarioThrottle_DispatchFollowsTheRateAfterTheBurst(t *testing.T, b *bundle) {
	d := seq("call")
	d.Actions[0].Throttle = &definition.StepThrottle{Key: "'psp'", Rate: "20/1s", Burst: 5}
	n := 200
	if b.store.Capabilities().Backend != "memory" {
		n = 40 // the rule is the same; the slower stores get fewer runs
	}
	for range n {
		b.submit(d)
	}
	start := b.clock.Now()
	claimed := 0
	for claimed < n {
		claimed += len(b.pollAll("act-call", 50))
		b.clock.Advance(10 * time.Millisecond) // the poll loop's cycle
		require.Less(t, b.clock.Now().Sub(start), time.Minute, "the backlog drains")
	}
	var started []time.Time
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(t, err)
	for _, r := range list.Runs {
		started = append(started, b.eventAt(r.RunID, runstate.EvStepStarted, "call").EmittedAt)
	}
	sort.Slice(started, func(i, j int) bool { return started[i].Before(started[j]) })
	interval := 50 * time.Millisecond
	// Over any window W at most burst + W/interval tasks went.
	for i := range started {
		for j := i; j < len(started); j++ {
			w := started[j].Sub(started[i])
			require.LessOrEqual(t, j-i+1, 5+int(w/interval), "tasks %d..%d went within %s", i, j, w)
		}
	}
	require.Equal(t, 5, countAt(started, start), "the burst goes at once")
	// Once the burst is spent the backlog goes at the rate: the last task
	// went (n-5) intervals after the start, within one poll cycle.
	last := started[len(started)-1].Sub(start)
	require.InDelta(t, float64(time.Duration(n-5)*interval), float64(last), float64(10*time.Millisecond))
}

func countAt(ts []time.Time, at time.Time) int {
	n := 0
	for _, t := range ts {
		if t.Equal(at) {
			n++
		}
	}
	return n
}

func scenarioFlow_AKeyThatFailsToEvaluateFailsTheAttemptAsValidation(t *testing.T, b *bundle) {
	d := seq("a", "charge")
	d.Actions[1].Concurrency = &definition.StepConcurrency{Key: "steps.a.output.customer", Limit: 1}
	run := b.submit(d)
	b.complete(b.poll("act-a"), `{"customer": 42}`) // not a string
	b.pollNone("act-charge")
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.RunFailed, snap.Status)
	st := snap.Step("charge")
	require.Equal(t, definition.ErrorValidation, st.Error.Class)
	require.Contains(t, st.Error.Message, "concurrency.key")
	require.NotContains(t, st.Error.Message, "42", "no payload in the message")
}

func scenarioFlow_BadFlowControlIsRefusedAtSubmitNamingTheField(t *testing.T, b *bundle) {
	cases := []struct {
		name  string
		edit  func(a *definition.Action)
		input string
		field string
		rule  string
	}{
		{"limit 0", func(a *definition.Action) { a.Concurrency = &definition.StepConcurrency{Key: "'k'", Limit: 0} }, "",
			"definition.actions[0].concurrency.limit", "flow.limit_range"},
		{"rate fast", func(a *definition.Action) { a.Throttle = &definition.StepThrottle{Key: "'k'", Rate: "fast"} }, "",
			"definition.actions[0].throttle.rate", "flow.rate_format"},
		{"burst too big", func(a *definition.Action) {
			a.Throttle = &definition.StepThrottle{Key: "'k'", Rate: "1/s", Burst: 10_001}
		}, "", "definition.actions[0].throttle.burst", "flow.burst_range"},
		{"a key typed not a string", func(a *definition.Action) { a.Concurrency = &definition.StepConcurrency{Key: "1 + 2", Limit: 1} }, "",
			"definition.actions[0].concurrency.key", "expression_result_type"},
		{"a key whose input value is not a string", func(a *definition.Action) {
			a.Concurrency = &definition.StepConcurrency{Key: "input.amount", Limit: 1}
		}, `{"amount": 5}`, "definition.actions[0].concurrency.key", "expression_result_type"},
		{"a key reading a step that is not upstream", func(a *definition.Action) {
			a.Throttle = &definition.StepThrottle{Key: "steps.a.output.x", Rate: "1/s"}
		}, "", "definition.actions[0].throttle.key", "expression_unknown_step"},
		{"unknown scope", func(a *definition.Action) {
			a.Concurrency = &definition.StepConcurrency{Key: "'k'", Limit: 1, Scope: "galaxy"}
		}, "", "definition.actions[0].concurrency.scope", "flow.scope_known"},
		{"no key", func(a *definition.Action) { a.Concurrency = &definition.StepConcurrency{Limit: 1} }, "",
			"definition.actions[0].concurrency.key", "flow.key_required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := seq("charge")
			c.edit(&d.Actions[0])
			_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true, Input: json.RawMessage(c.input)})
			require.Equal(t, CodeInvalidArgument, CodeOf(err), "%v", err)
			var fields []string
			var fe *Error
			require.ErrorAs(t, err, &fe)
			for _, v := range fe.Violations {
				fields = append(fields, v.Field+" "+v.Rule)
				require.NotContains(t, v.Message, "5}", "no payload in the message")
			}
			require.Contains(t, fields, c.field+" "+c.rule)
		})
	}
	list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, PageSize: 10})
	require.NoError(t, err)
	require.Empty(t, list.Runs, "nothing was stored")
}

func scenarioConcurrency_AGivenBackTaskGivesItsSlotBack(t *testing.T, b *bundle) {
	b.submit(limited("'one'", 1))
	task := b.pollAll("act-charge", 1)
	require.Len(t, task, 1)
	require.Equal(t, 1, b.slotsHeld())
	giveBack(b.eng, task)
	require.Zero(t, b.slotsHeld())
	require.Len(t, b.pollAll("act-charge", 1), 1, "ready again, and its slot free")
}

func scenarioConcurrency_AStaleHolderIsReplacedOnceItsTaskIsNotClaimed(t *testing.T, b *bundle) {
	def := limited("'one'", 1)
	b.submit(def)
	run2 := b.submit(def)
	first := b.pollAll("act-charge", 1)
	require.Len(t, first, 1)
	// A slot whose holder is no longer claimed (as if a record outlived its
	// task): write a lost task record under the holder's id.
	require.NoError(t, commitOps(b, store.Put(record.TaskKey(first[0].TaskID),
		encodeTask(&record.Task{FormatVersion: 1, TaskID: first[0].TaskID, RunID: first[0].RunID, TenantID: tenant, State: record.TaskLost}))))
	got := b.pollAll("act-charge", 1)
	require.Len(t, got, 1, "the stale holder's slot is taken")
	require.Equal(t, run2.RunID, got[0].RunID)
	require.Equal(t, 1, b.slotsHeld())
	b.noProjectionCheck = true // the test rewrote a task record behind the engine
}

func commitOps(b *bundle, ops ...store.Op) error {
	_, err := b.store.Commit(b.ctx, &store.Batch{Ops: ops})
	return err
}

func encodeTask(t *record.Task) []byte {
	c := &change{}
	c.put(record.TaskKey(t.TaskID), t)
	return c.ops[0].Value
}

// TestFlow_BadFlowControlInAYAMLFileIsRefusedByItsYAMLPath reads a YAML
// definition as weft does and places the engine's refusal in the file.
func TestFlow_BadFlowControlInAYAMLFileIsRefusedByItsYAMLPath(t *testing.T) {
	b := setup(t)
	doc := `planId: pay
steps:
  - name: lookup
  - name: charge
    dependsOn: lookup
    concurrency: {key: input.customer, limit: 0}
    throttle: {key: "1 + 2", rate: fast}
`
	d, paths, err := definition.ReadYAML([]byte(doc))
	require.NoError(t, err)
	require.Equal(t, "input.customer", d.Actions[1].Concurrency.Key)
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	var got []string
	for _, v := range fe.Violations {
		got = append(got, paths.YAMLPath(v.Field)+" "+v.Rule)
	}
	require.ElementsMatch(t, []string{
		"steps[1].concurrency.limit flow.limit_range",
		"steps[1].throttle.key expression_result_type",
		"steps[1].throttle.rate flow.rate_format",
	}, got)
}

func TestFlow_APriorityOutOfRangeInAYAMLFileIsRefusedByItsYAMLPath(t *testing.T) {
	b := setup(t)
	d, paths, err := definition.ReadYAML([]byte("planId: p\nspec:\n  priority: 9\n  steps:\n    - name: a\n"))
	require.NoError(t, err)
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "spec.priority", paths.YAMLPath(fe.Violations[0].Field))
}

func TestFlow_YAMLRefusesAFlowControlKeyTheShapeDoesNotHave(t *testing.T) {
	_, _, err := definition.ReadYAML([]byte("planId: p\nsteps:\n  - name: a\n    throttle: {key: \"'k'\", rat: 1/s}\n"))
	require.ErrorContains(t, err, "steps[0].throttle.rat")
}

func TestFlow_AnIdleThrottleBucketIsDeletedAndABusyOneKept(t *testing.T) {
	b := setup(t)
	d := seq("call")
	d.Actions[0].Throttle = &definition.StepThrottle{Key: "input.k", Rate: "1/1m"}
	b.submitInput(d, `{"k":"a"}`)
	require.Len(t, b.pollAll("act-call", 10), 1)
	buckets := func() int {
		res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.FlowThrottle.KeyPrefix(), Limit: 100})
		require.NoError(t, err)
		return len(res.Items)
	}
	b.tick()
	require.Equal(t, 1, buckets(), "a bucket a minute ahead is busy")
	b.clock.Advance(61 * time.Second)
	b.tick()
	require.Zero(t, buckets(), "once its time has passed it is full, as no bucket: deleted")
}

// BenchmarkFlowStep runs one-step workflows on the in-memory store, each
// step claimed by a poll and completed, with and without flow control on
// the step (a concurrency key per run and one throttle shared by every
// run, neither ever holding a task back): the decision path's cost of a
// concurrency key and a throttle per step (b.N counts steps).
//
//	go test -run '^$' -bench FlowStep -benchmem ./engine/
func BenchmarkFlowStep(b *testing.B) {
	for _, flow := range []bool{false, true} {
		name := "none"
		if flow {
			name = "concurrency+throttle"
		}
		b.Run(name, func(b *testing.B) {
			eng, err := New(Config{Store: memstore.New(memstore.Config{})})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			def := seq("s1")
			if flow {
				def.Actions[0].Concurrency = &definition.StepConcurrency{Key: "run.id", Limit: 1}
				def.Actions[0].Throttle = &definition.StepThrottle{Key: "'bench'", Rate: "1000000/1s", Burst: 10000, Scope: definition.ScopeTenant}
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

func scenarioVisibility_DescribeQueueAndGetRunSayWhatHoldsATask(t *testing.T, b *bundle) {
	conc := limited("input.customer", 2)
	var runs []string
	for range 3 {
		runs = append(runs, b.submitInput(conc, `{"customer":"customer-42"}`).RunID)
	}
	claimed := map[string]bool{}
	for _, task := range b.pollAll("act-charge", 10) {
		claimed[task.RunID] = true
	}
	require.Len(t, claimed, 2)
	thr := seq("call")
	thr.PlanID = "thr"
	thr.Actions[0].Throttle = &definition.StepThrottle{Key: "'payments'", Rate: "1/1m"}
	t1, t2 := b.submit(thr).RunID, b.submit(thr).RunID
	called := b.pollAll("act-call", 10)
	require.Len(t, called, 1)
	held := t2
	if called[0].RunID == t2 {
		held = t1
	}
	for _, id := range runs {
		snap := b.run(id)
		if claimed[id] {
			require.Empty(t, snap.FlowWaits, "a claimed step waits on nothing")
		} else {
			require.Equal(t, map[string]string{"charge": "concurrency key customer-42 at 2/2"}, snap.FlowWaits)
		}
	}
	next := testStart.Add(time.Minute).Format(time.RFC3339Nano)
	require.Equal(t, map[string]string{"call": "throttled by key payments until " + next}, b.run(held).FlowWaits)

	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, q.FlowKeys, 2)
	c, th := q.FlowKeys[0], q.FlowKeys[1]
	if c.Kind != "concurrency" {
		c, th = th, c
	}
	require.Equal(t, "concurrency", c.Kind)
	require.Equal(t, "plan:plan", c.Scope)
	require.Equal(t, "customer-42", c.Key)
	require.Equal(t, []int{1, 2, 2}, []int{c.Waiting, c.InUse, c.Limit})
	require.Equal(t, "throttle", th.Kind)
	require.Equal(t, "payments", th.Key)
	require.Equal(t, []int{1, 0, 1}, []int{th.Waiting, th.Tokens, th.Burst})
	require.Equal(t, "1/1m", th.Rate)
	require.Equal(t, testStart.Add(time.Minute), th.NextRelease)

	b.clock.Advance(time.Minute)
	require.Empty(t, b.run(held).FlowWaits, "a token is there: the task waits for a worker only")
}

func scenarioPriority_TasksAreHandedOutInPriorityOrderFIFOWithinOne(t *testing.T, b *bundle) {
	low := seq("work")
	high := seq("work")
	high.PlanID, high.Priority = "vip", 1
	n := 100
	if b.store.Capabilities().Backend != "memory" {
		n = 30
	}
	submit := func(d definition.Definition, priority int) string {
		b.clock.Advance(time.Millisecond) // submission order is ready order
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true, Priority: priority})
		require.NoError(t, err)
		return res.Run.RunID
	}
	for range n {
		submit(low, 5)
	}
	var vip []string
	for i := range 10 {
		if i%2 == 0 {
			vip = append(vip, submit(high, 0)) // the definition's priority
		} else {
			vip = append(vip, submit(low, 1)) // the submission's
		}
	}
	mid := submit(low, 0) // priority 3: after the high ones, before the low ones
	require.Equal(t, 1, b.run(vip[0]).Priority)
	require.Equal(t, 3, b.run(mid).Priority)
	var got []string
	for range 10 {
		tasks := b.pollAll("act-work", 1)
		require.Len(t, tasks, 1)
		got = append(got, tasks[0].RunID)
	}
	require.Equal(t, vip, got, "the high-priority tasks first, oldest first")
	next := b.pollAll("act-work", 1)
	require.Equal(t, mid, next[0].RunID, "then priority 3, then 5")
	q, err := b.eng.DescribeQueue(b.ctx, DescribeQueueParams{TenantID: tenant})
	require.NoError(t, err)
	require.Equal(t, n, q.Backlog, "every lane counts in the queue's backlog")
	list, err := b.eng.ListWorkers(b.ctx, ListWorkersParams{TenantID: tenant})
	require.NoError(t, err)
	require.Len(t, list, 1, "a priority's lane is its queue's, not a queue of its own")
}

func scenarioPriority_OutOfRangeIsRefusedNamingTheField(t *testing.T, b *bundle) {
	_, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), Start: true, Priority: 6})
	var fe *Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "priority", fe.Violations[0].Field)
	require.Equal(t, "flow.priority_range", fe.Violations[0].Rule)
	d := seq("a")
	d.Priority = 9
	_, err = b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: d, Start: true})
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "definition.priority", fe.Violations[0].Field)
}
