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

// BenchmarkResolveOutbox measures resolving a page of 100 outbox entries
// an older weftd wrote, each naming the 4 events of one decision, to their
// events' JSON, read back from the store.
//
//	go test -run '^$' -bench ResolveOutbox -benchmem ./engine/runlog/
func BenchmarkResolveOutbox(b *testing.B) {
	ctx := context.Background()
	st, page, _ := committedPage(b, benchEvents)
	b.ReportAllocs()
	for range b.N {
		got, err := ResolveOutbox(ctx, st, page)
		checkPage(b, got, err)
	}
}

func benchEvents(r int) []runstate.Event {
	run := fmt.Sprintf("run-%04d", r)
	var events []runstate.Event
	for seq := uint64(1); seq <= 4; seq++ {
		events = append(events, runstate.Event{Type: runstate.EvStepCompleted, ID: fmt.Sprintf("ev-%s-%d", run, seq),
			RunID: run, Seq: seq, StepID: "step-a", PlanVersion: "1", IdempotencyKey: fmt.Sprintf("k-%d", seq),
			EmittedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: runstate.EventData{Output: json.RawMessage(`{"n":1}`)}})
	}
	return events
}

// BenchmarkResolveRuns measures resolving 100 runs' entries, each naming
// the 4 events of one decision, to their events' JSON: read back from the
// store, and from the outbox cache (each iteration notes the 100 committed
// batches in it first, the engine's part of the cost).
//
//	go test -run '^$' -bench ResolveRuns -benchmem ./engine/runlog/
func BenchmarkResolveRuns(b *testing.B) {
	ctx := context.Background()
	st, reqs, commits := committedRuns(b, benchEvents)
	check := func(got []ResolvedRun, err error) {
		if err != nil || len(got) != 100 || got[99].Err != nil || len(got[99].Events) != 4 {
			b.Fatalf("resolved %v, %v", got, err)
		}
	}
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			check((*OutboxCache)(nil).ResolveRuns(ctx, st, reqs))
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache := NewOutboxCache(0, 0)
		b.ReportAllocs()
		for range b.N {
			for _, c := range commits {
				cache.Committed(c.batch, c.res, c.appended)
			}
			check(cache.ResolveRuns(ctx, st, reqs))
		}
	})
}

// committedRuns commits, on a memory store, the events of 100 decisions
// (eventsOf of 0 to 99, each one run's first, with its checkpoint and its
// run's entry), and answers the store, the requests for their runs' events
// and the commits.
func committedRuns(b *testing.B, eventsOf func(r int) []runstate.Event) (*memstore.Store, []RunRequest, []committed) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b.Cleanup(func() { _ = st.Close() })
	var reqs []RunRequest
	var commits []committed
	for r := range 100 {
		events := eventsOf(r)
		runID := events[0].RunID
		batch := &store.Batch{Ops: []store.Op{PutCheckpoint(runID, &runstate.State{LastSeq: events[len(events)-1].Seq})}}
		appended := AppendEvents(batch, "tenant-a", events, OutboxPut, false)
		res, err := st.Commit(ctx, batch)
		require.NoError(b, err)
		commits = append(commits, committed{batch, res, appended})
		reqs = append(reqs, RunRequest{RunID: runID, TenantID: "tenant-a", From: events[0].Seq})
	}
	return st, reqs, commits
}

// decisionEvents are the events one decision of a step's result appends,
// as the engine writes them: the attempt recorded, the step completed with
// its output, the next step scheduled as a task and started.
func decisionEvents(run int, seq uint64) []runstate.Event {
	at := time.Date(2026, 11, 1, 12, 0, 0, 123456789, time.UTC).Add(time.Duration(run) * time.Millisecond)
	runID := fmt.Sprintf("0195b3c2-7c1e-7e3a-9d41-%012x", run)
	evs := []runstate.Event{
		{Type: runstate.EvStepAttemptRecorded, StepID: "charge", LogicalAttempt: 1, EngineAttempt: 1, EmittedBy: "engine",
			Data: runstate.EventData{CorrelationID: "corr-7f3a", Attempt: &runstate.Attempt{LogicalAttempt: 1, EngineAttempt: 1,
				Outcome: runstate.AttemptSucceeded, StartedAt: at.Add(-3 * time.Millisecond), CompletedAt: at, WorkerID: "worker-1"}}},
		{Type: runstate.EvStepCompleted, StepID: "charge", LogicalAttempt: 1, EmittedBy: "engine",
			Data: runstate.EventData{Status: string(runstate.StepSucceeded), CompletedAt: at,
				Output: json.RawMessage(`{"charge_id":"ch_3Nx8f2","amount":1250,"currency":"eur","captured":true}`)}},
		{Type: runstate.EvStepScheduled, StepID: "ship", LogicalAttempt: 1, EmittedBy: "engine",
			Data: runstate.EventData{Status: "SCHEDULED", TaskID: fmt.Sprintf("0195b3c2-7c1f-7e3a-9d41-%012x", run), Queue: "default", NotBefore: at}},
		{Type: runstate.EvStepStarted, StepID: "ship", LogicalAttempt: 1, EmittedBy: "activity-worker:worker-2",
			Data: runstate.EventData{Status: string(runstate.StepRunning), WorkerID: "worker-2", StartedAt: at}},
	}
	for i := range evs {
		ev := &evs[i]
		ev.RunID, ev.Seq, ev.PlanVersion, ev.EmittedAt = runID, seq+uint64(i), "3", at
		ev.ID = fmt.Sprintf("0195b3c2-7c20-7e3a-9d41-%08x%04x", run, i)
		ev.IdempotencyKey = runstate.IdempotencyKey(runID, ev.StepID, ev.LogicalAttempt, ev.Type, ev.PlanVersion, ev.EngineAttempt)
	}
	return evs
}

// BenchmarkResolveOutbox_Decisions measures resolving a page of 100 outbox
// entries an older weftd wrote, each naming the 4 events of one decision as
// the engine writes them (decisionEvents: UUIDs, idempotency keys, times,
// an attempt, an output), from the store, in new memory and in buffers
// reused from page to page as the export worker's are.
//
//	go test -run '^$' -bench ResolveOutbox_Decisions -benchmem ./engine/runlog/
func BenchmarkResolveOutbox_Decisions(b *testing.B) {
	ctx := context.Background()
	st, page, _ := committedPage(b, func(r int) []runstate.Event { return decisionEvents(r, 5) })
	check := func(got []ResolvedEntry, err error) { checkPage(b, got, err) }
	for _, reuse := range []bool{false, true} {
		var bufs OutboxBuffers
		b.Run(fmt.Sprintf("store/reused=%v", reuse), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if reuse {
					check(ResolveOutboxInto(ctx, st, page, &bufs))
				} else {
					check(ResolveOutbox(ctx, st, page))
				}
			}
		})
	}
}

// committed is a batch a benchmark committed, as the outbox cache notes it.
type committed struct {
	batch    *store.Batch
	res      *store.CommitResult
	appended Appended
}

// committedPage commits, on a memory store, the events of 100 decisions
// (eventsOf of 0 to 99, each one run's, with key rows and the outbox
// entries an older weftd wrote), and
// answers the store, the page of their outbox entries and the commits.
func committedPage(b *testing.B, eventsOf func(r int) []runstate.Event) (*memstore.Store, []store.Item, []committed) {
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	b.Cleanup(func() { _ = st.Close() })
	var page []store.Item
	var commits []committed
	for r := range 100 {
		events := eventsOf(r)
		batch := &store.Batch{}
		appended := olderAppend(batch, "tenant-a", events, true)
		batch.Conditions = nil
		res, err := st.Commit(ctx, batch)
		require.NoError(b, err)
		commits = append(commits, committed{batch, res, appended})
		it, err := st.Get(ctx, OutboxKey(events[0].RunID, events[0].Seq))
		require.NoError(b, err)
		page = append(page, it)
	}
	return st, page, commits
}

// checkPage fails b unless a page of committedPage resolved whole.
func checkPage(b *testing.B, got []ResolvedEntry, err error) {
	if err != nil || len(got) != 100 || got[99].Err != nil || len(got[99].Events) != 4 {
		b.Fatalf("resolved %v, %v", got, err)
	}
}
