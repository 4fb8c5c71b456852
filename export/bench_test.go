package export_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
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
