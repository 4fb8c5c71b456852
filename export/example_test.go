package export_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// An export worker publishes what the engine wrote to the outbox.
func Example() {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	defer st.Close()
	// The engine writes this in the batch that appends the event (Config.Outbox).
	ev, _ := json.Marshal(runstate.Event{Type: runstate.EvRunCompleted, ID: "ev-1", RunID: "run-1", Seq: 7})
	entry, _ := json.Marshal(runlog.OutboxEntry{TenantID: "acme", Event: ev})
	_, _ = st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(export.OutboxKey("run-1", 7), entry)}})

	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	if err != nil {
		panic(err)
	}
	stats, _ := w.RunOnce(ctx)
	m := bus.Messages()[0]
	fmt.Println(stats.Published, m.TenantID, m.RunID, m.RunSeq, m.EventType, m.EventID)
	// Output: 1 acme run-1 7 RunCompleted ev-1
}
