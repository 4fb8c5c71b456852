package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// killSwitch stands between an engine and its store. At commit number killAt
// it lets the commit through and then loses the acknowledgement; with die set
// the process is dead from then on and no later call of it reaches the store.
type killSwitch struct {
	store.Store
	mu      sync.Mutex
	commits int
	killAt  int
	die     bool
	dead    bool
	fired   bool
}

var errProcessDead = errors.New("process killed")

func (k *killSwitch) Get(ctx context.Context, key []byte) (store.Item, error) {
	if k.isDead() {
		return store.Item{}, errProcessDead
	}
	return k.Store.Get(ctx, key)
}

func (k *killSwitch) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if k.isDead() {
		return nil, errProcessDead
	}
	return k.Store.Scan(ctx, p)
}

func (k *killSwitch) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	k.mu.Lock()
	if k.dead {
		k.mu.Unlock()
		return nil, errProcessDead
	}
	k.commits++
	hit := k.commits == k.killAt
	k.mu.Unlock()
	res, err := k.Store.Commit(ctx, b)
	if err != nil || !hit {
		return res, err
	}
	k.mu.Lock()
	k.fired, k.dead = true, k.die
	k.mu.Unlock()
	return nil, &store.OutcomeUnknownError{Cause: errors.New("acknowledgement lost at the crash point")}
}

func (k *killSwitch) isDead() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dead
}

// Close leaves the inner store open: a killed process's store is reopened by the next one.
func (k *killSwitch) Close() error { return nil }

// crashBackend opens a store and reopens the same data as a restarted process would.
type crashBackend struct {
	name   string
	open   func(t *testing.T) (first store.Store, reopen func(old store.Store) store.Store)
	skipCI bool
}

func crashBackends() []crashBackend {
	return []crashBackend{
		{name: "memory", open: func(t *testing.T) (store.Store, func(store.Store) store.Store) {
			st := memstore.New(memstore.Config{})
			return st, func(old store.Store) store.Store { return old }
		}},
		{name: "pebble", open: func(t *testing.T) (store.Store, func(store.Store) store.Store) {
			dir := t.TempDir()
			openDir := func() store.Store {
				st, err := pebblestore.Open(dir, pebblestore.Config{})
				require.NoError(t, err)
				return st
			}
			first := openDir()
			t.Cleanup(func() { _ = first.Close() })
			return first, func(old store.Store) store.Store {
				require.NoError(t, old.Close())
				st := openDir()
				first = st
				return st
			}
		}},
		{name: "postgresql", open: func(t *testing.T) (store.Store, func(store.Store) store.Store) {
			schema := sqltest.NewSchema(t)
			return sqltest.Open(t, schema), func(store.Store) store.Store { return sqltest.Open(t, schema) }
		}},
	}
}

const crashSteps = 5

// crashOutcome is what one interrupted run ended as.
type crashOutcome struct {
	commits int
	fired   bool
}

// driveCrashRun runs a five-step workflow to the end with a worker that
// completes every task it gets, interrupting at commit killAt (0: never).
func driveCrashRun(t *testing.T, backend crashBackend, killAt int, die bool) crashOutcome {
	t.Helper()
	out, _ := driveCrashRunWith(t, backend, killAt, die, completeEach)
	return out
}

// crashWorker completes the tasks a poll of eng answered, and answers how
// many further tasks were handed to it meanwhile.
type crashWorker func(t *testing.T, eng *Engine, tasks []*Task, activities []string) (handedOff int)

// completeEach completes each task in turn.
func completeEach(_ *testing.T, eng *Engine, tasks []*Task, _ []string) int {
	for _, task := range tasks {
		_, _ = eng.CompleteTask(context.Background(), ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w",
			Output: json.RawMessage(fmt.Sprintf(`{"step":%q}`, task.ActionID))})
	}
	return 0
}

// driveCrashRunWith runs a five-step workflow to the end with work as its
// worker, interrupting at commit killAt (0: never), and answers how many
// tasks were handed over.
func driveCrashRunWith(t *testing.T, backend crashBackend, killAt int, die bool, work crashWorker) (crashOutcome, int) {
	t.Helper()
	ctx := context.Background()
	inner, reopen := backend.open(t)
	clk := clock.NewManual(testStart)
	ks := &killSwitch{Store: inner, killAt: killAt, die: die}
	eng, err := New(Config{Store: ks, Clock: clk})
	require.NoError(t, err)
	def := seq("s1", "s2", "s3", "s4", "s5")
	var activities []string
	for _, a := range def.Actions {
		activities = append(activities, a.Activity)
	}
	var runID string
	total, handedOff := 0, 0
	for range 400 {
		if ks.isDead() {
			total += ks.commits
			inner = reopen(inner)
			ks = &killSwitch{Store: inner}
			eng, err = New(Config{Store: ks, Clock: clk})
			require.NoError(t, err)
			ks.fired = true
		}
		if runID == "" {
			res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, RunRequestID: "crash", Start: true, SubmittedBy: "alice"})
			if err == nil {
				runID = res.Run.RunID
			}
			continue
		}
		_ = eng.Tick(ctx)
		snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
		if err == nil && snap.Status.Terminal() {
			break
		}
		tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 5})
		if len(tasks) == 0 {
			clk.Advance(definition.DefaultAttemptTimeout.D() + time.Second)
			continue
		}
		handedOff += work(t, eng, tasks, activities)
	}
	require.NotEmpty(t, runID, "the run was never submitted")
	requireEachResultRecordedOnce(t, eng, runID)
	return crashOutcome{commits: total + ks.commits, fired: ks.fired}, handedOff
}

// requireEachResultRecordedOnce checks the run completed with every step's
// result recorded exactly once, and nothing recorded lost.
func requireEachResultRecordedOnce(t *testing.T, eng *Engine, runID string) {
	t.Helper()
	ctx := context.Background()
	snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: runID})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	page, err := eng.ListEvents(ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(t, err)
	completed := map[string]int{}
	for i, ev := range page.Events {
		require.Equal(t, uint64(i+1), ev.Seq, "run_seq is strictly increasing without holes")
		if ev.Type == runstate.EvStepCompleted {
			completed[ev.StepID]++
		}
	}
	for _, st := range snap.Steps {
		require.Equal(t, 1, completed[st.ActionID], "StepCompleted of %s", st.ActionID)
		succeeded := 0
		for _, a := range st.Attempts {
			if a.Outcome == runstate.AttemptSucceeded {
				succeeded++
			}
		}
		require.Equal(t, 1, succeeded, "succeeded attempts of %s", st.ActionID)
		require.JSONEq(t, fmt.Sprintf(`{"step":%q}`, st.ActionID), string(st.Output))
	}
}

func TestCrash_EveryCommitPointOfAFiveStepRunRecordsEachResultOnce(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			clean := driveCrashRun(t, backend, 0, false)
			require.Greater(t, clean.commits, 2*crashSteps)
			for _, mode := range []struct {
				name string
				die  bool
			}{{"store fails after commit", false}, {"process killed after commit", true}} {
				t.Run(mode.name, func(t *testing.T) {
					for killAt := 1; killAt <= clean.commits; killAt++ {
						out := driveCrashRun(t, backend, killAt, mode.die)
						require.True(t, out.fired, "crash point %d was never reached", killAt)
					}
				})
			}
		})
	}
}
