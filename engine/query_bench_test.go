package engine

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// BenchmarkQuery_SelectiveListRuns: ListRuns with a query matching 50 runs
// (customer = "acme"), over 10 000 and 1 000 000 stored runs on Pebble,
// filled directly (fillRuns). The cost must stay flat: the plan reads the
// matches' index entries and runs, never the others. records/op is what
// the store answered per call. 1M runs only with WEFT_BENCH_QUERY_1M=1
// (the fill writes about 12 million keys).
func BenchmarkQuery_SelectiveListRuns(b *testing.B) {
	sizes := []int{10_000}
	if os.Getenv("WEFT_BENCH_QUERY_1M") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for _, stored := range sizes {
		b.Run("stored="+strconv.Itoa(stored), func(b *testing.B) {
			const matching = 50
			ctx := context.Background()
			pebble, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
			require.NoError(b, err)
			b.Cleanup(func() { _ = pebble.Close() })
			counter := &recordCounter{Store: pebble}
			eng, err := New(Config{Store: counter})
			require.NoError(b, err)
			fillRuns(b, ctx, eng, counter.Store, stored, func(i int) (string, string) {
				if i%(stored/matching) == 0 {
					return "rare", "acme"
				}
				return "bulk", "customer-" + strconv.Itoa(i%1000+1000)
			})
			p := ListRunsParams{TenantID: tenant, Query: `customer = "acme"`, PageSize: 100}
			b.ResetTimer()
			reads := counter.read(func() {
				for b.Loop() {
					res, err := eng.Queries().ListRuns(ctx, p)
					if err != nil || len(res.Runs) != matching {
						b.Fatalf("ListRuns: %v, %d runs", err, len(res.Runs))
					}
				}
			})
			b.ReportMetric(float64(reads)/float64(b.N), "records/op")
		})
	}
}

// BenchmarkQuery_StatusAndPlanListRuns: ListRuns with the queries whose
// plans read the status and plan entries — 50 of 10 000 PENDING runs are
// of plan "rare" (version "1") — on Pebble, filled directly (fillRuns).
// records/op is what the store answered per call.
func BenchmarkQuery_StatusAndPlanListRuns(b *testing.B) {
	const stored, matching = 10_000, 50
	ctx := context.Background()
	pebble, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
	require.NoError(b, err)
	b.Cleanup(func() { _ = pebble.Close() })
	counter := &recordCounter{Store: pebble}
	eng, err := New(Config{Store: counter})
	require.NoError(b, err)
	fillRuns(b, ctx, eng, counter.Store, stored, func(i int) (string, string) {
		if i%(stored/matching) == 0 {
			return "rare", "acme"
		}
		return "bulk", "customer-" + strconv.Itoa(i%1000+1000)
	})
	for _, c := range []struct {
		name, query string
		runs        int
	}{
		{"status", `status = "PENDING"`, 100},
		{"plan", `plan = "rare"`, matching},
		{"plan-version", `plan = "rare" AND planVersion = "1"`, matching},
		{"version-plan", `planVersion = "1" AND plan = "rare"`, matching},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := ListRunsParams{TenantID: tenant, Query: c.query, PageSize: 100}
			reads := counter.read(func() {
				for b.Loop() {
					res, err := eng.Queries().ListRuns(ctx, p)
					if err != nil || len(res.Runs) != c.runs {
						b.Fatalf("ListRuns: %v, %d runs", err, len(res.Runs))
					}
				}
			})
			b.ReportMetric(float64(reads)/float64(b.N), "records/op")
		})
	}
}

// BenchmarkQuery_EveryRunListRuns: ListRuns of every run (no query) and of
// a createdAt range, a page of 100, over 10 000 runs of five statuses and
// of one, on Pebble and PostgreSQL, filled directly (fillRunsOfStatus):
// each status's rs: entries and the run index are read merged. records/op
// is what the store answered per call.
func BenchmarkQuery_EveryRunListRuns(b *testing.B) {
	const stored = 10_000
	backends := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"pebble", func(b *testing.B) store.Store {
			st, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
			require.NoError(b, err)
			b.Cleanup(func() { _ = st.Close() })
			return st
		}},
		{"postgresql", func(b *testing.B) store.Store { return sqltest.Open(b, sqltest.NewSchema(b)) }},
	}
	spreads := []struct {
		name     string
		statuses []runstate.RunStatus
	}{
		{"statuses=5", []runstate.RunStatus{runstate.RunPending, runstate.RunRunning, runstate.RunCompleted, runstate.RunFailed, runstate.RunCancelled}},
		{"statuses=1", []runstate.RunStatus{runstate.RunCompleted}},
	}
	for _, backend := range backends {
		for _, spread := range spreads {
			ctx := context.Background()
			counter := &recordCounter{Store: backend.open(b)}
			eng, err := New(Config{Store: counter})
			require.NoError(b, err)
			fillRunsOfStatus(b, ctx, eng, counter.Store, stored, func(int) (string, string) { return "bulk", "acme" },
				func(i int) runstate.RunStatus { return spread.statuses[i%len(spread.statuses)] })
			for _, c := range []struct{ name, query string }{
				{"every", ""},
				{"created", `createdAt < "` + testStart.Add(stored/2*time.Millisecond).Format(time.RFC3339Nano) + `"`},
			} {
				b.Run(backend.name+"/"+spread.name+"/"+c.name, func(b *testing.B) {
					p := ListRunsParams{TenantID: tenant, Query: c.query, PageSize: 100}
					reads := counter.read(func() {
						for b.Loop() {
							res, err := eng.Queries().ListRuns(ctx, p)
							if err != nil || len(res.Runs) != 100 {
								b.Fatalf("ListRuns: %v, %d runs", err, len(res.Runs))
							}
						}
					})
					b.ReportMetric(float64(reads)/float64(b.N), "records/op")
				})
			}
		}
	}
}
