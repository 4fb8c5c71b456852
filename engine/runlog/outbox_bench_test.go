package runlog

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// BenchmarkResolveOutbox measures resolving a page of 100 outbox entries,
// each naming the 4 events of one decision, to their events' JSON: read
// back from the store, and from the outbox cache (each iteration notes the
// 100 committed batches in it first, the engine's part of the cost).
//
//	go test -run '^$' -bench ResolveOutbox -benchmem ./engine/runlog/
func BenchmarkResolveOutbox(b *testing.B) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b.Cleanup(func() { _ = st.Close() })
	type committed struct {
		batch    *store.Batch
		res      *store.CommitResult
		appended Appended
	}
	var page []store.Item
	var commits []committed
	for r := range 100 {
		run := fmt.Sprintf("run-%04d", r)
		var events []runstate.Event
		for seq := uint64(1); seq <= 4; seq++ {
			events = append(events, runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("ev-%s-%d", run, seq),
				RunID: run, Seq: seq, StepID: "step-a", PlanVersion: "1", IdempotencyKey: fmt.Sprintf("k-%d", seq),
				EmittedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: runstate.EventData{Output: json.RawMessage(`{"n":1}`)}})
		}
		batch := &store.Batch{}
		appended := AppendEvents(batch, "tenant-a", events, true, true)
		batch.Conditions = nil
		res, err := st.Commit(ctx, batch)
		require.NoError(b, err)
		commits = append(commits, committed{batch, res, appended})
		it, err := st.Get(ctx, OutboxKey(run, 1))
		require.NoError(b, err)
		page = append(page, it)
	}
	check := func(got []ResolvedEntry, err error) {
		if err != nil || len(got) != 100 || got[99].Err != nil || len(got[99].Events) != 4 {
			b.Fatalf("resolved %v, %v", got, err)
		}
	}
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			check(ResolveOutbox(ctx, st, page))
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache := NewOutboxCache(0, 0)
		b.ReportAllocs()
		for range b.N {
			for _, c := range commits {
				cache.Committed(c.batch, c.res, c.appended)
			}
			check(cache.ResolveOutbox(ctx, st, page))
		}
		if n, _ := cache.Len(); n != 0 {
			b.Fatalf("the cache holds %d entries after they were resolved", n)
		}
	})
}
