package engine

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

type awaited struct {
	snap *runstate.Snapshot
	err  error
}

// awaitInBackground starts AwaitRun of runID on e, waiting up to wait.
func awaitInBackground(ctx context.Context, e *Engine, runID string, wait time.Duration) <-chan awaited {
	out := make(chan awaited, 1)
	go func() {
		snap, err := e.AwaitRun(ctx, AwaitParams{TenantID: tenant, RunID: runID, Wait: wait})
		out <- awaited{snap, err}
	}()
	return out
}

func requireAwaited(t *testing.T, ch <-chan awaited) *runstate.Snapshot {
	t.Helper()
	select {
	case got := <-ch:
		require.NoError(t, got.err)
		return got.snap
	case <-time.After(10 * time.Second):
		t.Fatal("AwaitRun did not answer")
		return nil
	}
}

func TestAwaitRun_AnswersOnceTheRunIsTerminalWokenByItsLastAppend(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}), func(c *Config) { c.PollInterval = time.Hour })
	run := b.submit(seq("a", "b"))
	done := awaitInBackground(b.ctx, b.eng, run.RunID, time.Hour)

	b.complete(b.poll("act-a"), `{}`)
	select {
	case got := <-done:
		t.Fatalf("answered before the run was terminal: %v %v", got.snap.Status, got.err)
	default:
	}
	b.complete(b.poll("act-b"), `{"b":1}`)
	snap := requireAwaited(t, done) // no interval read in an hour: the append woke it
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.JSONEq(t, `{"b":1}`, string(snap.Steps[1].Output))
}

// AwaitRun waits on the run's end (dispatch.RunEndKey): this engine's commits
// wake it when they leave the run terminal, not at each step before.
func TestAwaitRun_IsWokenByTheCommitThatEndsTheRunNotByEachStep(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	end, release := b.eng.dispatch.Waker().Wait(dispatch.RunEndKey(run.RunID))
	defer release()
	log, releaseLog := b.eng.Wakes().EventsAppended(run.RunID)
	defer releaseLog()

	b.complete(b.poll("act-a"), `{}`)
	require.True(t, isClosed(log), "the step's append wakes the run's log")
	require.False(t, isClosed(end), "a step that leaves the run running does not wake its end")
	b.complete(b.poll("act-b"), `{}`)
	require.True(t, isClosed(end), "the commit that completes the run wakes its end")
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestAwaitRun_ZeroWaitAnswersTheRunAsItIs(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	snap, err := b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Equal(t, runstate.RunRunning, snap.Status)
}

func TestAwaitRun_ATerminalRunIsAnsweredAtOnce(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `{}`)
	snap := requireAwaited(t, awaitInBackground(b.ctx, b.eng, run.RunID, time.Hour))
	require.Equal(t, runstate.RunCompleted, snap.Status)
}

func TestAwaitRun_UnknownOrAnotherTenantsRunIsNotFound(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	_, err := b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: tenant, RunID: "no-such-run", Wait: time.Hour})
	require.Equal(t, CodeNotFound, CodeOf(err))
	_, err = b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: "tenant-b", RunID: run.RunID, Wait: time.Hour})
	require.Equal(t, CodeNotFound, CodeOf(err))
}

func TestAwaitRun_EndsWithTheCallersContext(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	ctx, cancel := context.WithCancel(b.ctx)
	done := awaitInBackground(ctx, b.eng, run.RunID, time.Hour)
	cancel()
	select {
	case got := <-done:
		require.ErrorIs(t, got.err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("AwaitRun outlived its caller")
	}
}

func TestAwaitRun_ARunAnotherEngineCompletesIsNoticedByTheIntervalRead(t *testing.T) {
	st := memstore.New(memstore.Config{})
	b := setupWith(t, st, func(c *Config) { c.PollInterval = 10 * time.Millisecond })
	other, err := New(Config{Store: st})
	require.NoError(t, err)
	run := b.submit(seq("a"))
	done := awaitInBackground(b.ctx, b.eng, run.RunID, time.Hour)

	tasks, err := other.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w2", Activities: []string{"act-a"}})
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	_, err = other.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "w2", Output: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, requireAwaited(t, done).Status)
}

// checkpointReads counts the store reads of one run's checkpoint.
type checkpointReads struct {
	store.Store
	key atomic.Value // []byte
	n   atomic.Int64
}

func (s *checkpointReads) Get(ctx context.Context, key []byte) (store.Item, error) {
	if k, ok := s.key.Load().([]byte); ok && string(k) == string(key) {
		s.n.Add(1)
	}
	return s.Store.Get(ctx, key)
}

// The looks of one wait, made one at a time (a waiter in the background
// would race the commits: an append between taking its channel and looking
// wakes it for a commit it has already seen, and its next look reads).
func TestAwaitRun_ReadsTheStoreOnceThenOnlyWhenNoCommitOfThisEngineAdvancedTheRun(t *testing.T) {
	st := &checkpointReads{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, st)
	other := setupWith(t, st.Store)
	run := b.submit(seq("a", "b"))
	st.key.Store(runlog.CheckpointKey(run.RunID))

	_, seen, err := b.eng.records.LookAgain(b.ctx, run.RunID, 0)
	require.NoError(t, err)
	require.EqualValues(t, 1, st.n.Load(), "the first look reads the store")

	b.complete(b.poll("act-a"), `{}`) // this engine's commits advance its cache
	reads := st.n.Load()
	state, advanced, err := b.eng.records.LookAgain(b.ctx, run.RunID, seen)
	require.NoError(t, err)
	require.Equal(t, reads, st.n.Load(), "a look after this engine's commit takes it from the cache")
	require.NotEqual(t, seen, advanced)
	require.Equal(t, runstate.StepSucceeded, state.Step("a").Status)

	other.complete(other.poll("act-b"), `{}`) // another engine's commit: this one's cache is behind
	state, _, err = b.eng.records.LookAgain(b.ctx, run.RunID, advanced)
	require.NoError(t, err)
	require.Equal(t, reads+1, st.n.Load(), "with the cache not advanced, the look reads the store")
	require.Equal(t, runstate.RunCompleted, state.Status)
}

// Each wait on a run's log holds its key in the waker only while it waits:
// an AwaitRun that answers, a long poll that ends and a released watch leave
// nothing behind, however many runs were waited on.
func TestAwaitRun_WaitsLeaveNoKeyBehind(t *testing.T) {
	b := setup(t)
	for range 3 {
		run := b.submit(seq("a"))
		b.complete(b.poll("act-a"), `{}`)
		snap, err := b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: tenant, RunID: run.RunID, Wait: time.Second})
		require.NoError(t, err)
		require.Equal(t, runstate.RunCompleted, snap.Status)
	}
	pending := b.submit(seq("a"))
	snap, err := b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: tenant, RunID: pending.RunID})
	require.NoError(t, err)
	require.NotEqual(t, runstate.RunCompleted, snap.Status)
	b.pollNone("act-none")

	_, release := b.eng.Wakes().EventsAppended(pending.RunID)
	require.Equal(t, 1, b.eng.dispatch.Waker().Keys(), "a watch holds its run's key while it waits")
	release()
	release() // a second release changes nothing
	require.Zero(t, b.eng.dispatch.Waker().Keys(), "no key is left behind")
}

// A wait that starts from the version its submission committed
// (SubmitResult.Version, as SubmitRun with await does) takes its first look
// from the engine's cache, and the run's end from the commit that ended it:
// no checkpoint is read back.
func TestAwaitRun_FromItsSubmissionsVersionReadsNoCheckpoint(t *testing.T) {
	st := &checkpointReads{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, st, func(c *Config) { c.PollInterval = time.Hour })
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a", "b"), Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	require.NotZero(t, res.Version, "the submission's commit answered the run")
	st.key.Store(runlog.CheckpointKey(res.Run.RunID))
	done := make(chan awaited, 1)
	go func() {
		snap, err := b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: tenant, RunID: res.Run.RunID, Wait: time.Hour, Seen: res.Version})
		done <- awaited{snap, err}
	}()

	b.complete(b.poll("act-a"), `{}`)
	b.complete(b.poll("act-b"), `{"b":2}`)
	snap := requireAwaited(t, done)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.JSONEq(t, `{"b":2}`, string(snap.Steps[1].Output))
	require.Zero(t, st.n.Load(), "no look read the run's checkpoint")
}

// refusingStore refuses, once armed, the next commit without applying it.
type refusingStore struct {
	checkpointReads
	armed atomic.Bool
	read  chan struct{} // closed at the first read of key
	once  atomic.Bool
}

func (s *refusingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if s.armed.CompareAndSwap(true, false) {
		return nil, errors.New("commit refused")
	}
	return s.Store.Commit(ctx, b)
}

func (s *refusingStore) Get(ctx context.Context, key []byte) (store.Item, error) {
	if k, ok := s.key.Load().([]byte); ok && string(k) == string(key) && s.once.CompareAndSwap(false, true) {
		close(s.read)
	}
	return s.checkpointReads.Get(ctx, key)
}

// Only a committed checkpoint answers a wait: the state a decision made but
// failed to commit (here, the run's end) is never seen, even by a wait that
// starts from its submission's version and would take the engine's cache.
func TestAwaitRun_NeverAnswersAStateWhoseCommitFailed(t *testing.T) {
	st := &refusingStore{checkpointReads: checkpointReads{Store: memstore.New(memstore.Config{})}, read: make(chan struct{})}
	b := setupWith(t, st, func(c *Config) { c.PollInterval = time.Millisecond }) // looks after the first read the store
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	task := b.poll("act-a")
	st.armed.Store(true)
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w1", Output: json.RawMessage(`{"v":"lost"}`)})
	require.Error(t, err, "the commit that would end the run failed")

	state, _, err := b.eng.records.LookSince(b.ctx, res.Run.RunID, res.Version)
	require.NoError(t, err)
	require.Equal(t, runstate.RunRunning, state.Status, "a look after the failed commit sees the stored run")

	st.key.Store(runlog.CheckpointKey(res.Run.RunID))
	done := make(chan awaited, 1)
	go func() {
		snap, err := b.eng.AwaitRun(b.ctx, AwaitParams{TenantID: tenant, RunID: res.Run.RunID, Wait: time.Hour, Seen: res.Version})
		done <- awaited{snap, err}
	}()
	select {
	case <-st.read: // the wait looked, and looks again at the store
	case got := <-done:
		t.Fatalf("answered a run whose ending commit failed: %v %v", got.snap.Status, got.err)
	case <-time.After(10 * time.Second):
		t.Fatal("AwaitRun did not look")
	}
	b.complete(task, `{"v":"kept"}`) // the report again, committed this time
	snap := requireAwaited(t, done)
	require.Equal(t, runstate.RunCompleted, snap.Status)
	require.JSONEq(t, `{"v":"kept"}`, string(snap.Steps[0].Output))
}
