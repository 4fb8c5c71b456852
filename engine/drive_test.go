package engine

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// shortLeases gives an engine leases of 30 ms, so that a lease no decision
// uses is given up within tens of milliseconds of real time. Give it leases
// on a clock that does not move (the bundle's), so that none expires while
// a loaded machine stalls the renewals.
func shortLeases(leases lease.Manager) func(*Config) {
	return func(c *Config) { c.Leases, c.LeaseTTL = leases, 30*time.Millisecond }
}

// TestDrive_AWaitingRunHoldsNoLeaseAndNoGoroutine drives 200 runs once each
// from the background (a signal wait times out, so the run moves on to a
// step that waits for a worker): once they wait, the engine holds no lease
// and no goroutine for any of them.
func TestDrive_AWaitingRunHoldsNoLeaseAndNoGoroutine(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}), shortLeases(nil))
	def := seq("w", "b")
	def.Actions[0].Activity = ""
	def.Actions[0].WaitForSignal = &definition.SignalWait{SignalName: "never", Timeout: definition.Ms(1000)}
	def.Actions[0].OnFailure = definition.OnFailureSkip
	const runs = 200
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = b.submit(def).RunID
	}
	before := runtime.NumGoroutine()
	b.clock.Advance(2 * time.Second)
	b.tick()
	for _, id := range ids {
		snap := b.run(id)
		require.Equal(t, runstate.RunRunning, snap.Status, "the timer drove run %s on to its worker step", id)
		require.Equal(t, runstate.StepScheduled, snap.Steps[1].Status)
	}
	require.Eventually(t, func() bool { return b.eng.own.leases.Len() == 0 }, 10*time.Second, 5*time.Millisecond,
		"a run that waits for a worker keeps no lease")
	require.LessOrEqual(t, goroutinesWithin(10*time.Second, before), before, "a run that waits keeps no goroutine")
	for _, id := range ids {
		_, err := b.eng.cfg.Leases.Acquire(b.ctx, "run:"+id, "another-engine", time.Second)
		require.NoError(t, err, "the lease of waiting run %s was given back", id)
	}
}

// TestDrive_AWaitingRunIsTakenAgainByWhicheverEngineDrivesItNext: once a
// run's lease is given up, another engine can drive it, and the first one
// can drive it again after that; each new tenure bumps the fencing epoch with
// its first write.
func TestDrive_AWaitingRunIsTakenAgainByWhicheverEngineDrivesItNext(t *testing.T) {
	st := memstore.New(memstore.Config{})
	a := setupWith(t, st)
	leases := lease.NewLocal(a.clock.Now)
	a = setupWith(t, st, shortLeases(leases))
	b := setupWith(t, st, shortLeases(leases))
	runID := a.submit(seq("x")).RunID
	for i, eng := range []*Engine{a.eng, b.eng, a.eng} {
		marker := []string{"a-first", "b", "a-again"}[i]
		require.NoError(t, drive(a.ctx, eng, runID, touch(runID, marker)))
		require.Eventually(t, func() bool { return eng.own.leases.Len() == 0 }, 10*time.Second, 5*time.Millisecond)
	}
	for _, marker := range []string{"a-first", "b", "a-again"} {
		_, err := st.Get(a.ctx, store.Key("test", runID, marker))
		require.NoError(t, err, "the decision %s committed", marker)
	}
	state, _, err := a.eng.records.LoadCheckpoint(a.ctx, runID)
	require.NoError(t, err)
	require.EqualValues(t, 3, state.Epoch, "each tenure bumped the epoch once")
	require.Zero(t, a.eng.Counters().StaleCommitsRejected+b.eng.Counters().StaleCommitsRejected)
}

// TestDrive_ANewOwnerOvertakenBeforeItsFirstCommitDoesNotCommit: an engine
// takes a run's lease and reads it; before it commits, another engine (which
// got the lease too, as when Redis loses a key) commits as the run's owner.
// The first engine's decision, made again after its lost race, must see the
// epoch moved and stop, not bump it again over the new owner.
func TestDrive_ANewOwnerOvertakenBeforeItsFirstCommitDoesNotCommit(t *testing.T) {
	st := memstore.New(memstore.Config{})
	withLeases := func(c *Config) { c.Leases = lease.NewLocal(nil) }
	a := setupWith(t, st, withLeases)
	b := setupWith(t, st, withLeases) // a lease service of its own: both hold the run
	runID := a.submit(seq("x")).RunID

	read, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	late := make(chan error, 1)
	go func() {
		late <- drive(a.ctx, a.eng, runID, func(ch *change) error {
			once.Do(func() { close(read); <-resume }) // a has read the run, then stalls
			return touch(runID, "a-late")(ch)
		})
	}()
	<-read
	require.NoError(t, drive(b.ctx, b.eng, runID, touch(runID, "b-took-over")))
	close(resume)
	require.NoError(t, <-late)

	_, err := st.Get(a.ctx, store.Key("test", runID, "a-late"))
	require.ErrorIs(t, err, store.ErrNotFound, "the overtaken owner's decision committed")
	require.EqualValues(t, 1, a.eng.Counters().StaleCommitsRejected)
	state, _, err := b.eng.records.LoadCheckpoint(b.ctx, runID)
	require.NoError(t, err)
	require.EqualValues(t, 1, state.Epoch, "only the owner that committed bumped the epoch")
	require.Zero(t, a.eng.own.leases.Len(), "the stale owner gave the run up")
}

// goroutinesWithin waits up to d for the goroutine count to fall to want,
// and answers the count. (Not require.Eventually, whose condition runs in a
// goroutine of its own.)
func goroutinesWithin(d time.Duration, want int) int {
	deadline := time.Now().Add(d)
	n := runtime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// touch is a decision that writes a marker record for the run.
func touch(runID, marker string) func(*change) error {
	return func(ch *change) error { ch.put(store.Key("test", runID, marker), marker); return nil }
}

// gatedStore holds the first commit made after it is armed until opened.
type gatedStore struct {
	store.Store
	armed             atomic.Bool
	reached, openGate chan struct{}
}

func (g *gatedStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.reached)
		<-g.openGate
	}
	return g.Store.Commit(ctx, b)
}

// TestRunQueue_AReconcilerOvertakenAsOwnerReportsItsRunSkipped: reconciler
// a decides to start a queued run, but reconciler b (which holds the run's
// lease too, as when Redis loses a key) starts it first. a's decision loses
// its race and a stops as a stale owner: it must not report the run STARTED.
func TestRunQueue_AReconcilerOvertakenAsOwnerReportsItsRunSkipped(t *testing.T) {
	mem := memstore.New(memstore.Config{})
	gated := &gatedStore{Store: mem, reached: make(chan struct{}), openGate: make(chan struct{})}
	limit := func(c *Config) { c.Limits.PerTenant, c.Leases = 1, lease.NewLocal(nil) }
	a := setupWith(t, gated, limit)
	b := setupWith(t, mem, limit)
	a.submit(seq("a"))
	queued := a.submit(seq("a"))
	require.Equal(t, runstate.RunQueued, queued.Status)
	a.complete(a.poll("act-a"), `1`) // the first run ends: a slot is free

	gated.armed.Store(true)
	results := make(chan []QueueResult, 1)
	go func() {
		r, err := dequeueAndStart(a.ctx, a.eng)
		require.NoError(t, err)
		results <- r
	}()
	<-gated.reached // a decided to start the run and is about to commit
	started, err := dequeueAndStart(b.ctx, b.eng)
	require.NoError(t, err)
	require.Equal(t, []QueueResult{{RunID: queued.RunID, Status: "STARTED"}}, started)
	close(gated.openGate)
	require.Equal(t, []QueueResult{{RunID: queued.RunID, Status: "SKIPPED"}}, <-results)
	require.EqualValues(t, 1, a.eng.Counters().StaleCommitsRejected)
	require.Equal(t, 1, countEvents(b, queued.RunID, runstate.EvRunStarted))
}
