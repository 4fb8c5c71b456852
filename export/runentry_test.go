package export_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
)

// putRunEvents commits events first..last of run (one record each), with
// the run's checkpoint, and the run's entry from from when from is not 0.
func putRunEvents(t *testing.T, st store.Store, run string, first, last, from uint64) {
	t.Helper()
	b := &store.Batch{Ops: []store.Op{runlog.PutCheckpoint(run, &runstate.State{LastSeq: last})}}
	for seq := first; seq <= last; seq++ {
		ev := testEvent(run, seq)
		b.Ops = append(b.Ops, store.Put(keyspace.Run.Key(run, "ev", store.Uint64(seq)), runcodec.AppendEvent(nil, &ev)))
	}
	if from != 0 {
		b.Ops = append(b.Ops, store.Put(runlog.RunOutboxKey(run), runcodec.AppendOutboxRun(nil, runcodec.OutboxRun{TenantID: tenant, From: from})))
	}
	_, err := st.Commit(context.Background(), b)
	require.NoError(t, err)
}

// putOlderEntry commits an older weftd's entry ob:{run}:{first} naming
// first..last.
func putOlderEntry(t *testing.T, st store.Store, run string, first, last uint64) {
	t.Helper()
	ref := runcodec.OutboxRef{TenantID: tenant}
	if last > first {
		ref.LastSeq = last
	}
	_, err := st.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(export.OutboxKey(run, first), runcodec.AppendOutboxRef(nil, ref))}})
	require.NoError(t, err)
}

// firstPublished answers the run_seqs of each run's messages, each the
// first time it was published, in publish order, and how many were
// published again.
func firstPublished(msgs []export.Message) (map[string][]uint64, int) {
	out := map[string][]uint64{}
	seen := map[ref]bool{}
	dups := 0
	for _, m := range msgs {
		r := ref{m.RunID, m.RunSeq}
		if seen[r] {
			dups++
			continue
		}
		seen[r] = true
		out[m.RunID] = append(out[m.RunID], m.RunSeq)
	}
	return out, dups
}

// An older weftd's entries of a run beside the run's entry (a rolling
// upgrade) publish in run_seq order: those naming events before the run's
// entry first (though its key sorts first), those naming events it names
// too with it, once — on every page size, the run's entries split across
// pages or not — and all are deleted.
func TestWorker_OlderEntriesMixedWithARunsEntryPublishInRunSeqOrder(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		for _, size := range []int{1, 2, 3, 100} {
			t.Run(fmt.Sprintf("%s/batch=%d", be.name, size), func(t *testing.T) {
				st := be.open(t)
				putRunEvents(t, st, "run-a", 1, 9, 0)
				putOlderEntry(t, st, "run-a", 1, 2)
				putOlderEntry(t, st, "run-a", 3, 5) // straddles the run's entry's first
				putOlderEntry(t, st, "run-a", 7, 8) // named by the run's entry too
				_, err := st.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(runlog.RunOutboxKey("run-a"),
					runcodec.AppendOutboxRun(nil, runcodec.OutboxRun{TenantID: tenant, From: 4}))}})
				require.NoError(t, err)
				putRunEvents(t, st, "run-b", 1, 3, 1)
				bus := export.NewMemoryBus()
				w, err := export.NewWorker(st, bus, export.Config{BatchSize: size})
				require.NoError(t, err)
				drain(t, w)
				got, dups := firstPublished(bus.Messages())
				require.Equal(t, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}, got["run-a"])
				require.Equal(t, []uint64{1, 2, 3}, got["run-b"])
				require.Zero(t, dups, "each once")
				require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()), "every entry deleted")
			})
		}
	}
}

// A run's entry whose events were published but whose deletion did not
// happen (the worker stopped between) is published again by the next
// worker, whole: at least once.
func TestWorker_ARunsEntryPublishedButNotDeletedIsPublishedAgain(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	putRunEvents(t, st, "run-a", 1, 4, 1)
	ctx, cancel := context.WithCancel(context.Background())
	bus := export.NewMemoryBus()
	pub := &killingPublisher{inner: bus, killEvery: 4, kill: cancel} // killed once the run's 4th is out
	w, err := export.NewWorker(st, pub, export.Config{})
	require.NoError(t, err)
	_, err = w.RunOnce(ctx)
	require.Error(t, err)
	require.Equal(t, 1, countPrefix(t, st, runlog.OutboxPrefix()), "not deleted")
	w2, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	drain(t, w2)
	got, dups := firstPublished(bus.Messages())
	require.Equal(t, []uint64{1, 2, 3, 4}, got["run-a"])
	require.Equal(t, 4, dups, "published again, whole")
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()))
}

// Events a run appends while the worker publishes make its deletion fail
// (the run's checkpoint moved): the entry stays, and the next pass
// publishes only the new events (the worker's mark), then deletes it.
func TestWorker_ARunThatAppendedMeanwhileKeepsItsEntryAndPublishesOnlyTheNewEvents(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			st := be.open(t)
			putRunEvents(t, st, "run-a", 1, 3, 1)
			bus := export.NewMemoryBus()
			appended := false
			pub := publishFunc(func(ctx context.Context, m export.Message) error {
				if !appended {
					appended = true
					putRunEvents(t, st, "run-a", 4, 5, 0) // a decision commits mid-pass
				}
				return bus.Publish(ctx, m)
			})
			w, err := export.NewWorker(st, pub, export.Config{})
			require.NoError(t, err)
			stats, err := w.RunOnce(context.Background())
			require.NoError(t, err)
			require.Equal(t, 3, stats.Published)
			require.Equal(t, 1, countPrefix(t, st, runlog.OutboxPrefix()), "the deletion lost to the decision")
			drain(t, w)
			got, dups := firstPublished(bus.Messages())
			require.Equal(t, []uint64{1, 2, 3, 4, 5}, got["run-a"])
			require.Zero(t, dups, "the next pass published from the mark")
			require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()))
		})
	}
}

// A run further behind than one pass reads has its entry moved on, in the
// store, past what was published: a new worker (a restart) goes on from
// there.
func TestWorker_ARunFarBehindMovesItsEntryOnAcrossRestarts(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	n := uint64(runlog.MaxRunEvents + 10)
	putRunEvents(t, st, "run-a", 1, n, 1)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	_, err = w.RunOnce(context.Background())
	require.NoError(t, err)
	it, err := st.Get(context.Background(), runlog.RunOutboxKey("run-a"))
	require.NoError(t, err)
	entry, err := runlog.ParseRunEntry(it)
	require.NoError(t, err)
	require.Equal(t, uint64(runlog.MaxRunEvents+1), entry.From)
	w2, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	drain(t, w2)
	got, dups := firstPublished(bus.Messages())
	require.Len(t, got["run-a"], int(n))
	require.Zero(t, dups)
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()))
}

type publishFunc func(context.Context, export.Message) error

func (f publishFunc) Publish(ctx context.Context, m export.Message) error { return f(ctx, m) }

// A run's entry whose event the bus refuses MaxAttempts times moves, with
// the events it named, to dlq:{run}:{run_seq of its first}, raising the
// alert; the run's later events get a new entry and are exported; the
// replay puts the dead events back, one entry each, and they export too.
func TestWorker_ARunsEntryRefusedMaxAttemptsIsDeadLetteredWithItsEventsAndReplays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	putRunEvents(t, st, "run-a", 1, 3, 1)
	bus := export.NewMemoryBus()
	pub := &rejectingPublisher{inner: bus, reject: map[string]bool{eventID("run-a", 2): true}}
	clock := newFakeClock()
	logs := &logBuffer{}
	w, err := export.NewWorker(st, pub, export.Config{MaxAttempts: 2, BackoffInitial: time.Second, BackoffCap: time.Second,
		Clock: clock, Logger: newLogger(logs)})
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, stats.Retried)
	require.Equal(t, 1, countPrefix(t, st, export.RetryPrefix()), "obr:{run}: counts the run's entry's failures")
	clock.Advance(time.Minute)
	stats, err = w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, stats.DeadLettered)
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()))
	require.Zero(t, countPrefix(t, st, export.RetryPrefix()))
	require.Contains(t, logs.String(), export.AlertDeliveryFailed)
	dead, _, err := export.ListDeadLetters(ctx, st, &export.ListDeadLettersParams{})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, export.DeadLetterKey("run-a", 1), dead[0].Key)
	require.Len(t, dead[0].Events, 3, "whole without the log")
	require.Equal(t, uint64(2), dead[0].RunSeq, "the event refused")

	putRunEvents(t, st, "run-a", 4, 5, 4) // the run goes on: a new entry
	delete(pub.reject, eventID("run-a", 2))
	require.NoError(t, export.Replay(ctx, st, dead[0].Key))
	drain(t, w)
	got, _ := firstPublished(bus.Messages())
	require.ElementsMatch(t, []uint64{1, 2, 3, 4, 5}, got["run-a"], "every event exported")
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()))
	require.Zero(t, countPrefix(t, st, export.DeadLetterPrefix()))
}
