package engine

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// The run indexes' two layouts (docs/persisted-format.md): runs an older
// weftd wrote — status in rs: by run id and in sx:, plan and planVersion
// entries apart — and runs of the present one, side by side in one store.

// toOlderLayout rewrites runs' index entries and checkpoints as a weftd
// before CompactIndex stored them, with the run index entry (ri:) it wrote
// at submission, then restarts the engine (nothing it remembers of the
// runs survives).
func toOlderLayout(b *bundle, ids ...string) {
	b.t.Helper()
	toLayout(b, func(s *runstate.State) { s.CompactIndex, s.StartedByCreated = false, false }, ids...)
}

// toStartedEntryLayout rewrites runs' index entries and checkpoints as a
// weftd with CompactIndex but before StartedByCreated stored them: an sx:
// startedAt entry for every run that started.
func toStartedEntryLayout(b *bundle, ids ...string) {
	b.t.Helper()
	toLayout(b, func(s *runstate.State) { s.StartedByCreated = false }, ids...)
}

// toLayout rewrites runs' index entries to those of the layout older sets
// on their checkpoints, and the checkpoints so, with the run index entry
// (ri:) every older weftd wrote, then restarts the engine.
func toLayout(b *bundle, older func(*runstate.State), ids ...string) {
	b.t.Helper()
	rewriteRuns(b, ids, func(_ string, s *runstate.State) { older(s) }, func(rec *record.Run) []store.Op {
		return []store.Op{runIndexEntry(rec)}
	})
}

// rewriteRuns changes runs of the present layout as change says, in their
// checkpoints and in their index entries (those the changed checkpoint
// names replace those it named), writes extra's records of each run too,
// then restarts the engine (nothing it remembers of the runs survives).
func rewriteRuns(b *bundle, ids []string, change func(id string, s *runstate.State), extra func(*record.Run) []store.Op) {
	b.t.Helper()
	batch := &store.Batch{}
	for _, id := range ids {
		rec, err := b.eng.records.LoadRun(b.ctx, id)
		require.NoError(b.t, err)
		state, _, err := b.eng.records.LoadCheckpoint(b.ctx, id)
		require.NoError(b.t, err)
		require.True(b.t, state.CompactIndex, "a run this engine submitted is in the present layout")
		present := indexEntries(rec, indexedOf(state))
		state = state.Clone()
		change(id, state)
		entries := indexEntries(rec, indexedOf(state))
		for k := range present {
			if _, both := entries[k]; !both {
				batch.Ops = append(batch.Ops, store.Delete([]byte(k)))
			}
		}
		for k, v := range entries {
			batch.Ops = append(batch.Ops, store.Put([]byte(k), []byte(v)))
		}
		batch.Ops = append(batch.Ops, store.Put(runlog.CheckpointKey(id), runcodec.AppendState(nil, state)))
		if extra != nil {
			batch.Ops = append(batch.Ops, extra(rec)...)
		}
	}
	_, err := b.store.Commit(b.ctx, batch)
	require.NoError(b.t, err)
	restartKeepingConfig(b)
}

// runIndexEntry is the put of the run index entry an older weftd wrote
// for a run it submitted.
func runIndexEntry(rec *record.Run) store.Op {
	return store.Put(record.RunIndexKey(rec.TenantID, rec.CreatedAt, rec.RunID), []byte(rec.RunID))
}

// retainedRuns answers the runs among ids whose record is still stored.
func retainedRuns(b *bundle, ids []string) []string {
	b.t.Helper()
	var kept []string
	for _, id := range ids {
		if _, err := b.eng.records.LoadRun(b.ctx, id); CodeOf(err) != CodeNotFound {
			kept = append(kept, id)
		}
	}
	return kept
}

// restartKeepingConfig replaces the engine with a new one of the same
// configuration over the same store.
func restartKeepingConfig(b *bundle) {
	b.t.Helper()
	eng, err := New(b.eng.cfg)
	require.NoError(b.t, err)
	b.eng = eng
}

// requireIndexMatchesCheckpoints checks that the rs: and sx: entries of
// each run are exactly those its checkpoint's layout names (no entry of
// the other layout, none stale), and that no entry names a run not listed.
func requireIndexMatchesCheckpoints(b *bundle, ids []string) {
	b.t.Helper()
	stored := storedKeys(b.t, b.store)
	index := map[string]string{}
	for k, v := range stored {
		if strings.HasPrefix(k, "rs:") || strings.HasPrefix(k, "sx:") {
			index[k] = v
		}
	}
	for _, id := range ids {
		mine := map[string]string{}
		for k, v := range recordsOf(b.t, index, id) {
			mine[k] = v
			delete(index, k)
		}
		rec, err := b.eng.records.LoadRun(b.ctx, id)
		if CodeOf(err) == CodeNotFound {
			require.Empty(b.t, mine, "a removed run %s left index entries", id)
			continue
		}
		require.NoError(b.t, err)
		state, _, err := b.eng.records.LoadCheckpoint(b.ctx, id)
		require.NoError(b.t, err)
		require.Equal(b.t, indexEntries(rec, indexedOf(state)), mine, "run %s (compact %v, %s)", id, state.CompactIndex, state.Status)
	}
	require.Empty(b.t, index, "index entries of no run")
}

// layoutQueries are the queries whose plans read the entries the layouts
// differ in: status, plan and planVersion, alone and together.
var layoutQueries = []string{
	`status = "RUNNING"`, `status IN ("COMPLETED", "CANCELLED", "PENDING")`, `status = "FAILED" AND customer = "acme"`,
	`plan = "refund"`, `plan = "order" AND status = "RUNNING"`, `plan STARTS_WITH "order"`,
	`planVersion = "2"`, `planVersion IN ("1", "3")`, `planVersion > "1"`, `planVersion STARTS_WITH "1"`,
	`plan = "refund" AND planVersion = "2"`, `planVersion = "1" AND plan = "order"`, `plan IN ("order", "refund") AND planVersion = "1"`,
	`plan STARTS_WITH "order" AND planVersion >= "2"`, `plan = "refund" AND planVersion = "2" AND planVersion = "1"`,
	`planVersion = "2" AND status IN ("RUNNING", "COMPLETED")`, `status = "COMPLETED" AND plan = "order-fulfilment" AND planVersion = "1"`,
	`startedAt >= "2026-11-01T12:10:00Z"`, `startedAt < "2026-11-01T12:20:00Z"`, `startedAt = "2026-11-01T12:07:00Z"`,
	`startedAt IN ("2026-11-01T12:02:00Z", "2026-11-01T12:12:00Z")`, `startedAt = NULL`, `startedAt != NULL AND plan = "refund"`,
	`startedAt > "2026-11-01T12:05:00Z" AND startedAt <= "2026-11-01T12:25:00Z" AND status = "RUNNING"`,
}

// pagesOf pages through ListRuns, answering the runs and each page's token.
func pagesOf(b *bundle, query string, pageSize int) (runs, tokens []string) {
	b.t.Helper()
	token := ""
	for range 1000 {
		res, err := b.eng.Queries().ListRuns(b.ctx, ListRunsParams{TenantID: tenant, Query: query, PageSize: pageSize, PageToken: token})
		require.NoError(b.t, err, query)
		for _, r := range res.Runs {
			runs = append(runs, r.RunID)
		}
		if token = res.NextPageToken; token == "" {
			return runs, tokens
		}
		tokens = append(tokens, token)
	}
	b.t.Fatalf("query %s: pages never ended", query)
	return nil, nil
}

// requireQueriesMatch checks every query against the brute-force filter,
// page after page, and CountRuns; it answers each query's page tokens.
func requireQueriesMatch(b *bundle, ids []string, queries []string) map[string][]string {
	b.t.Helper()
	types, err := tenantAttributeTypes(b.ctx, b.store, tenant)
	require.NoError(b.t, err)
	schema, err := runquery.NewSchema(types)
	require.NoError(b.t, err)
	tokens := map[string][]string{}
	for _, src := range queries {
		q, err := runquery.Compile(src, schema)
		require.NoError(b.t, err, src)
		want := bruteForce(b, q, ids)
		got, pages := pagesOf(b, src, 4)
		require.Equal(b.t, want, got, src)
		require.Equal(b.t, want, listQuery(b, src, 1000), src)
		count, err := b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant, Query: src})
		require.NoError(b.t, err, src)
		require.Equal(b.t, int64(len(want)), count.Count, src)
		tokens[src] = pages
	}
	return tokens
}

// requireGaugeCounts checks Stats' runs by status against every run's
// status: each run counted once, whatever its layout.
func requireGaugeCounts(b *bundle, ids []string) {
	b.t.Helper()
	want := map[runstate.RunStatus]int{}
	for _, s := range AllRunStatuses {
		want[s] = 0
	}
	for _, id := range ids {
		snap, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: id})
		if CodeOf(err) == CodeNotFound {
			continue
		}
		require.NoError(b.t, err)
		want[snap.Status]++
	}
	stats, err := b.eng.Stats(b.ctx)
	require.NoError(b.t, err)
	require.Equal(b.t, want, stats.RunsByStatus)
}

// TestIndexLayout_TheKeysAreTheDocumentedOnes pins both layouts' keys to
// docs/persisted-format.md: the older one exactly as weftd wrote it
// before CompactIndex (which its runs still carry), the present one.
func TestIndexLayout_TheKeysAreTheDocumentedOnes(t *testing.T) {
	created := time.Unix(0, 1).UTC()
	rec := &record.Run{RunID: "r1", TenantID: "acme", CreatedAt: created, SubmittedBy: "al"}
	rec.Definition.PlanID, rec.Definition.PlanVersion = "p", "2"
	older := indexEntries(rec, indexedFields{status: runstate.RunRunning})
	require.Equal(t, map[string]string{
		"rs:RUNNING:acme:r1": "",
		"sx:acme:status:fcffeoeoejeoeh:7fffffffffffffff:r1": "",
		"sx:acme:plan:ha:7fffffffffffffff:r1":               "",
		"sx:acme:planVersion:dc:7fffffffffffffff:r1":        "",
		"sx:acme:submittedBy:gbgm:7fffffffffffffff:r1":      "",
	}, older)
	present := indexEntries(rec, indexedFields{status: runstate.RunRunning, compact: true})
	require.Equal(t, map[string]string{
		"rs:RUNNING:acme::7fffffffffffffff:r1":         "",
		"sx:acme:plan:ha:7fffffffffffffff:r1":          "2",
		"sx:acme:submittedBy:gbgm:7fffffffffffffff:r1": "",
	}, present)
	require.Equal(t, "rs:RUNNING:acme::", string(record.RunStatusPrefix("acme", runstate.RunRunning)))
}

// TestIndexLayout_QueriesAnswerTheSameOverRunsOfBothLayoutsOnEveryStore:
// with half the runs in the older layout, every query answers the same
// runs in the same order with the same page tokens as over runs of the
// present layout alone, and counts each run once; the gauge counts each
// run once; and the older runs moving on (started, completed, failed,
// cancelled) under this engine move to the present layout, leaving no
// older entry behind, with the answers still the brute-force filter's.
func TestIndexLayout_QueriesAnswerTheSameOverRunsOfBothLayoutsOnEveryStore(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			ids := queryFixtureRuns(b, 30)
			queries := append(slices.Clone(layoutQueries), operatorQueries(ids)...)
			before := requireQueriesMatch(b, ids, queries)
			requireGaugeCounts(b, ids)
			requireIndexMatchesCheckpoints(b, ids)

			var older []string
			for i, id := range ids {
				if i%2 == 0 || i%5 == 1 { // every other run, and every RUNNING one
					older = append(older, id)
				}
			}
			toOlderLayout(b, older...)
			var startedEntries []string // the present layout but for their startedAt entries
			for i, id := range ids {
				if !slices.Contains(older, id) && i%3 == 1 {
					startedEntries = append(startedEntries, id)
				}
			}
			toStartedEntryLayout(b, startedEntries...)
			requireIndexMatchesCheckpoints(b, ids)
			require.Equal(t, before, requireQueriesMatch(b, ids, queries), "page tokens changed with the layout")
			requireGaugeCounts(b, ids)

			// The older RUNNING runs end under this engine: some complete,
			// some fail, one is cancelled; an older PENDING run is started.
			for i, id := range ids {
				switch {
				case i%5 == 1 && i%3 == 0:
					_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: id, Reason: "test"})
					require.NoError(t, err)
				case i%5 == 0 && i%2 == 0:
					_, err := b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: id})
					require.NoError(t, err)
				}
			}
			for range 10 {
				tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activitiesOf(b, ids), MaxTasks: 100})
				require.NoError(t, err)
				if len(tasks) == 0 {
					break
				}
				for i, task := range tasks {
					if i%3 == 2 {
						b.fail(task, definition.ErrorValidation)
						continue
					}
					b.complete(task, `{}`)
				}
			}
			moved := 0
			for _, id := range older {
				state, _, err := b.eng.records.LoadCheckpoint(b.ctx, id)
				require.NoError(t, err)
				if state.CompactIndex {
					moved++
				}
			}
			require.Greater(t, moved, 3, "older runs moved on under this engine")
			require.Less(t, moved, len(older), "some older runs stay in their layout")
			requireIndexMatchesCheckpoints(b, ids)
			requireQueriesMatch(b, ids, queries)
			requireGaugeCounts(b, ids)
		})
	}
}

// activitiesOf answers every activity of the runs' definitions.
func activitiesOf(b *bundle, ids []string) []string {
	var out []string
	for _, id := range ids {
		rec, err := b.eng.records.LoadRun(b.ctx, id)
		require.NoError(b.t, err)
		for _, a := range rec.Definition.Actions {
			out = append(out, a.Activity)
		}
	}
	return out
}

// TestIndexLayout_RemovalDeletesEveryEntryOfBothLayouts: retention and
// DeleteRun remove every rs: and sx: entry of a run, in either layout, and
// the gauge stops counting it.
func TestIndexLayout_RemovalDeletesEveryEntryOfBothLayouts(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t), withRetention(24*time.Hour))
			ids := queryFixtureRuns(b, 20)
			var older []string
			for i, id := range ids {
				if i%2 == 0 {
					older = append(older, id)
				}
			}
			toOlderLayout(b, older...)
			_, err := b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: ids[2]}) // older, COMPLETED
			require.NoError(t, err)
			_, err = b.eng.DeleteRun(b.ctx, DeleteRunParams{TenantID: tenant, RunID: ids[3]}) // present, FAILED
			require.NoError(t, err)
			b.clock.Advance(48 * time.Hour)
			for range 20 {
				b.tick()
			}
			kept := retainedRuns(b, ids)
			require.Len(t, kept, len(ids)*2/5, "every finished run removed, by DeleteRun or retention")
			requireIndexMatchesCheckpoints(b, ids)
			requireGaugeCounts(b, ids)
			requireQueriesMatch(b, kept, layoutQueries)
		})
	}
}

// TestIndexLayout_AStatusMoveInterruptedAtEveryCommitLeavesOneLayout: an
// older run driven to its end by this engine, the process killed at each
// of its commits (the batch applied, the acknowledgement lost), then
// driven on by a new process: its entries are always exactly one
// layout's, the one its checkpoint names, and it is found and counted
// once.
func TestIndexLayout_AStatusMoveInterruptedAtEveryCommitLeavesOneLayout(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			for killAt := 1; killAt <= 4; killAt++ {
				inner, reopen := backend.open(t)
				b := setupWith(t, inner)
				b.noProjectionCheck = true
				run := b.submit(seq("a", "b")).RunID
				toOlderLayout(b, run)
				ks := &killSwitch{Store: inner, killAt: killAt, die: true}
				cfg := b.eng.cfg
				cfg.Store = ks
				eng, err := New(cfg)
				require.NoError(t, err)
				b.eng, b.store = eng, ks
				for range 20 {
					if ks.isDead() {
						inner = reopen(inner)
						cfg.Store = inner
						eng, err := New(cfg)
						require.NoError(t, err)
						b.eng, b.store = eng, inner
						requireIndexMatchesCheckpoints(b, []string{run})
					}
					if snap, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: run}); err == nil && snap.Status.Terminal() {
						break
					}
					tasks, _ := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: []string{"act-a", "act-b"}, MaxTasks: 5})
					for _, task := range tasks {
						_, _ = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: []byte(`{}`)})
					}
					if len(tasks) == 0 {
						b.clock.Advance(time.Hour)
						_ = b.eng.Tick(b.ctx)
					}
				}
				require.True(t, ks.fired, "commit %d was reached", killAt)
				require.Equal(t, runstate.RunCompleted, b.run(run).Status, "kill at %d", killAt)
				requireIndexMatchesCheckpoints(b, []string{run})
				requireGaugeCounts(b, []string{run})
				require.Equal(t, []string{run}, listQuery(b, `status = "COMPLETED" AND planVersion = "1"`, 10))
				require.Empty(t, listQuery(b, `status = "RUNNING"`, 10))
			}
		})
	}
}

// slowScans stands between a reading engine and its store, and waits
// before each scan: a decision committed meanwhile lands between two scans
// of one query.
type slowScans struct{ store.Store }

func (s slowScans) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	time.Sleep(time.Millisecond)
	return s.Store.Scan(ctx, p)
}

// TestIndexLayout_RunsMovingWhileAnotherEngineQueriesAreEachAnsweredOnce:
// on one PostgreSQL schema, one engine moves runs of both layouts — starts
// them (PENDING to RUNNING), then ends them (RUNNING to COMPLETED), the
// older ones moving to the present layout on the way — while another,
// whose every scan is slow, pages through the two statuses of each phase
// and counts them. A run has one of the two throughout, so every listing
// answers no run twice, newest first, and every run that did not move
// while it read; no count counts a run twice.
func TestIndexLayout_RunsMovingWhileAnotherEngineQueriesAreEachAnsweredOnce(t *testing.T) {
	schema := sqltest.NewSchema(t)
	b := setupWith(t, sqltest.Open(t, schema))
	b.noProjectionCheck = true
	const n = 40
	var ids []string
	for range n {
		b.clock.Advance(time.Second)
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), SubmittedBy: "alice"})
		require.NoError(t, err)
		ids = append(ids, res.Run.RunID)
	}
	var older []string
	for i, id := range ids {
		if i%2 == 0 {
			older = append(older, id)
		}
	}
	toOlderLayout(b, older...)
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)
	reader, err := New(Config{Store: slowScans{sqltest.Open(t, schema)}, Clock: b.clock})
	require.NoError(t, err)

	phases := []struct {
		query string
		next  func(i int) (runID string, move func()) // the i-th run to move, and its move
	}{
		{`status IN ("PENDING", "RUNNING")`, func(i int) (string, func()) {
			return ids[i], func() {
				_, err := b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: ids[i]})
				require.NoError(t, err)
			}
		}},
		{`status IN ("RUNNING", "COMPLETED")`, func(int) (string, func()) {
			task := b.poll("act-a")
			return task.RunID, func() { b.complete(task, `{}`) }
		}},
	}
	for _, phase := range phases {
		// moving holds the runs whose move may have begun, moved those whose
		// move committed: a run in neither at a listing's end, or moved at
		// its start, did not move while it read, and must be answered.
		var mu sync.Mutex
		moving, moved := map[string]bool{}, map[string]bool{}
		snapshot := func(m map[string]bool) map[string]bool { mu.Lock(); defer mu.Unlock(); return maps.Clone(m) }
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		readErr := make(chan error, 1)
		go func() {
			defer wg.Done()
			for pageSize := 3; ctx.Err() == nil; pageSize = 1003 - pageSize { // every run on one page, then three a page
				movedBefore := snapshot(moved)
				var got []string
				token := ""
				for {
					res, err := reader.Queries().ListRuns(ctx, ListRunsParams{TenantID: tenant, Query: phase.query, PageSize: pageSize, PageToken: token})
					if err != nil {
						if ctx.Err() == nil {
							readErr <- err
						}
						return
					}
					for _, r := range res.Runs {
						got = append(got, r.RunID)
					}
					if token = res.NextPageToken; token == "" {
						break
					}
				}
				movingAfter := snapshot(moving)
				if err := answeredOnceInOrder(newestFirst, got, func(id string) bool { return movedBefore[id] || !movingAfter[id] }); err != nil {
					readErr <- err
					return
				}
				count, err := reader.Queries().CountRuns(ctx, CountRunsParams{TenantID: tenant, Query: phase.query})
				if err == nil && count.Count > n {
					readErr <- errors.New("a count counted a run twice")
					return
				}
			}
		}()
		for i := range ids {
			id, move := phase.next(i)
			mu.Lock()
			moving[id] = true
			mu.Unlock()
			move()
			mu.Lock()
			moved[id] = true
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		stop()
		wg.Wait()
		select {
		case err := <-readErr:
			t.Fatal(phase.query, ": ", err)
		default:
		}
		requireIndexMatchesCheckpoints(b, ids)
	}
	require.Equal(t, newestFirst, listQuery(b, `status = "COMPLETED"`, 7))
	for k := range storedKeys(t, b.store) {
		require.False(t, strings.HasPrefix(k, "rs:COMPLETED:"+tenant+":run"), "an older status entry survived its run's end: %s", k)
		require.False(t, strings.HasPrefix(k, "sx:"+tenant+":status:"), "an older status entry survived its run's end: %s", k)
	}
}

// answeredOnceInOrder checks a listing against every run, newest first:
// no run twice, in that order, and each run stable says did not move
// while it read answered.
func answeredOnceInOrder(newestFirst, got []string, stable func(string) bool) error {
	at := map[string]int{}
	for i, id := range newestFirst {
		at[id] = i
	}
	seen, last := map[string]bool{}, -1
	for _, id := range got {
		i, known := at[id]
		switch {
		case !known:
			return errors.New("a listing answered a run that is not one of them")
		case seen[id]:
			return errors.New("a listing answered a run twice")
		case i < last:
			return errors.New("a listing was not newest first")
		}
		seen[id], last = true, i
	}
	for _, id := range newestFirst {
		if stable(id) && !seen[id] {
			return errors.New("a listing left out a run that did not move while it read")
		}
	}
	return nil
}
