package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/internal/retention"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/lease"
	"github.com/weft-dev/weft/lease/redislease"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// persistedPrefixes are the key prefixes of docs/persisted-format.md: the
// scans below read the whole store, and check that these are all they met.
var persistedPrefixes = []string{"wf", "rr", "ri", "rs", "pt", "op", "task", "tmr", "sig", "sigr", "sigx",
	"rec", "ob", "obr", "dlq", "slot", "rq", "mc", "sch", "rx", "wk", "sat", "sx", "tmd", "pl"}

// storedKeys answers every key in the store with its value.
func storedKeys(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	var after []byte
	for {
		res, err := st.Scan(context.Background(), &store.ScanParams{After: after, Limit: store.MaxScanLimit})
		require.NoError(t, err)
		for _, it := range res.Items {
			out[string(it.Key)] = string(it.Value)
		}
		if res.Next == nil {
			return out
		}
		after = res.Next
	}
}

// recordsOf answers the stored records that belong to a run: its id is a
// component of the key (or begins a task id), or the record's value.
func recordsOf(t *testing.T, keys map[string]string, runID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range keys {
		parts, err := store.SplitKey([]byte(k))
		require.NoError(t, err)
		require.Contains(t, persistedPrefixes, parts[0], "key %q has a prefix docs/persisted-format.md does not list", k)
		mine := v == runID
		for _, p := range parts[1:] {
			mine = mine || p == runID || strings.HasPrefix(p, runID+"/")
		}
		if mine {
			out[k] = v
		}
	}
	return out
}

// prefixesOf answers the distinct prefixes of keys.
func prefixesOf(keys map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range keys {
		out[strings.SplitN(k, ":", 2)[0]] = true
	}
	return out
}

// withRetention configures the deployment's retention.
func withRetention(d time.Duration) func(*Config) { return func(c *Config) { c.Retention = d } }

// richRun runs a definition that leaves a record of every kind a finished
// run can own: a retried activity (two tasks, a backoff), a reconciled one,
// a signal wait, a manual step, a signal never consumed, and a workflow
// timeout whose timer outlives the run.
func richRun(t *testing.T, b *bundle, retention definition.Duration) string {
	t.Helper()
	def := seq("a", "r", "s", "m")
	def.Retention = retention
	def.Timeout = definition.Duration(20 * 24 * time.Hour)
	def.Actions[0].Retry = definition.RetryPolicy{MaxAttempts: 3, Strategy: definition.BackoffConstant, InitialBackoff: definition.Ms(1000)}
	def.Actions[2].Activity = ""
	def.Actions[2].WaitForSignal = &definition.SignalWait{SignalName: "go", Timeout: definition.Duration(48 * time.Hour)}
	def.Actions[3].Activity = ""
	def.Actions[3].Completion = definition.CompletionManual
	res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice",
		RunRequestID: fmt.Sprint("rich-", b.clock.Now().UnixNano())})
	require.NoError(t, err)
	run := res.Run
	signal := func(name, id string) {
		_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: name, SignalID: &id, Payload: json.RawMessage(`{}`)})
		require.NoError(t, err)
	}
	signal("never-consumed", "x-1")
	b.fail(b.poll("act-a"), definition.ErrorTransient)
	b.clock.Advance(2 * time.Second)
	b.tick()
	b.complete(b.poll("act-a"), `{}`)
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w1", Activities: []string{"act-r"}, Verifiable: []string{"act-r"}})
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	b.complete(tasks[0], `{}`)
	signal("go", "go-1")
	token := b.run(run.RunID).Step("m").CompletionToken
	_, err = b.eng.CompleteManualAction(b.ctx, ManualCompletionParams{TenantID: tenant, RunID: run.RunID, ActionID: "m", CompletionToken: token,
		Outcome: runstate.ManualSucceeded, ActorUserID: "bob", CompletedAt: b.clock.Now()})
	require.NoError(t, err)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	return run.RunID
}

// TestRetention_RemovesEveryRecordOfAnExpiredRunAndNothingElse: once its
// retention has passed, the pass removes a finished run's every record —
// found by scanning the whole store — and leaves a running run, and a
// finished one not yet expired, exactly as they were.
func TestRetention_RemovesEveryRecordOfAnExpiredRunAndNothingElse(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t), withRetention(24*time.Hour))
			expired := richRun(t, b, 0)
			b.clock.Advance(time.Hour)
			kept := richRun(t, b, 0)
			running := b.submit(seq("a", "b")).RunID
			b.complete(b.poll("act-a"), `{}`)
			id := "pending"
			_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: running, SignalName: "later", SignalID: &id})
			require.NoError(t, err)
			// Past a's deadline, the running run's deadline index entry, whose
			// claim reported, goes (fireDeadlines): the tick below is then
			// retention's alone.
			b.clock.Advance(10 * time.Minute)
			b.tick()

			before := storedKeys(t, b.store)
			mine := recordsOf(t, before, expired)
			for _, p := range []string{"wf", "rr", "rs", "task", "tmr", "sig", "sigr", "sigx", "rec", "mc", "rx"} {
				require.True(t, prefixesOf(mine)[p], "the finished run has no %s: record; the test would prove nothing about it", p)
			}
			b.clock.Advance(24*time.Hour - 30*time.Minute) // the first run expired, the second not yet
			b.tick()

			after := storedKeys(t, b.store)
			require.Empty(t, recordsOf(t, after, expired), "records of the expired run survived retention")
			require.EqualValues(t, 1, b.eng.Counters().RunsRemoved)
			for k, v := range before {
				if strings.HasPrefix(k, "wk:") {
					continue // a poller record: the same tick refreshes or forgets it (pollers.go), retention never touches it
				}
				if _, gone := mine[k]; !gone {
					require.Contains(t, after, k, "retention removed a record that is not the expired run's")
					require.Equal(t, v, after[k], "retention changed %s", k)
				}
			}
			_, err = b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: expired})
			require.Equal(t, CodeNotFound, CodeOf(err))
			require.Equal(t, runstate.RunCompleted, b.run(kept).Status)
			require.Equal(t, runstate.RunRunning, b.run(running).Status)
		})
	}
}

// TestRetention_ADefinitionsOwnRetentionWinsOverTheDefault: a definition's
// retention decides when its runs expire, shorter or longer than the
// deployment's.
func TestRetention_ADefinitionsOwnRetentionWinsOverTheDefault(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t), withRetention(24*time.Hour))
			finish := func(retention time.Duration) string {
				def := seq("a")
				def.Retention = definition.Duration(retention)
				id := b.submit(def).RunID
				b.complete(b.poll("act-a"), `{}`)
				return id
			}
			short, deflt, long := finish(time.Hour), finish(0), finish(72*time.Hour)
			for id, keep := range map[string]time.Duration{short: time.Hour, deflt: 24 * time.Hour, long: 72 * time.Hour} {
				snap := b.run(id)
				require.Equal(t, snap.CompletedAt.Add(keep), snap.RetainUntil, "a run's expiry is its end plus its retention")
			}
			exists := func(id string) bool {
				_, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: id})
				return err == nil
			}
			b.clock.Advance(2 * time.Hour)
			b.tick()
			require.Equal(t, []bool{false, true, true}, []bool{exists(short), exists(deflt), exists(long)})
			b.clock.Advance(24 * time.Hour)
			b.tick()
			require.Equal(t, []bool{false, false, true}, []bool{exists(short), exists(deflt), exists(long)})
			b.clock.Advance(48 * time.Hour)
			b.tick()
			require.False(t, exists(long))
		})
	}
}

// TestRetention_NeverRemovesARunThatIsNotFinished: an unfinished run has no
// expiry; a stray index entry naming it removes only the entry.
func TestRetention_NeverRemovesARunThatIsNotFinished(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}), withRetention(time.Hour))
	run := b.submit(seq("a")).RunID
	require.Empty(t, b.eng.storedExpiries(t), "an unfinished run is not indexed for retention")
	stray := retention.ExpiryKey(b.clock.Now(), run)
	_, err := b.store.Commit(b.ctx, &store.Batch{Ops: []store.Op{store.Put(stray, nil)}})
	require.NoError(t, err)
	b.clock.Advance(time.Minute)
	b.tick()
	require.Equal(t, runstate.RunRunning, b.run(run).Status)
	require.Empty(t, b.eng.storedExpiries(t), "the stray entry is gone")
	b.complete(b.poll("act-a"), `{}`)
	require.Len(t, b.eng.storedExpiries(t), 1, "the run that ended is indexed once")
}

// storedExpiries answers the rx: index entries.
func (e *Engine) storedExpiries(t *testing.T) []string {
	t.Helper()
	res, err := e.store.Scan(context.Background(), &store.ScanParams{Prefix: keyspace.Expiry.KeyPrefix()})
	require.NoError(t, err)
	var out []string
	for _, it := range res.Items {
		out = append(out, string(it.Key))
	}
	return out
}

// TestRetention_KeepForeverIndexesNothing: with RetainForever a finished run
// is not indexed and stays; DeleteRun still removes it.
func TestRetention_KeepForeverIndexesNothing(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}), withRetention(RetainForever))
	run := b.submit(seq("a")).RunID
	b.complete(b.poll("act-a"), `{}`)
	require.Empty(t, b.eng.storedExpiries(t))
	b.clock.Advance(10 * 365 * 24 * time.Hour)
	b.tick()
	require.Equal(t, runstate.RunCompleted, b.run(run).Status)
	res, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run})
	require.NoError(t, err)
	require.True(t, res.Removed)
	require.Empty(t, recordsOf(t, storedKeys(t, b.store), run))
}

// TestRetention_ARunWaitsUntilItsEventsAreExported: with the outbox on, an
// expired run whose events are still in the outbox keeps every record and
// stays visible; once they are exported it goes.
func TestRetention_ARunWaitsUntilItsEventsAreExported(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}), withRetention(time.Hour), func(c *Config) { c.Outbox = true })
	run := b.submit(seq("a")).RunID
	b.complete(b.poll("act-a"), `{}`)
	b.clock.Advance(2 * time.Hour)
	b.tick()
	require.Equal(t, runstate.RunCompleted, b.run(run).Status, "a run with events not yet exported was removed")
	outbox := map[string]string{}
	for k, v := range recordsOf(t, storedKeys(t, b.store), run) {
		if strings.HasPrefix(k, "ob:") {
			outbox[k] = v
		}
	}
	require.NotEmpty(t, outbox)
	var ops []store.Op
	for k := range outbox {
		ops = append(ops, store.Delete([]byte(k))) // what the export worker does once the bus acknowledged
	}
	_, err := b.store.Commit(b.ctx, &store.Batch{Ops: ops})
	require.NoError(t, err)
	b.clock.Advance(ExportWait)
	b.tick()
	require.Empty(t, recordsOf(t, storedKeys(t, b.store), run))
}

// signalledRun answers a cancelled run with n accepted signals: more
// records than one removal batch deletes.
func signalledRun(t *testing.T, eng *Engine, n int) string {
	t.Helper()
	ctx := context.Background()
	res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	runID := res.Run.RunID
	for i := range n {
		id := fmt.Sprint("s-", i)
		_, err := eng.SignalRun(ctx, SignalParams{TenantID: tenant, RunID: runID, SignalName: "note", SignalID: &id})
		require.NoError(t, err)
	}
	_, err = eng.CancelRun(ctx, ControlParams{TenantID: tenant, RunID: runID, Reason: "done"})
	require.NoError(t, err)
	return runID
}

// TestRetention_ALargeRunGoesInBatchesAndIsInvisibleFromTheFirst: a run with
// more records than one batch is hidden by the first batch and removed over
// several.
func TestRetention_ALargeRunGoesInBatchesAndIsInvisibleFromTheFirst(t *testing.T) {
	st := &hookedStore{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, st, withRetention(time.Hour))
	run := signalledRun(t, b.eng, 450)
	require.Greater(t, len(recordsOf(t, storedKeys(t, b.store), run)), 2*retention.BatchKeys)
	b.clock.Advance(2 * time.Hour)
	st.afterCommit = func(n int) {
		if n == 1 {
			_, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: run})
			require.Equal(t, CodeNotFound, CodeOf(err), "the run is visible after the first removal batch")
			_, err = b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: run})
			require.Equal(t, CodeNotFound, CodeOf(err))
			list, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant})
			require.NoError(t, err)
			require.Empty(t, list.Runs)
		}
	}
	st.commits = 0
	b.tick()
	require.GreaterOrEqual(t, st.commits, 3, "the removal took more than one batch")
	require.Empty(t, recordsOf(t, storedKeys(t, b.store), run))
}

// hookedStore counts commits and calls afterCommit after each.
type hookedStore struct {
	store.Store
	mu          sync.Mutex
	commits     int
	afterCommit func(n int)
}

func (c *hookedStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	res, err := c.Store.Commit(ctx, b)
	if err != nil {
		return res, err
	}
	c.mu.Lock()
	c.commits++
	n, hook := c.commits, c.afterCommit
	c.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return res, err
}

// TestRetention_ACrashInTheMiddleOfARemovalIsResumed: at every commit of a
// multi-batch removal the store loses the acknowledgement, or the process
// dies; the next engine's pass finishes the removal, and the other run is
// untouched.
func TestRetention_ACrashInTheMiddleOfARemovalIsResumed(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			clean := removeWithCrash(t, backend, 0, false)
			require.GreaterOrEqual(t, clean, 2, "the removal takes more than one batch")
			for _, die := range []bool{false, true} {
				t.Run(fmt.Sprint("die=", die), func(t *testing.T) {
					for killAt := 1; killAt <= clean; killAt++ {
						removeWithCrash(t, backend, killAt, die)
					}
				})
			}
		})
	}
}

// removeWithCrash builds a large finished run and a running one, expires
// the first and removes it through a kill switch at commit killAt (0:
// never), restarting the engine after a crash. It answers the commits the
// removal took.
func removeWithCrash(t *testing.T, backend crashBackend, killAt int, die bool) int {
	t.Helper()
	ctx := context.Background()
	inner, reopen := backend.open(t)
	clk := clock.NewManual(testStart)
	cfg := Config{Store: inner, Clock: clk, Retention: time.Hour}
	eng, err := New(cfg)
	require.NoError(t, err)
	run := signalledRun(t, eng, 200)
	other, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	before := storedKeys(t, inner)
	clk.Advance(2 * time.Hour)

	ks := &killSwitch{Store: inner, killAt: killAt, die: die}
	cfg.Store = ks
	eng, err = New(cfg)
	require.NoError(t, err)
	commits := 0
	for range 20 {
		_ = eng.Tick(ctx)
		if ks.isDead() {
			commits += ks.commits
			inner = reopen(inner)
			ks = &killSwitch{Store: inner}
			cfg.Store = ks
			eng, err = New(cfg)
			require.NoError(t, err)
			continue
		}
		if len(eng.storedExpiries(t)) == 0 {
			break
		}
	}
	require.Empty(t, eng.storedExpiries(t), "the removal never finished (crash at commit %d)", killAt)
	after := storedKeys(t, inner)
	require.Empty(t, recordsOf(t, after, run), "crash at commit %d left records of the removed run", killAt)
	for k, v := range recordsOf(t, before, other.Run.RunID) {
		require.Equal(t, v, after[k], "crash at commit %d changed the running run's %s", killAt, k)
	}
	return commits + ks.commits
}

// TestRetention_TwoEnginesNeverBothRemoveARun: an engine whose removal
// batch is held back while another engine — which took the run over —
// removes the whole run cannot commit it late: nothing it meant to write
// (its checkpoint with the bumped epoch) comes back.
func TestRetention_TwoEnginesNeverBothRemoveARun(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			shared := backend.open(t)
			clk := clock.NewManual(testStart)
			gate := &heldStore{Store: shared, hold: make(chan struct{}), held: make(chan struct{})}
			a, err := New(Config{Store: gate, Clock: clk, Retention: time.Hour, Ownership: CASRequired, Owner: "a"})
			require.NoError(t, err)
			b, err := New(Config{Store: shared, Clock: clk, Retention: time.Hour, Ownership: CASRequired, Owner: "b"})
			require.NoError(t, err)
			run := signalledRun(t, b, 300)
			clk.Advance(2 * time.Hour)

			gate.armed.Store(true)
			late := make(chan error, 1)
			go func() { late <- a.Tick(ctx) }()
			<-gate.held // a's first removal batch is built and waits to commit
			require.NoError(t, b.Tick(ctx))
			require.Empty(t, recordsOf(t, storedKeys(t, shared), run), "b removed the run")
			close(gate.hold)
			require.NoError(t, <-late)
			require.Error(t, gate.heldErr, "a's late batch committed over a run b removed")
			require.Empty(t, recordsOf(t, storedKeys(t, shared), run), "a's late batch brought records back")
		})
	}
}

// heldStore holds the first commit made while armed until hold is closed,
// and records its outcome.
type heldStore struct {
	store.Store
	armed   atomic.Bool
	once    sync.Once
	hold    chan struct{}
	held    chan struct{}
	heldErr error
}

func (g *heldStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	first := false
	if g.armed.Load() {
		g.once.Do(func() { first = true })
	}
	if !first {
		return g.Store.Commit(ctx, b)
	}
	close(g.held)
	<-g.hold
	res, err := g.Store.Commit(ctx, b)
	g.heldErr = err
	return res, err
}

// TestRetention_ATimerTheRemovalCannotNameGoesWhenItFallsDue: a pause's
// drain timer, and the attempt timer of a task the cancel retired, are
// named by nothing the removal reads; once their run is removed each is
// deleted when it falls due, instead of being looked at on every tick.
func TestRetention_ATimerTheRemovalCannotNameGoesWhenItFallsDue(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}))
	def := seq("a")
	def.Retention = definition.Duration(time.Second)
	run := b.submit(def).RunID
	b.poll("act-a")
	_, err := b.eng.PauseRun(b.ctx, ControlParams{TenantID: tenant, RunID: run})
	require.NoError(t, err)
	_, err = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run})
	require.NoError(t, err)
	b.clock.Advance(2 * time.Second)
	b.tick()
	left := recordsOf(t, storedKeys(t, b.store), run)
	require.NotEmpty(t, left, "the drain timer and the retired task's attempt timer outlive the removal")
	for k := range left {
		require.True(t, strings.HasPrefix(k, "tmr:"), "only timers outlive the removal, got %s", k)
	}
	b.clock.Advance(DefaultDrainTimeout)
	b.tick()
	require.Empty(t, recordsOf(t, storedKeys(t, b.store), run))
}

// TestDeleteRun_RemovesAFinishedRunAtOnceAndRefusesAnUnfinishedOne: a
// finished run goes with every record; a running one is refused with
// CodeFailedPrecondition and keeps everything; an unknown run, another
// tenant's, or one deleted already is not found.
func TestDeleteRun_RemovesAFinishedRunAtOnceAndRefusesAnUnfinishedOne(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			running := b.submit(seq("a", "b")).RunID
			b.complete(b.poll("act-a"), `{}`)
			before := recordsOf(t, storedKeys(t, b.store), running)
			_, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: running})
			require.Equal(t, CodeFailedPrecondition, CodeOf(err))
			require.Contains(t, err.Error(), "only a finished run")
			require.Equal(t, before, recordsOf(t, storedKeys(t, b.store), running), "a refused delete changed the run")

			finished := b.submit(seq("x")).RunID
			b.complete(b.poll("act-x"), `{}`)
			_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: "tenant-b", RunID: finished})
			require.Equal(t, CodeNotFound, CodeOf(err), "another tenant's run")
			res, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: finished})
			require.NoError(t, err)
			require.True(t, res.Removed)
			require.Empty(t, recordsOf(t, storedKeys(t, b.store), finished))
			_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: finished})
			require.Equal(t, CodeNotFound, CodeOf(err), "deleting twice: the second is not found")
			_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: "run-unknown"})
			require.Equal(t, CodeNotFound, CodeOf(err))
			require.Equal(t, runstate.RunRunning, b.run(running).Status)
		})
	}
}

// TestDeleteRun_ARunWhoseEventsAwaitExportIsHiddenAndRemovedOnceExported:
// DeleteRun hides the run at once; its records wait for the export of its
// events, and the pass removes them after.
func TestDeleteRun_ARunWhoseEventsAwaitExportIsHiddenAndRemovedOnceExported(t *testing.T) {
	b := setupWith(t, memstore.New(memstore.Config{}), func(c *Config) { c.Outbox = true })
	run := b.submit(seq("a")).RunID
	b.complete(b.poll("act-a"), `{}`)
	res, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run})
	require.NoError(t, err)
	require.False(t, res.Removed)
	_, err = b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: run})
	require.Equal(t, CodeNotFound, CodeOf(err), "a deleted run is invisible at once")
	_, err = b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run, SignalName: "late"})
	require.Equal(t, CodeNotFound, CodeOf(err), "no decision sees a run being removed")
	var ops []store.Op
	for k := range recordsOf(t, storedKeys(t, b.store), run) {
		if strings.HasPrefix(k, "ob:") {
			ops = append(ops, store.Delete([]byte(k)))
		}
	}
	require.NotEmpty(t, ops)
	_, err = b.store.Commit(b.ctx, &store.Batch{Ops: ops})
	require.NoError(t, err)
	b.clock.Advance(ExportWait)
	b.tick()
	require.Empty(t, recordsOf(t, storedKeys(t, b.store), run))
}

// TestRetention_EnginesRacingWithVanishingLeasesRemoveEachRunWholeAndOnce: three
// engines on PostgreSQL with Redis leases run their passes at once over 60
// expired runs — large ones, removed over several batches — while every
// lease key is deleted every few milliseconds, so that engines take runs
// over from each other mid-removal. Every run goes, whole, its last batch
// is never committed twice, and a running run is untouched.
func TestRetention_EnginesRacingWithVanishingLeasesRemoveEachRunWholeAndOnce(t *testing.T) {
	rdb := redistest.Require(t)
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	prefix := "weft-test:" + uuid.NewString() + ":"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clock.NewManual(testStart)
	var logs syncBuffer
	var engines []*Engine
	for i := range 3 {
		eng, err := New(Config{Store: db.Open(t, schema), Clock: clk, Retention: time.Hour, Ownership: CASRequired,
			Owner: fmt.Sprint("engine-", i), Leases: redislease.New(rdb, prefix), LeaseTTL: time.Second,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		require.NoError(t, err)
		engines = append(engines, eng)
	}
	var runs []string
	for range 6 {
		runs = append(runs, signalledRun(t, engines[0], 150))
	}
	for range 54 {
		res, err := engines[0].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), Start: true})
		require.NoError(t, err)
		_, err = engines[0].CancelRun(ctx, ControlParams{TenantID: tenant, RunID: res.Run.RunID})
		require.NoError(t, err)
		runs = append(runs, res.Run.RunID)
	}
	running, err := engines[1].SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), Start: true})
	require.NoError(t, err)
	shared := db.Open(t, schema)
	before := recordsOf(t, storedKeys(t, shared), running.Run.RunID)
	clk.Advance(2 * time.Hour)

	go deleteLeasesEvery(ctx, rdb, prefix, 5*time.Millisecond)
	var wg sync.WaitGroup
	for _, eng := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_ = eng.Tick(ctx) // a lost lease or race is an error of the round, never of the outcome
				if len(eng.storedExpiries(t)) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	cancel()
	after := storedKeys(t, shared)
	for _, run := range runs {
		require.Empty(t, recordsOf(t, after, run), "run %s was not removed whole", run)
		// At most once: an engine whose lease vanished during its commit
		// cannot know the outcome, and does not claim it.
		require.LessOrEqual(t, strings.Count(logs.String(), `"msg":"retention removed a run","run_id":"`+run+`"`), 1,
			"the last batch of run %s committed twice", run)
	}
	require.Equal(t, before, recordsOf(t, after, running.Run.RunID))
}

// DeleteRun's answer says what happened: a run it removed is removed:true,
// though a batch of its removal lost its tenure on the way — the retention
// pass, removing the same run in this engine, gave the run's lease up (a
// run that ends needs no owner) while DeleteRun's batch waited on it. The
// batch takes the lease again and goes on.
func TestDeleteRun_AnswersRemovedWhenAnotherDecisionEndsItsTenure(t *testing.T) {
	var b *bundle
	ended := false
	b = setupWith(t, setupOnceChecked(t), func(c *Config) {
		c.inTenure = func(runID string) {
			if ended {
				return
			}
			ended = true // as the retention pass does after its own batch
			held, err := b.eng.own.leases.Take(context.Background(), "run:"+runID)
			require.NoError(t, err)
			held.Drop()
			held.Done()
		}
	})
	run := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `1`)
	res, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.True(t, ended, "the removal's first batch lost its tenure")
	require.True(t, res.Removed)
	_, err = b.store.Get(b.ctx, record.RunKey(run.RunID))
	require.ErrorIs(t, err, store.ErrNotFound, "every record of the run is gone")
}

// passFirst is a lease manager on which the retention pass of another
// engine takes the run's lease first: the first time the deleter asks for a
// lease, the pass removes every expired run while holding it, and the
// deleter is told the lease is held.
type passFirst struct {
	*lease.Local
	pass func()
	ran  bool
}

func (m *passFirst) Acquire(ctx context.Context, name, owner string, ttl time.Duration) (lease.Lease, error) {
	if owner == "deleter" && !m.ran {
		m.ran = true
		m.pass()
		return lease.Lease{}, lease.ErrHeld
	}
	return m.Local.Acquire(ctx, name, owner, ttl)
}

// DeleteRun answers removed:true for a run whose removal the retention pass
// finished: the pass (here another engine's) took the run's lease before
// DeleteRun's own removal did, and removed the run DeleteRun had just hidden
// and indexed as expired.
func TestDeleteRun_AnswersRemovedWhenTheRetentionPassFinishedTheRemoval(t *testing.T) {
	st := setupOnceChecked(t)
	clk := clock.NewManual(testStart)
	var other *bundle
	leases := &passFirst{Local: lease.NewLocal(clk.Now)}
	leases.pass = func() { require.NoError(t, expireRuns(context.Background(), other.eng)) }
	b := setupWith(t, st, func(c *Config) { c.Leases, c.Owner, c.Clock = leases, "deleter", clk })
	other = setupWith(t, st, func(c *Config) { c.Leases, c.Owner, c.Clock = leases, "pass", clk })
	run := b.submit(seq("a"))
	b.complete(b.poll("act-a"), `1`)
	res, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.True(t, leases.ran, "the pass held the lease when DeleteRun's removal asked for it")
	_, err = b.store.Get(b.ctx, record.RunKey(run.RunID))
	require.ErrorIs(t, err, store.ErrNotFound, "the pass removed the run")
	require.True(t, res.Removed, "the answer says the run is removed")
}
