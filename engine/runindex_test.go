package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The runs a listing of every run and a createdAt range read
// (docs/persisted-format.md): each status's rs: entries, which a
// submission writes, merged with the run index (ri:) an older weftd wrote
// for the runs it submitted — in the older layout, whose rs: entry is not
// by position, or moved to the present one, with both.

// runIndexKeys answers the stored run index entries.
func runIndexKeys(b *bundle) []string {
	b.t.Helper()
	var out []string
	for k := range storedKeys(b.t, b.store) {
		if strings.HasPrefix(k, "ri:") {
			out = append(out, k)
		}
	}
	return out
}

// TestRunIndex_ANewSubmissionWritesNoRunIndexEntry: a run submitted
// (started or not, or waiting for approval) has no ri: entry, only its rs:
// entry by position, and is listed.
func TestRunIndex_ANewSubmissionWritesNoRunIndexEntry(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			var ids []string
			for _, p := range []SubmitParams{{Start: true}, {}, {RunRequestID: "approval"}} {
				b.clock.Advance(time.Minute)
				p.TenantID, p.SubmittedBy, p.Definition = tenant, "alice", seq("a")
				p.Definition.RequiresApproval = p.RunRequestID != ""
				res, err := b.eng.SubmitRun(b.ctx, p)
				require.NoError(t, err)
				ids = append(ids, res.Run.RunID)
			}
			require.Empty(t, runIndexKeys(b), "a submission wrote a run index entry")
			stored := storedKeys(t, b.store)
			for _, id := range ids {
				snap := b.run(id)
				require.Contains(t, stored, string(record.RunStatusKey(tenant, snap.Status, snap.CreatedAt, id)), "run %s has no rs: entry by position", id)
			}
			slices.Reverse(ids)
			require.Equal(t, ids, listQuery(b, "", 1))
		})
	}
}

// setStatuses gives runs of the present layout a status each, as their
// checkpoints and rs: entries, then restarts the engine: a status that
// only a long history reaches (APPROVED, QUEUED, BLOCKED, COMPENSATING…)
// is stored as any other.
func setStatuses(b *bundle, statuses map[string]runstate.RunStatus) {
	b.t.Helper()
	rewriteRuns(b, slices.Sorted(maps.Keys(statuses)), func(id string, s *runstate.State) { s.Status = statuses[id] }, nil)
}

// withRunIndexEntries gives runs of the present layout the run index entry
// an older weftd wrote at submission (as for one of its runs that a
// decision since moved to the present layout), then restarts the engine.
func withRunIndexEntries(b *bundle, ids ...string) {
	b.t.Helper()
	batch := &store.Batch{}
	for _, id := range ids {
		rec, err := b.eng.records.LoadRun(b.ctx, id)
		require.NoError(b.t, err)
		batch.Ops = append(batch.Ops, runIndexEntry(rec))
	}
	_, err := b.store.Commit(b.ctx, batch)
	require.NoError(b.t, err)
	restartKeepingConfig(b)
}

// createdQueries are createdAt queries over runs created one minute
// apart: ranges open and closed on either side, points, a range with a
// status, and bounds that contradict each other.
func createdQueries(b *bundle, ids []string) []string {
	b.t.Helper()
	at := func(i int) string { return `"` + b.run(ids[i]).CreatedAt.Format(time.RFC3339Nano) + `"` }
	return []string{
		`createdAt > ` + at(5), `createdAt >= ` + at(5), `createdAt < ` + at(20), `createdAt <= ` + at(20),
		`createdAt >= ` + at(3) + ` AND createdAt < ` + at(17), `createdAt > ` + at(3) + ` AND createdAt <= ` + at(17),
		`createdAt = ` + at(8), `createdAt IN (` + at(2) + `, ` + at(11) + `, ` + at(25) + `)`,
		`createdAt > ` + at(6) + ` AND status = "COMPLETED"`, `createdAt > ` + at(20) + ` AND createdAt < ` + at(5),
	}
}

// listings answers the runs and page tokens of every run listed, each
// page size.
func listings(b *bundle) map[int][2][]string {
	b.t.Helper()
	out := map[int][2][]string{}
	for _, size := range []int{1, 4, 7, 1000} {
		runs, tokens := pagesOf(b, "", size)
		out[size] = [2][]string{runs, tokens}
	}
	return out
}

// requireEveryRunListed checks the listing of every run, page after page,
// against every run newest first, and its counts, by status too.
func requireEveryRunListed(b *bundle, ids []string) map[int][2][]string {
	b.t.Helper()
	var newestFirst []string
	want := map[string]int64{}
	for i := len(ids) - 1; i >= 0; i-- {
		snap, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: ids[i]})
		if CodeOf(err) == CodeNotFound {
			continue
		}
		require.NoError(b.t, err)
		newestFirst = append(newestFirst, ids[i])
		want[string(snap.Status)]++
	}
	pages := listings(b)
	for size, p := range pages {
		require.Equal(b.t, newestFirst, p[0], "every run, %d a page", size)
	}
	count, err := b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant})
	require.NoError(b.t, err)
	require.Equal(b.t, int64(len(newestFirst)), count.Count)
	byStatus, err := b.eng.Queries().CountRuns(b.ctx, CountRunsParams{TenantID: tenant, GroupBy: runquery.FieldStatus})
	require.NoError(b.t, err)
	got := map[string]int64{}
	for _, g := range byStatus.Groups {
		got[g.Value.S] = g.Count
	}
	require.Equal(b.t, want, got)
	return pages
}

// TestRunIndex_EveryRunIsListedOnceNewestFirstWhateverItsStatusAndLayoutOnEveryStore:
// runs of every status (most of them COMPLETED), a third of them an older weftd's in the older
// layout (a run index entry, no rs: entry by position) and a third an
// older weftd's in the present layout (both), are listed — every run, and
// every createdAt range — exactly as when all were of the present layout
// alone: each once, newest first, with the same pages and page tokens,
// counted once; another tenant's runs are not among them.
func TestRunIndex_EveryRunIsListedOnceNewestFirstWhateverItsStatusAndLayoutOnEveryStore(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t))
			b.noProjectionCheck = true // statuses set by hand
			var ids, others []string
			statuses := map[string]runstate.RunStatus{}
			for i := range 100 { // every status thrice, then COMPLETED: its scans read more than one store scan
				b.clock.Advance(time.Minute)
				for _, tn := range []string{tenant + "-other", tenant} {
					res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tn, Definition: seq("a"), SubmittedBy: "alice"})
					require.NoError(t, err)
					if tn != tenant {
						others = append(others, res.Run.RunID)
						continue
					}
					ids = append(ids, res.Run.RunID)
					statuses[res.Run.RunID] = runstate.RunCompleted
					if i < 3*len(AllRunStatuses) {
						statuses[res.Run.RunID] = AllRunStatuses[i%len(AllRunStatuses)]
					}
				}
			}
			setStatuses(b, statuses)
			queries := createdQueries(b, ids)
			pages := requireEveryRunListed(b, ids)
			tokens := requireQueriesMatch(b, ids, queries)

			var older, moved []string
			for i, id := range ids {
				switch i % 3 {
				case 0:
					older = append(older, id)
				case 1:
					moved = append(moved, id)
				}
			}
			toOlderLayout(b, append(slices.Clone(older), others[:10]...)...)
			withRunIndexEntries(b, append(slices.Clone(moved), others[10:20]...)...)
			stored := storedKeys(t, b.store)
			for _, id := range ids {
				snap := b.run(id)
				_, indexed := stored[string(record.RunIndexKey(tenant, snap.CreatedAt, id))]
				_, byPosition := stored[string(record.RunStatusKey(tenant, snap.Status, snap.CreatedAt, id))]
				require.Equal(t, slices.Contains(older, id) || slices.Contains(moved, id), indexed, "run %s's run index entry", id)
				require.Equal(t, !slices.Contains(older, id), byPosition, "run %s's rs: entry by position", id)
			}
			require.Equal(t, pages, requireEveryRunListed(b, ids), "pages changed with the layout")
			require.Equal(t, tokens, requireQueriesMatch(b, ids, queries), "page tokens changed with the layout")
		})
	}
}

// TestRunIndex_AnOlderRunMovedToThePresentLayoutIsListedOnce: older runs
// (a run index entry, the older layout) started, completed and cancelled
// under this engine move to the present layout and keep their run index
// entry: every run is listed once, newest first, page after page, by
// createdAt ranges too; a removal deletes the run index entry with the
// rest.
func TestRunIndex_AnOlderRunMovedToThePresentLayoutIsListedOnce(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			b := setupWith(t, backend.open(t), withRetention(time.Hour))
			var ids []string
			for range 30 {
				b.clock.Advance(time.Minute)
				res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: seq("a"), SubmittedBy: "alice"})
				require.NoError(t, err)
				ids = append(ids, res.Run.RunID)
			}
			queries := createdQueries(b, ids)
			pages := requireEveryRunListed(b, ids)
			tokens := requireQueriesMatch(b, ids, queries)
			toOlderLayout(b, ids[:20]...)
			require.Len(t, runIndexKeys(b), 20)
			require.Equal(t, pages, requireEveryRunListed(b, ids))
			require.Equal(t, tokens, requireQueriesMatch(b, ids, queries))

			for i, id := range ids {
				switch i % 4 {
				case 1, 2:
					_, err := b.eng.StartRun(b.ctx, StartParams{TenantID: tenant, RunID: id})
					require.NoError(t, err)
				case 3:
					_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: id, Reason: "test"})
					require.NoError(t, err)
				}
			}
			for range 15 {
				b.complete(b.poll("act-a"), `{}`)
			}
			for i, id := range ids[:20] {
				state, _, err := b.eng.records.LoadCheckpoint(b.ctx, id)
				require.NoError(t, err)
				require.Equal(t, i%4 != 0, state.CompactIndex, "run %d moved to the present layout by its decision", i)
			}
			require.Len(t, runIndexKeys(b), 20, "a move keeps the run index entry")
			requireIndexMatchesCheckpoints(b, ids)
			require.Equal(t, pages, requireEveryRunListed(b, ids), "pages changed with the moves")
			for query, pages := range requireQueriesMatch(b, ids, queries) {
				if !strings.Contains(query, "status") { // the moves changed the statuses
					require.Equal(t, tokens[query], pages, "page tokens changed with the moves: %s", query)
				}
			}

			b.clock.Advance(2 * time.Hour)
			for range 20 {
				b.tick()
			}
			kept := retainedRuns(b, ids)
			require.Len(t, kept, 8, "the PENDING runs are kept, the finished ones removed")
			require.Len(t, runIndexKeys(b), 5, "the older PENDING runs' run index entries are kept, the removed runs' deleted")
			requireEveryRunListed(b, ids)
			requireQueriesMatch(b, kept, queries)
		})
	}
}

// TestRunIndex_EveryRunStatusIsListed: AllRunStatuses, whose rs: prefixes
// a listing of every run reads, names every RunStatus engine/runstate
// declares — a status it left out would have its runs left out.
func TestRunIndex_EveryRunStatusIsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "runstate/status.go", nil, 0)
	require.NoError(t, err)
	var declared []runstate.RunStatus
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if typ, ok := v.Type.(*ast.Ident); !ok || typ.Name != "RunStatus" {
				continue
			}
			for _, value := range v.Values {
				lit := value.(*ast.BasicLit)
				declared = append(declared, runstate.RunStatus(strings.Trim(lit.Value, `"`)))
			}
		}
	}
	require.NotEmpty(t, declared)
	require.ElementsMatch(t, declared, AllRunStatuses)
}
