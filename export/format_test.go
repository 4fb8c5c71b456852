package export_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
)

// An older weftd's outbox entries hold a copy of their event; they export
// beside the references a newer one writes, in order, as the same message.
func TestWorker_OlderEntriesThatCopyTheirEventStillExportBesideReferences(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := be.open(t)
			var refs []ref
			b := &store.Batch{}
			for seq := uint64(1); seq <= 6; seq++ {
				refs = append(refs, ref{"run-0000", seq})
				if seq%2 == 1 { // an older weftd's entry, and no event stored beside it: it is not read
					b.Ops = append(b.Ops, store.Put(export.OutboxKey("run-0000", seq), legacyOutboxValue(t, "run-0000", seq)))
					continue
				}
				b.Ops = append(b.Ops, entryOps(t, "run-0000", seq)...)
			}
			_, err := st.Commit(ctx, b)
			require.NoError(t, err)
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(st, bus, export.Config{})
			require.NoError(t, err)
			drain(t, w)
			msgs := bus.Messages()
			requireAllDelivered(t, st, refs, msgs)
			for i, m := range msgs {
				require.Equal(t, uint64(i+1), m.RunSeq, "in run_seq order")
				var ev map[string]any
				require.NoError(t, json.Unmarshal(m.Event, &ev), "the bus carries the event's JSON")
				require.Equal(t, m.EventID, ev["event_id"])
				require.Equal(t, "StepCompleted", ev["event_type"])
			}
		})
	}
}

// A reference whose event is not stored cannot be published: it is
// dead-lettered as undecodable, and the run's other events go on.
func TestWorker_AReferenceToAMissingEventIsDeadLetteredAsUndecodable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeOutbox(t, st, 1, 3)
	_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(export.OutboxKey("run-0000", 4), outboxValue(t, "run-0000", 4))}})
	require.NoError(t, err)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, stats.Published)
	require.Equal(t, 1, stats.DeadLettered)
	it, err := st.Get(ctx, export.DeadLetterKey("run-0000", 4))
	require.NoError(t, err)
	var d export.DeadLetter
	require.NoError(t, json.Unmarshal(it.Value, &d))
	require.Equal(t, export.ReasonUndecodable, d.Reason)
	require.Contains(t, d.LastError, "not stored")
	require.Equal(t, outboxValue(t, "run-0000", 4), d.RawEntry, "the entry as it was, for replay once repaired")
	require.Len(t, bus.Messages(), len(refs))
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()))
}

// writeDecisions writes, for each run, entries events at a time as the
// engine does when one decision appends several: the events, and one entry
// ob:{run}:{first} that names them up to the last. It answers every event.
func writeDecisions(t *testing.T, st store.Store, runs, entries, perEntry int) []ref {
	t.Helper()
	var refs []ref
	b := &store.Batch{}
	for r := range runs {
		run := fmt.Sprintf("run-%04d", r)
		for e := range entries {
			first := uint64(e*perEntry + 1)
			for seq := first; seq < first+uint64(perEntry); seq++ {
				refs = append(refs, ref{run, seq})
				ev := testEvent(run, seq)
				b.Ops = append(b.Ops, store.Put(keyspace.Run.Key(run, "ev", store.Uint64(seq)), runcodec.AppendEvent(nil, &ev)))
			}
			b.Ops = append(b.Ops, store.Put(export.OutboxKey(run, first),
				runcodec.AppendOutboxRef(nil, runcodec.OutboxRef{TenantID: tenant, LastSeq: first + uint64(perEntry) - 1})))
		}
	}
	_, err := st.Commit(context.Background(), b)
	require.NoError(t, err)
	return refs
}

func TestWorker_AnEntryNamingSeveralEventsPublishesThemAllInRunSeqOrder(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		for _, batched := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batched=%v", be.name, batched), func(t *testing.T) {
				t.Parallel()
				st := be.open(t)
				refs := writeDecisions(t, st, 7, 5, 3)
				bus := export.NewMemoryBus()
				pub := &rejectingPublisher{inner: bus, reject: map[string]bool{}}
				var publisher export.Publisher = pub
				if batched {
					publisher = &rejectingBatchPublisher{rejectingPublisher: pub}
				}
				w, err := export.NewWorker(st, publisher, export.Config{})
				require.NoError(t, err)
				stats, err := w.RunOnce(context.Background())
				require.NoError(t, err)
				require.Equal(t, 7*5, stats.Seen, "one entry per decision")
				require.Equal(t, len(refs), stats.Published, "every event of every entry")
				msgs := bus.Messages()
				require.Zero(t, requireAllDelivered(t, st, refs, msgs), "each once")
				last := map[string]uint64{}
				for _, m := range msgs {
					require.Equal(t, last[m.RunID]+1, m.RunSeq, "a run's events in run_seq order")
					last[m.RunID] = m.RunSeq
				}
			})
		}
	}
}

// flakyPublisher refuses each of the events it names the first time only.
type flakyPublisher struct {
	inner export.Publisher
	mu    sync.Mutex
	flaky map[string]bool
}

func (p *flakyPublisher) Publish(ctx context.Context, msg export.Message) error {
	p.mu.Lock()
	refuse := p.flaky[msg.EventID]
	delete(p.flaky, msg.EventID)
	p.mu.Unlock()
	if refuse {
		return errors.New("bus refused the event this once")
	}
	return p.inner.Publish(ctx, msg)
}

// A refusal inside an entry records the failure against the entry: its
// events before the refused one were published and are published again with
// it (at least once), and the run's later entries wait behind it.
func TestWorker_ARefusalInsideAnEntryRetriesTheWholeEntryAndHoldsTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeDecisions(t, st, 2, 3, 3) // run-0000: entries 1-3, 4-6, 7-9
	bus := export.NewMemoryBus()
	pub := &flakyPublisher{inner: bus, flaky: map[string]bool{eventID("run-0000", 5): true}}
	clock := newFakeClock()
	cfg := export.Config{MaxAttempts: 3, BackoffInitial: time.Second, BackoffCap: time.Second, Clock: clock}
	w, err := export.NewWorker(st, pub, cfg)
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, stats.Retried)
	require.Equal(t, 1, stats.Waiting, "run-0000's entry 7-9 waits behind 4-6")
	require.Equal(t, 3+9, stats.Published, "the events of the entries published whole: 1-3 and run-0001's")
	it, err := st.Get(ctx, export.RetryKey("run-0000", 4))
	require.NoError(t, err, "the failure is counted against the entry")
	require.NotContains(t, string(it.Value), payloadMarker)

	clock.Advance(time.Second)
	drain(t, w)
	msgs := bus.Messages()
	require.Equal(t, 1, requireAllDelivered(t, st, refs, msgs), "event 4 went out twice, nothing else")
	var run0 []uint64
	for _, m := range msgs {
		if m.RunID == "run-0000" {
			run0 = append(run0, m.RunSeq)
		}
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 4, 5, 6, 7, 8, 9}, run0)
}

// An entry that names several events is dead-lettered with each of them, so
// that the record is whole once retention removed the run's log; a replay
// puts them back one entry each and publishes them all.
func TestWorker_AnEntryNamingSeveralEventsIsDeadLetteredWithItsEventsAndReplayPublishesThemAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeDecisions(t, st, 1, 2, 3)
	entry, err := st.Get(ctx, export.OutboxKey("run-0000", 4))
	require.NoError(t, err)
	bus := export.NewMemoryBus()
	pub := &rejectingPublisher{inner: bus, reject: map[string]bool{eventID("run-0000", 5): true}}
	w, err := export.NewWorker(st, pub, export.Config{MaxAttempts: 1})
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, stats.DeadLettered)
	dls, _, err := export.ListDeadLetters(ctx, st, &export.ListDeadLettersParams{})
	require.NoError(t, err)
	require.Len(t, dls, 1)
	d := dls[0].DeadLetter
	require.Equal(t, export.ReasonMaxAttempts, d.Reason)
	require.Equal(t, eventID("run-0000", 5), d.EventID, "the envelope of the event the bus refused")
	require.Empty(t, d.RawEntry)
	require.Len(t, d.Events, 3, "each event the entry named")
	for i, ev := range d.Events {
		require.Equal(t, uint64(4+i), ev.RunSeq)
		var e runlog.OutboxEntry
		require.NoError(t, json.Unmarshal(ev.Entry, &e))
		require.Equal(t, tenant, e.TenantID)
		require.Contains(t, string(e.Event), eventID("run-0000", uint64(4+i)))
	}
	require.NotEqual(t, entry.Value, d.Events[0].Entry)

	// The run's log is gone (retention): the record alone is replayed.
	var gone []store.Op
	for seq := uint64(1); seq <= 6; seq++ {
		gone = append(gone, store.Delete(keyspace.Run.Key("run-0000", "ev", store.Uint64(seq))))
	}
	_, err = st.Commit(ctx, &store.Batch{Ops: gone})
	require.NoError(t, err)
	delete(pub.reject, eventID("run-0000", 5))
	require.NoError(t, export.Replay(ctx, st, dls[0].Key))
	require.Equal(t, 3, countPrefix(t, st, runlog.OutboxPrefix()), "one entry per event")
	drain(t, w)
	require.Equal(t, 1, requireAllDelivered(t, st, refs, bus.Messages()), "event 4 went out before the refusal, and again")
}

// After a pass that published, Run lingers before the next pass, so that the
// next finds many decisions' entries at once; a negative Linger goes on at
// once.
func TestRun_LingersAfterAPassThatPublished(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		linger   time.Duration
		lingered bool
	}{{time.Hour, true}, {-1, false}} {
		t.Run(tc.linger.String(), func(t *testing.T) {
			t.Parallel()
			st := memStore(t)
			writeOutbox(t, st, 1, 2)
			bus := export.NewMemoryBus()
			w, err := export.NewWorker(st, bus, export.Config{Linger: tc.linger, PollInterval: time.Millisecond})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			require.Eventually(t, func() bool { return bus.Published() == 2 }, 10*time.Second, time.Millisecond)
			_, err = st.Commit(ctx, &store.Batch{Ops: entryOps(t, "run-0001", 1)})
			require.NoError(t, err)
			if tc.lingered {
				time.Sleep(100 * time.Millisecond) // far less than the linger
				require.Equal(t, 2, bus.Published(), "the next pass waits out the linger")
			} else {
				require.Eventually(t, func() bool { return bus.Published() == 3 }, 10*time.Second, time.Millisecond)
			}
			cancel()
			require.NoError(t, <-done)
		})
	}
}

// A pass overtaken by another worker is followed by the longest linger, not
// the shortest: the worker stands by while the other goes through the
// outbox.
func TestRun_StandsByForMaxLingerAfterBeingOvertaken(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	writeOutbox(t, st, 1, 3)
	bus := export.NewMemoryBus()
	var once sync.Once
	pub := export.PublisherFunc(func(ctx context.Context, msg export.Message) error {
		once.Do(func() { // another worker acknowledges the first entry meanwhile
			_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Delete(export.OutboxKey("run-0000", 1))}})
			require.NoError(t, err)
		})
		return bus.Publish(ctx, msg)
	})
	w, err := export.NewWorker(st, pub, export.Config{Linger: time.Millisecond, MaxLinger: time.Hour, PollInterval: time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	require.Eventually(t, func() bool { return bus.Published() == 3 }, 10*time.Second, time.Millisecond)
	_, err = st.Commit(ctx, &store.Batch{Ops: entryOps(t, "run-0001", 1)})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // far more than Linger, far less than MaxLinger
	require.Equal(t, 3, bus.Published(), "the overtaken worker stands by")
	cancel()
	require.NoError(t, <-done)
}
