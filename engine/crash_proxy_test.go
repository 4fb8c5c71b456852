package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// proxiedBackend is the SQL store on path ("postgresql" or "cockroachdb"),
// reached through a PostgreSQL wire fault proxy that drops the connection
// right after the dropAt-th COMMIT committed (0: never); *proxy is set to
// the proxy when the backend opens.
func proxiedBackend(path string, dropAt int, proxy **sqltest.Proxy) crashBackend {
	return crashBackend{name: path + " through the fault proxy", open: func(t *testing.T) (store.Store, func(store.Store) store.Store) {
		db := sqltest.Require(t)
		schema := db.NewSchema(t)
		p := sqltest.StartProxy(t, db.URL)
		if dropAt > 0 {
			p.DropCommitAfter(dropAt-1, 1)
		}
		*proxy = p
		via := db.Through(p)
		return via.OpenOnPath(t, schema, path), func(store.Store) store.Store { return via.OpenOnPath(t, schema, path) }
	}}
}

// TestCrash_ACommitWhoseAnswerTheWireLostRecordsEachResultOnce drops, in
// turn, the connection of each COMMIT of a five-step run once the database
// committed it: the engine gets *store.OutcomeUnknownError for a commit that
// happened, on PostgreSQL's path and on CockroachDB's, and still records
// each step's result exactly once.
func TestCrash_ACommitWhoseAnswerTheWireLostRecordsEachResultOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a run per COMMIT: skipped in -short")
	}
	for _, path := range []string{"postgresql", "cockroachdb"} {
		t.Run(path, func(t *testing.T) {
			var proxy *sqltest.Proxy
			driveCrashRunWith(t, proxiedBackend(path, 0, &proxy), 0, false, completeEach)
			commits := proxy.Commits()
			require.Greater(t, commits, crashSteps)
			t.Logf("%d COMMITs in a clean run", commits)
			for dropAt := 1; dropAt <= commits; dropAt++ {
				driveCrashRunWith(t, proxiedBackend(path, dropAt, &proxy), 0, false, completeEach)
				if proxy.Commits() >= dropAt {
					require.Equal(t, 1, proxy.CommitsDropped(), "COMMIT %d: dropped after it committed", dropAt)
				}
			}
		})
	}
}

// TestScenarios_ThroughTheFaultProxyOnCockroachDBsPath runs every engine
// scenario (the concurrent duplicate signals accepted exactly once among
// them) on CockroachDB's code path, through the fault proxy relaying every
// message unchanged.
func TestScenarios_ThroughTheFaultProxyOnCockroachDBsPath(t *testing.T) {
	if testing.Short() {
		t.Skip("every scenario once more: skipped in -short")
	}
	db := sqltest.Require(t)
	for name, scenario := range scenarios {
		t.Run(name, func(t *testing.T) {
			p := sqltest.StartProxy(t, db.URL)
			st := db.Through(p).OpenOnPath(t, db.NewSchema(t), "cockroachdb")
			scenario(t, setupWith(t, st))
		})
	}
}
