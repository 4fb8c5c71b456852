package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// loopback is an in-process Notifier: what its engine publishes wakes the
// engines linked to it, as Redis pub/sub carries it between processes.
type loopback struct {
	mu        sync.Mutex
	published [][]string
	to        []*Engine
}

func (l *loopback) Publish(keys []string) {
	l.mu.Lock()
	l.published = append(l.published, slices.Clone(keys))
	to := l.to
	l.mu.Unlock()
	for _, e := range to {
		e.Wakes().Wake(keys...)
	}
}

func (l *loopback) link(e *Engine) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.to = append(l.to, e)
}

// reset forgets what was published so far.
func (l *loopback) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.published = nil
}

// keys answers every key published so far.
func (l *loopback) keys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Concat(l.published...)
}

// twoEngines answers two engines sharing st as two weftd processes would
// (cas-required), with a poll interval no test waits for: only a wake-up can
// end a long poll early. notifiers, when given, are A's and B's.
func twoEngines(t *testing.T, st store.Store, notifiers ...Notifier) (a, b *Engine) {
	t.Helper()
	engines := make([]*Engine, 2)
	for i, owner := range []string{"engine-a", "engine-b"} {
		cfg := Config{Store: st, Ownership: CASRequired, Owner: owner, PollInterval: time.Hour}
		if len(notifiers) > i {
			cfg.Notifier = notifiers[i]
		}
		eng, err := New(cfg)
		require.NoError(t, err)
		engines[i] = eng
	}
	return engines[0], engines[1]
}

// hasWaiter reports whether a long poll or a watch of e waits on key.
func hasWaiter(e *Engine, key string) bool {
	return e.dispatch.Waker().Waiting(key)
}

type pollResult struct {
	tasks []*Task
	err   error
	took  time.Duration
}

// startLongPoll starts a long poll of activity on e and answers once it waits
// (its first look at the store found nothing): a task made ready after that
// reaches it only through a wake-up or its poll interval.
func startLongPoll(t *testing.T, e *Engine, activity string, wait time.Duration) <-chan pollResult {
	t.Helper()
	out := make(chan pollResult, 1)
	go func() {
		began := time.Now()
		tasks, err := e.PollTasks(context.Background(), PollParams{TenantID: tenant, WorkerID: "w",
			Activities: []string{activity}, Wait: wait})
		out <- pollResult{tasks, err, time.Since(began)}
	}()
	require.Eventually(t, func() bool { return hasWaiter(e, dispatch.QueueKey(tenant, definition.DefaultQueue)) }, 10*time.Second, time.Millisecond)
	time.Sleep(100 * time.Millisecond) // past the poll's first scan of the empty queue
	return out
}

// submitOn submits a run of one step (activity) on e, started or not.
func submitOn(t *testing.T, e *Engine, activity string, start bool) string {
	t.Helper()
	def := definition.Definition{PlanID: "wake", PlanVersion: "1", Actions: []definition.Action{{ID: "a", Order: 1, Activity: activity}}}
	res, err := e.SubmitRun(context.Background(), SubmitParams{TenantID: tenant, Definition: def, Start: start, SubmittedBy: "alice"})
	require.NoError(t, err)
	return res.Run.RunID
}

// requireHandedOff checks that a long poll with a long wait returned runID's
// task well before its wait ended.
func requireHandedOff(t *testing.T, polled <-chan pollResult, runID string, wait time.Duration) {
	t.Helper()
	select {
	case res := <-polled:
		require.NoError(t, res.err)
		require.Len(t, res.tasks, 1, "the poll ended without the task another engine made ready")
		require.Equal(t, runID, res.tasks[0].RunID)
		require.Less(t, res.took, wait/2, "the poll returned only at the end of its wait")
	case <-time.After(wait + 10*time.Second):
		t.Fatal("the long poll did not return")
	}
}

func TestWake_ANotifierCarriesACommitsWakeupsToAnotherEngine(t *testing.T) {
	t.Parallel()
	const wait = 20 * time.Second
	toB := &loopback{}
	a, b := twoEngines(t, memstore.New(memstore.Config{}), toB)
	toB.link(b)

	t.Run("a long poll returns the task another engine made ready", func(t *testing.T) {
		polled := startLongPoll(t, b, "act-poll", wait)
		runID := submitOn(t, a, "act-poll", true)
		requireHandedOff(t, polled, runID, wait)
	})
	t.Run("an event watch hears another engine's append", func(t *testing.T) {
		runID := submitOn(t, a, "act-watch", false)
		appended, release := b.Wakes().EventsAppended(runID)
		defer release()
		_, err := a.StartRun(context.Background(), StartParams{TenantID: tenant, RunID: runID, Actor: "alice"})
		require.NoError(t, err)
		select {
		case <-appended:
		case <-time.After(wait):
			t.Fatal("B's watch did not hear A's append")
		}
	})
}

// TestWake_WithoutANotifierALongPollWaitsForItsInterval is the control of the
// tests above: the same hand-off without a Notifier is seen only when the
// poll looks at the store again, here at the end of its wait.
func TestWake_WithoutANotifierALongPollWaitsForItsInterval(t *testing.T) {
	t.Parallel()
	const wait = time.Second
	a, b := twoEngines(t, memstore.New(memstore.Config{}))
	polled := startLongPoll(t, b, "act-a", wait)
	runID := submitOn(t, a, "act-a", true)
	res := <-polled
	require.NoError(t, res.err)
	require.GreaterOrEqual(t, res.took, wait, "nothing woke the poll before its wait ended")
	require.Len(t, res.tasks, 1, "its last look at the store finds the task")
	require.Equal(t, runID, res.tasks[0].RunID)
}

func TestWake_ACommitPublishesTheKeysItWokeAndANoOpNothing(t *testing.T) {
	t.Parallel()
	rec := &loopback{}
	a, _ := twoEngines(t, memstore.New(memstore.Config{}), rec)
	created := submitOn(t, a, "act-a", true)
	require.Contains(t, rec.keys(), dispatch.QueueKey(tenant, definition.DefaultQueue), "the queue that gained a task")
	require.NotContains(t, rec.keys(), dispatch.RunKey(created), "a run created by the commit has no watchers yet")

	runID := submitOn(t, a, "act-a", false)
	rec.reset()
	_, err := a.StartRun(context.Background(), StartParams{TenantID: tenant, RunID: runID, Actor: "alice"})
	require.NoError(t, err)
	require.Contains(t, rec.keys(), dispatch.QueueKey(tenant, definition.DefaultQueue), "the queue that gained a task")
	require.Contains(t, rec.keys(), dispatch.RunKey(runID), "the run whose log grew")

	before := len(rec.keys())
	_, err = a.StartRun(context.Background(), StartParams{TenantID: tenant, RunID: runID, Actor: "alice"})
	require.NoError(t, err, "starting a started run changes nothing")
	require.Len(t, rec.keys(), before, "a decision that commits nothing publishes nothing")
}
