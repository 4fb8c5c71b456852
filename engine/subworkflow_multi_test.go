package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/lease/redislease"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// TestSubWorkflow_ThreeEnginesWhileLeasesVanishStartOneChildPerStepAndFinishItOnce
// runs three engines on one PostgreSQL store with Redis leases that are
// deleted every 100 ms, over 60 runs whose middle step is a sub-workflow,
// with workers reporting through any engine: every parent completes with
// its child's result, each parent has exactly one child, and the parent's
// sub-workflow step records its child's start, its end and its completion
// once each — whichever engine fired which timer, and however often an
// owner lost its lease under a decision.
func TestSubWorkflow_ThreeEnginesWhileLeasesVanishStartOneChildPerStepAndFinishItOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-engine race: skipped in -short")
	}
	ctx, engines := threeEnginesWhileLeasesVanish(t)
	var errsMu sync.Mutex
	errs := map[string]int{}
	noteErr := func(call string, err error) {
		if err != nil && ctx.Err() == nil {
			errsMu.Lock()
			errs[call+": "+string(CodeOf(err))+": "+err.Error()]++
			errsMu.Unlock()
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			errsMu.Lock()
			defer errsMu.Unlock()
			t.Logf("worker call errors: %v", errs)
		}
	})

	const runs = 60
	var parents []string
	for i := range runs {
		res, err := engines[i%3].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: withChild(inlineChild(), `{}`),
			Start: true, RunRequestID: fmt.Sprint("parent-", i)})
		require.NoError(t, err)
		parents = append(parents, res.Run.RunID)
	}
	var workers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				tasks, err := engines[w].PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: fmt.Sprint("w", w),
					Activities: []string{"act-a", "act-c1", "act-b"}, MaxTasks: 8, Wait: 50 * time.Millisecond})
				if err != nil {
					noteErr("poll", err)
					continue
				}
				for _, task := range tasks {
					_, err := engines[(w+n)%3].CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w",
						Output: json.RawMessage(`"` + task.ActionID + `"`)})
					noteErr("complete "+task.ActionID, err)
				}
			}
		}()
	}
	requireAllFinish(t, ctx, engines[0], parents)
	close(stop)
	workers.Wait()

	children := map[string]int{}
	list, err := engines[1].Queries().ListRuns(ctx, ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(t, err)
	for _, r := range list.Runs {
		if strings.HasPrefix(r.RunRequestID, "child:") {
			snap, err := engines[1].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: r.RunID})
			require.NoError(t, err)
			children[snap.ParentRunID]++
		}
	}
	for _, id := range parents {
		require.Equal(t, 1, children[id], "children of run %s", id)
		snap, err := engines[2].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
		require.NoError(t, err)
		require.Equal(t, runstate.RunCompleted, snap.Status)
		require.JSONEq(t, `"c1"`, string(snap.Step("child").Output))
		page, err := engines[0].ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: id, PageSize: 1000})
		require.NoError(t, err)
		counts := map[string]int{}
		for _, ev := range page.Events {
			if ev.StepID == "child" {
				counts[ev.Type]++
			}
		}
		for _, typ := range []string{runstate.EvStepScheduled, runstate.EvChildRunStarted, runstate.EvChildRunEnded, runstate.EvStepCompleted} {
			require.Equal(t, 1, counts[typ], "%s of run %s", typ, id)
		}
	}
}

// TestForEach_ThreeEnginesWhileLeasesVanishStartOneChildPerItemAndFinishEachOnce
// runs three engines on one PostgreSQL store with Redis leases deleted every
// 100 ms, over 12 runs whose middle step fans out over six sub-workflows,
// three at a time, with workers reporting through any engine: every parent
// completes with its children's results in item order, each item has
// exactly one child, and each item records its child's start, its end and
// its completion once (docs/semantics.md#for-each).
func TestForEach_ThreeEnginesWhileLeasesVanishStartOneChildPerItemAndFinishEachOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-engine race: skipped in -short")
	}
	ctx, engines := threeEnginesWhileLeasesVanish(t)

	const runs, items = 12, 6
	def := withChild(inlineChild(), `{"i":"${{ index }}"}`)
	def.Actions[1].ForEach, def.Actions[1].MaxConcurrency = fmt.Sprintf("lists.range(%d)", items), 3
	var parents []string
	for i := range runs {
		res, err := engines[i%3].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, RunRequestID: fmt.Sprint("fan-parent-", i)})
		require.NoError(t, err)
		parents = append(parents, res.Run.RunID)
	}
	var workers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 3 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				tasks, err := engines[w].PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: fmt.Sprint("w", w),
					Activities: []string{"act-a", "act-c1", "act-b"}, MaxTasks: 8, Wait: 50 * time.Millisecond})
				if err != nil {
					continue
				}
				for _, task := range tasks {
					out := json.RawMessage(`"` + task.ActionID + `"`)
					if task.ActionID == "c1" {
						out = task.RunInput // the child's input: its item's index
					}
					_, _ = engines[(w+n)%3].CompleteTask(ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: out})
				}
			}
		}()
	}
	requireAllFinish(t, ctx, engines[0], parents)
	close(stop)
	workers.Wait()

	children := map[string]int{}
	list, err := engines[1].Queries().ListRuns(ctx, ListRunsParams{TenantID: tenant, PageSize: 1000})
	require.NoError(t, err)
	for _, r := range list.Runs {
		if strings.HasPrefix(r.RunRequestID, "child:") {
			snap, err := engines[1].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: r.RunID})
			require.NoError(t, err)
			children[snap.ParentRunID+" "+snap.ParentStep]++
		}
	}
	want := "["
	for i := range items {
		want += fmt.Sprintf(`%s{"i":%d}`, map[bool]string{true: ",", false: ""}[i > 0], i)
	}
	want += "]"
	for _, id := range parents {
		snap, err := engines[2].GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
		require.NoError(t, err)
		require.Equal(t, runstate.RunCompleted, snap.Status)
		require.JSONEq(t, want, string(snap.Step("child").Output), "run %s: the children's results in item order", id)
		page, err := engines[0].ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: id, PageSize: 1000})
		require.NoError(t, err)
		counts := map[string]int{}
		for _, ev := range page.Events {
			counts[ev.StepID+" "+ev.Type]++
		}
		for i := range items {
			item := fmt.Sprintf("child[%d]", i)
			require.Equal(t, 1, children[id+" "+item], "children of item %s of run %s", item, id)
			for _, typ := range []string{runstate.EvStepScheduled, runstate.EvChildRunStarted, runstate.EvChildRunEnded, runstate.EvStepCompleted} {
				require.Equal(t, 1, counts[item+" "+typ], "%s of %s of run %s", typ, item, id)
			}
		}
		require.Equal(t, 1, counts["child "+runstate.EvStepFannedOut])
	}
}

// threeEnginesWhileLeasesVanish starts three engines on one PostgreSQL
// schema, sharing Redis leases that are deleted every 100 ms, each run
// until the test ends; ctx ends with the test.
// requireAllFinish waits for every run to end, and fails with where each
// that did not stands: its status and its steps', a sub-workflow step's
// child's among them.
func requireAllFinish(t *testing.T, ctx context.Context, eng *Engine, runs []string) {
	t.Helper()
	finished := func() bool {
		for _, id := range runs {
			snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
			if err != nil || !snap.Status.Terminal() {
				return false
			}
		}
		return true
	}
	if assert.Eventually(t, finished, 3*time.Minute, 100*time.Millisecond, "every parent finishes") {
		return
	}
	var where []string
	for _, id := range runs {
		where = append(where, describeRun(ctx, eng, id, 0))
	}
	t.Fatal(strings.Join(slices.DeleteFunc(where, func(s string) bool { return s == "" }), "\n"))
}

// describeRun answers where a run that has not ended stands (empty when it
// has), its children's state within.
func describeRun(ctx context.Context, eng *Engine, id string, depth int) string {
	snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
	if err != nil {
		return fmt.Sprintf("run %s: %v", id, err)
	}
	if snap.Status.Terminal() && depth == 0 {
		return ""
	}
	out := fmt.Sprintf("%srun %s %s/%s:", strings.Repeat("  ", depth), id, snap.Status, snap.Substatus)
	for _, st := range snap.Steps {
		out += fmt.Sprintf(" %s=%s", st.ActionID, st.Status)
		if st.Status == runstate.StepRunning && st.TaskID != "" {
			t, version, err := eng.records.Task(ctx, st.TaskID)
			if err != nil {
				out += fmt.Sprintf("(task %s: %v)", st.TaskID, err)
			} else {
				out += fmt.Sprintf("(task v%d %s worker %q claimed %s eager_of %q; step claim worker %q)", version, t.State, t.WorkerID,
					t.ClaimedAt.Format(time.StampMilli), t.EagerOf, st.ClaimWorker)
			}
		}
		if st.ChildRunID != "" && depth == 0 {
			out += "\n" + describeRun(ctx, eng, st.ChildRunID, depth+1)
		}
	}
	return out
}

func threeEnginesWhileLeasesVanish(t *testing.T) (context.Context, []*Engine) {
	t.Helper()
	rdb := redistest.Require(t)
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	prefix := "weft-test:" + uuid.NewString() + ":"
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var engines []*Engine
	for i := range 3 {
		eng, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: fmt.Sprintf("engine-%d", i),
			Leases: redislease.New(rdb, prefix), LeaseTTL: 1500 * time.Millisecond, PollInterval: 20 * time.Millisecond})
		require.NoError(t, err)
		engines = append(engines, eng)
		wg.Add(1)
		go func() { defer wg.Done(); eng.Run(ctx) }()
	}
	go deleteLeasesEvery(ctx, rdb, prefix, 100*time.Millisecond)
	return ctx, engines
}
