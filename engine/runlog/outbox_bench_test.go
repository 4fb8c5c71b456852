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
// each naming the 4 events of one decision, to their events' JSON.
//
//	go test -run '^$' -bench ResolveOutbox -benchmem ./engine/runlog/
func BenchmarkResolveOutbox(b *testing.B) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b.Cleanup(func() { _ = st.Close() })
	var page []store.Item
	for r := range 100 {
		run := fmt.Sprintf("run-%04d", r)
		var events []runstate.Event
		for seq := uint64(1); seq <= 4; seq++ {
			events = append(events, runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("ev-%s-%d", run, seq),
				RunID: run, Seq: seq, StepID: "step-a", PlanVersion: "1", IdempotencyKey: fmt.Sprintf("k-%d", seq),
				EmittedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: runstate.EventData{Output: json.RawMessage(`{"n":1}`)}})
		}
		batch := &store.Batch{}
		AppendEvents(batch, "tenant-a", events, true, true)
		batch.Conditions = nil
		_, err := st.Commit(ctx, batch)
		require.NoError(b, err)
		it, err := st.Get(ctx, OutboxKey(run, 1))
		require.NoError(b, err)
		page = append(page, it)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		got, err := ResolveOutbox(ctx, st, page)
		if err != nil || len(got) != 100 || got[99].Err != nil || len(got[99].Events) != 4 {
			b.Fatalf("resolved %v, %v", got, err)
		}
	}
}
