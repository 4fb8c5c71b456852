package export_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// BenchmarkWorker_PassOverAnExportedOutbox measures one pass that exports a
// new run's 24 entries on Pebble after `exported` entries were exported and
// deleted (their tombstones wait for a compaction): resumed where the last
// pass left off, and from the beginning of the outbox (a closed worker, as
// every pass was before; the cost of the tombstones).
//
//	go test -run '^$' -bench PassOverAnExportedOutbox ./export/
func BenchmarkWorker_PassOverAnExportedOutbox(b *testing.B) {
	for _, exported := range []int{1_000, 100_000} {
		for _, mode := range []string{"resumed", "from-the-beginning"} {
			b.Run(fmt.Sprintf("exported=%d/%s", exported, mode), func(b *testing.B) {
				st, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
				require.NoError(b, err)
				b.Cleanup(func() { _ = st.Close() })
				w, err := export.NewWorker(st, export.NewMemoryBus(export.WithMaxLen(1000)), export.Config{BatchSize: 500})
				require.NoError(b, err)
				if mode == "from-the-beginning" {
					w.Close()
				}
				writeOutbox(b, st, exported/24, 24)
				for {
					stats, err := w.RunOnce(context.Background())
					require.NoError(b, err)
					if stats.Seen == 0 {
						break
					}
				}
				b.ResetTimer()
				for i := range b.N {
					b.StopTimer()
					run := fmt.Sprintf("run-x%08d", i) // newer than every exported run
					batch := &store.Batch{}
					for seq := uint64(1); seq <= 24; seq++ {
						batch.Ops = append(batch.Ops, entryOps(b, run, seq)...)
					}
					_, err := st.Commit(context.Background(), batch)
					require.NoError(b, err)
					b.StartTimer()
					stats, err := w.RunOnce(context.Background())
					require.NoError(b, err)
					require.Equal(b, 24, stats.Published)
				}
			})
		}
	}
}

// BenchmarkWorker_PassOnPostgreSQL measures one pass that exports 100
// runs' entries, each naming the 4 events of one decision (400 events),
// from PostgreSQL to the in-process bus: with the events read back from
// the store, and taken from the outbox cache its process filled as it
// committed them (the engine's noting included).
//
//	CI=1 go test -run '^$' -bench PassOnPostgreSQL -benchmem ./export/
func BenchmarkWorker_PassOnPostgreSQL(b *testing.B) {
	for _, mode := range []string{"store", "cached"} {
		b.Run(mode, func(b *testing.B) {
			st := sqltest.Open(b, sqltest.NewSchema(b))
			var cache *runlog.OutboxCache
			if mode == "cached" {
				cache = runlog.NewOutboxCache(0, 0)
			}
			w, err := export.NewWorker(st, export.NewMemoryBus(export.WithMaxLen(1000)), export.Config{BatchSize: 100, OutboxCache: cache})
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				var noted []func()
				for r := range 100 {
					run := fmt.Sprintf("run-%06d-%03d", i, r)
					events := make([]runstate.Event, 4)
					for s := range events {
						events[s] = testEvent(run, uint64(s+1))
					}
					// the decision's checkpoint first, as the engine writes it
					batch := &store.Batch{Ops: []store.Op{runlog.PutCheckpoint(run, &runstate.State{LastSeq: 4})}}
					appended := runlog.AppendEvents(batch, tenant, events, runlog.OutboxPut, false)
					res, err := st.Commit(context.Background(), batch)
					require.NoError(b, err)
					noted = append(noted, func() { cache.Committed(batch, res, appended) })
				}
				b.StartTimer()
				for _, note := range noted {
					note()
				}
				stats, err := w.RunOnce(context.Background())
				require.NoError(b, err)
				require.Equal(b, 400, stats.Published)
			}
		})
	}
}
