package export_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/faultstore"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/telemetry"
)

func TestWorker_DeliversEveryEventAtLeastOnce_10000Events(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	refs := writeOutbox(t, st, 100, 100)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	drain(t, w)
	requireAllDelivered(t, st, refs, bus.Messages())
}

// TestWorker_OnEveryBackend runs the worker's rules on memory, Pebble and
// PostgreSQL stores.
func TestWorker_OnEveryBackend(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			t.Run("DeliversEveryEventAtLeastOnce", func(t *testing.T) {
				st := be.open(t)
				refs := writeOutbox(t, st, 20, 50)
				bus := export.NewMemoryBus()
				w, err := export.NewWorker(st, bus, export.Config{BatchSize: 64})
				require.NoError(t, err)
				drain(t, w)
				requireAllDelivered(t, st, refs, bus.Messages())
			})
			t.Run("KilledBetweenPublishAndAckRepublishesAndLosesNothing", func(t *testing.T) {
				st := be.open(t)
				refs := writeOutbox(t, st, 100, 100) // 10,000 events
				bus := export.NewMemoryBus()
				requireKillsLoseNothing(t, st, bus, refs)
			})
			t.Run("PoisonEventsReachTheDeadLetterRecord", func(t *testing.T) {
				requirePoisonDeadLettered(t, be.open(t), false)
			})
			t.Run("PoisonEventsReachTheDeadLetterRecordFromABatchingPublisher", func(t *testing.T) {
				requirePoisonDeadLettered(t, be.open(t), true)
			})
		})
	}
}

// killingPublisher publishes, then — every killEvery publishes — cancels the
// worker's context before the worker can acknowledge: a crash between
// publish and acknowledgement.
type killingPublisher struct {
	inner     export.Publisher
	killEvery int64
	n         atomic.Int64
	mu        sync.Mutex
	kill      context.CancelFunc
}

func (p *killingPublisher) Publish(ctx context.Context, msg export.Message) error {
	if err := p.inner.Publish(ctx, msg); err != nil {
		return err
	}
	if p.n.Add(1)%p.killEvery == 0 {
		p.mu.Lock()
		p.kill()
		p.mu.Unlock()
	}
	return nil
}

func requireKillsLoseNothing(t *testing.T, st store.Store, bus *export.MemoryBus, refs []ref) {
	t.Helper()
	pub := &killingPublisher{inner: bus, killEvery: 997}
	kills := 0
	for life := 0; !lifeDrains(t, st, pub, &kills); life++ {
		require.Less(t, life, 1000, "outbox never drained")
	}
	require.Greater(t, kills, 1)
	dups := requireAllDelivered(t, st, refs, bus.Messages())
	require.Positive(t, dups, "a kill before acknowledgement publishes again")
	t.Logf("%d kills, %d events, %d duplicates", kills, len(refs), dups)
}

// lifeDrains runs a new worker (nothing survives a crash but the store) until
// it is killed, or until it finds the outbox empty.
func lifeDrains(t *testing.T, st store.Store, pub *killingPublisher, kills *int) bool {
	return lifeDrainsWith(t, st, pub, kills, nil)
}

// lifeDrainsWith is lifeDrains with a worker resolving through cache, the
// outbox cache of what its process committed (nil: none).
func lifeDrainsWith(t *testing.T, st store.Store, pub *killingPublisher, kills *int, cache *runlog.OutboxCache) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub.mu.Lock()
	pub.kill = cancel
	pub.mu.Unlock()
	w, err := export.NewWorker(st, pub, export.Config{BatchSize: 100, OutboxCache: cache})
	require.NoError(t, err)
	defer w.Close() // the killed worker is gone, and so is its watch
	for {
		stats, err := w.RunOnce(ctx)
		if ctx.Err() != nil {
			*kills++
			return false
		}
		require.NoError(t, err)
		if stats.Seen == 0 {
			return true
		}
	}
}

// rejectingPublisher refuses chosen event ids, and passes the rest on.
type rejectingPublisher struct {
	inner  export.Publisher
	reject map[string]bool
	calls  atomic.Int64
}

func (p *rejectingPublisher) Publish(ctx context.Context, msg export.Message) error {
	p.calls.Add(1)
	if p.reject[msg.EventID] {
		return errors.New("bus refused the event: too large")
	}
	return p.inner.Publish(ctx, msg)
}

// rejectingBatchPublisher is a rejectingPublisher that takes a page at once:
// it publishes in order and stops at the first refusal, as
// export.BatchPublisher requires.
type rejectingBatchPublisher struct {
	*rejectingPublisher
	batches atomic.Int64
}

func (p *rejectingBatchPublisher) PublishBatch(ctx context.Context, msgs []export.Message) (int, error) {
	p.batches.Add(1)
	for i, m := range msgs {
		if err := p.Publish(ctx, m); err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}

func TestWorker_PoisonEventsReachTheDeadLetterRecordAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	requirePoisonDeadLettered(t, memStore(t), false)
}

// A batching publisher gets a page's due entries in one call, and the pass
// ends exactly as one entry at a time: the same attempts, dead letters,
// waits and per-run order.
func TestWorker_ABatchingPublisherKeepsTheRulesOfOneAtATime(t *testing.T) {
	t.Parallel()
	requirePoisonDeadLettered(t, memStore(t), true)
}

func requirePoisonDeadLettered(t *testing.T, st store.Store, batched bool) {
	t.Helper()
	ctx := context.Background()
	refs := writeOutbox(t, st, 3, 5)
	badKey := export.OutboxKey("run-bad", 1)
	_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(badKey, []byte("{not json "+payloadMarker))}})
	require.NoError(t, err)
	bus := export.NewMemoryBus()
	pub := &rejectingPublisher{inner: bus, reject: map[string]bool{eventID("run-0000", 2): true, eventID("run-0002", 5): true}}
	var publisher export.Publisher = pub
	batching := &rejectingBatchPublisher{rejectingPublisher: pub}
	if batched {
		publisher = batching
	}
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	clock, reg, logs := newFakeClock(), pipeline.Registry, &logBuffer{}
	cfg := export.Config{MaxAttempts: 3, BackoffInitial: time.Second, BackoffCap: 4 * time.Second,
		Clock: clock, MeterProvider: pipeline.Provider, Logger: newLogger(logs)}
	pass := func() export.PassStats {
		w, err := export.NewWorker(st, publisher, cfg) // a new worker each pass: counts survive restarts
		require.NoError(t, err)
		stats, err := w.RunOnce(ctx)
		require.NoError(t, err)
		return stats
	}

	stats := pass()
	require.EqualValues(t, stats.Seen, metricValue(t, reg, export.MetricOutboxPending, nil))
	require.Equal(t, 1, stats.DeadLettered, "the undecodable entry goes straight to the dead-letter record")
	require.Equal(t, 2, stats.Retried)
	require.Equal(t, 3, stats.Waiting, "later events of run-0000 wait behind its failing one")
	if batched {
		// The first pass's page, in key order run-0000…run-0002, run-bad: all
		// its due entries at once, then those after run-0000's refused one
		// save run-0000's (run-0002's refused entry is the last due).
		require.EqualValues(t, 2, batching.batches.Load(), "a page goes to the bus in one call per refusal")
	}
	calls := pub.calls.Load()
	stats = pass()
	require.Equal(t, calls, pub.calls.Load(), "nothing is retried before its backoff ends")
	require.Zero(t, stats.Retried)
	for range 2 {
		clock.Advance(cfg.BackoffCap)
		pass()
	}
	require.Zero(t, countPrefix(t, st, runlog.OutboxPrefix()), "outbox drained")
	require.Zero(t, countPrefix(t, st, export.RetryPrefix()))
	require.EqualValues(t, 2*3+(15-2), pub.calls.Load(), "each poison event tried exactly MaxAttempts times")

	dls, next, err := export.ListDeadLetters(ctx, st, &export.ListDeadLettersParams{})
	require.NoError(t, err)
	require.Nil(t, next)
	require.Len(t, dls, 3)
	byKey := map[string]export.DeadLetterItem{}
	for _, d := range dls {
		byKey[string(d.Key)] = d
	}
	poison := byKey[string(export.DeadLetterKey("run-0000", 2))].DeadLetter
	require.Equal(t, 3, poison.Attempts)
	require.Equal(t, export.ReasonMaxAttempts, poison.Reason)
	require.Equal(t, eventID("run-0000", 2), poison.EventID)
	require.Contains(t, poison.LastError, "too large")
	require.Contains(t, string(poison.Entry), payloadMarker, "the record keeps the entry for replay")
	bad := byKey[string(export.DeadLetterKey("run-bad", 1))].DeadLetter
	require.Equal(t, export.ReasonUndecodable, bad.Reason)
	require.Equal(t, "{not json "+payloadMarker, string(bad.RawEntry))

	require.EqualValues(t, 2, metricValue(t, reg, export.MetricDeliveryFailed, map[string]string{"tenant": tenant}))
	require.EqualValues(t, 1, metricValue(t, reg, export.MetricDeliveryFailed, map[string]string{"tenant": ""}))
	require.EqualValues(t, 15-2, metricValue(t, reg, export.MetricPublished, nil), "counts survive the worker's restarts")
	require.EqualValues(t, 2*3, metricValue(t, reg, export.MetricPublishErrors, map[string]string{"class": "rejected"}))
	var alerts []map[string]any
	for _, l := range logs.lines(t) {
		if l["alert"] == export.AlertDeliveryFailed {
			alerts = append(alerts, l)
		}
	}
	require.Len(t, alerts, 3)
	for _, a := range alerts {
		require.Equal(t, "ERROR", a["level"])
		require.Contains(t, a, "run_id")
		require.Contains(t, a, "run_seq")
		require.Contains(t, a, "event_id")
	}
	require.NotContains(t, logs.String(), payloadMarker, "no payload in any log line")

	// Everything else was delivered, once, and run-0000's later events after
	// its poison event was dead-lettered.
	delivered := bus.Messages()
	require.Len(t, delivered, len(refs)-2)
	var order []uint64
	for _, m := range delivered {
		require.False(t, pub.reject[m.EventID])
		if m.RunID == "run-0000" {
			order = append(order, m.RunSeq)
		}
	}
	require.Equal(t, []uint64{1, 3, 4, 5}, order, "per-run order is kept")
}

func TestWorker_UnavailableBusCountsNoAttemptAndLeavesTheOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeOutbox(t, st, 2, 3)
	bus := export.NewMemoryBus()
	var down atomic.Bool
	down.Store(true)
	pub := export.PublisherFunc(func(ctx context.Context, msg export.Message) error {
		if down.Load() {
			return export.Unavailable(errors.New("dial tcp: connection refused"))
		}
		return bus.Publish(ctx, msg)
	})
	w, err := export.NewWorker(st, pub, export.Config{MaxAttempts: 1, Clock: newFakeClock()})
	require.NoError(t, err)
	for range 20 {
		_, err := w.RunOnce(ctx)
		require.ErrorIs(t, err, export.ErrUnavailable)
	}
	require.Equal(t, len(refs), countPrefix(t, st, runlog.OutboxPrefix()), "entries wait in the outbox")
	require.Zero(t, countPrefix(t, st, export.RetryPrefix()), "no attempt counted")
	require.Zero(t, countPrefix(t, st, export.DeadLetterPrefix()), "nothing dead-lettered")
	down.Store(false)
	drain(t, w)
	requireAllDelivered(t, st, refs, bus.Messages())
}

func TestWorker_PublishTimeoutIsTheBusBeingUnavailable(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	writeOutbox(t, st, 1, 1)
	pub := export.PublisherFunc(func(ctx context.Context, _ export.Message) error {
		<-ctx.Done()
		return ctx.Err()
	})
	w, err := export.NewWorker(st, pub, export.Config{PublishTimeout: 10 * time.Millisecond, MaxAttempts: 1})
	require.NoError(t, err)
	_, err = w.RunOnce(context.Background())
	require.ErrorIs(t, err, export.ErrUnavailable)
	require.Zero(t, countPrefix(t, st, export.DeadLetterPrefix()))
}

func TestWorker_FailedAcknowledgementRepublishesAndLosesNothing(t *testing.T) {
	t.Parallel()
	inner := memstore.New(memstore.Config{})
	refs := writeOutbox(t, inner, 10, 20)
	// A third of the worker's commits fail before applying, a third apply and
	// then report an unknown outcome.
	st, err := faultstore.New(inner, faultstore.Config{BeforeCommitRate: 0.3, AfterCommitRate: 0.3, Seed: 7})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{BatchSize: 100})
	require.NoError(t, err)
	for i := 0; countPrefix(t, inner, runlog.OutboxPrefix()) > 0; i++ {
		require.Less(t, i, 1000)
		_, _ = w.RunOnce(context.Background()) // failed acknowledgements are errors; passes go on
	}
	require.Positive(t, st.Stats().BeforeCommit+st.Stats().AfterCommit)
	dups := requireAllDelivered(t, inner, refs, bus.Messages())
	require.Positive(t, dups)
}

func TestWorker_SeveralWorkersOnOneStoreLoseNothing(t *testing.T) {
	t.Parallel()
	for _, be := range backends[:2] { // memory, and Pebble, where the worker resumes
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			st := be.open(t)
			refs := writeOutbox(t, st, 30, 40)
			bus := export.NewMemoryBus()
			pipeline, err := telemetry.NewMetrics()
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 3 {
				w, err := export.NewWorker(st, bus, export.Config{BatchSize: 25, PollInterval: time.Millisecond,
					MeterProvider: pipeline.Provider})
				require.NoError(t, err)
				wg.Go(func() { _ = w.Run(ctx) })
			}
			require.Eventually(t, func() bool { return countPrefix(t, st, runlog.OutboxPrefix()) == 0 }, 30*time.Second, 5*time.Millisecond)
			cancel()
			wg.Wait()
			dups := requireAllDelivered(t, st, refs, bus.Messages())
			t.Logf("%d events, %d duplicates across 3 workers", len(refs), dups)
			require.EqualValues(t, bus.Published(), metricValue(t, pipeline.Registry, export.MetricPublished, nil),
				"workers sharing a provider add up their counts")
		})
	}
}

func TestWorker_NeverDeletesAnEntryThatChanged(t *testing.T) {
	t.Parallel()
	for _, be := range backends[:2] { // memory, and Pebble, where the worker resumes
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := be.open(t)
			writeOutbox(t, st, 1, 1)
			key := export.OutboxKey("run-0000", 1)
			rewritten := outboxValue(t, "run-0000", 1)
			// The entry is rewritten (a replay) between the worker's read and its
			// acknowledgement.
			pub := export.PublisherFunc(func(ctx context.Context, _ export.Message) error {
				_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(key, rewritten)}})
				return err
			})
			w, err := export.NewWorker(st, pub, export.Config{})
			require.NoError(t, err)
			_, err = w.RunOnce(ctx)
			require.NoError(t, err)
			it, err := st.Get(ctx, key)
			require.NoError(t, err, "the rewritten entry stays for the next pass")
			require.Equal(t, rewritten, it.Value)
		})
	}
}

func TestReplay_PutsADeadLetterBackInTheOutbox(t *testing.T) {
	t.Parallel()
	for _, be := range backends[:2] { // memory, and Pebble, where the worker resumes
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := be.open(t)
			refs := writeOutbox(t, st, 1, 3)
			bus := export.NewMemoryBus()
			var refuse atomic.Bool
			refuse.Store(true)
			pub := export.PublisherFunc(func(ctx context.Context, msg export.Message) error {
				if refuse.Load() && msg.RunSeq == 2 {
					return errors.New("refused")
				}
				return bus.Publish(ctx, msg)
			})
			w, err := export.NewWorker(st, pub, export.Config{MaxAttempts: 1})
			require.NoError(t, err)
			drain(t, w)
			dls, _, err := export.ListDeadLetters(ctx, st, &export.ListDeadLettersParams{})
			require.NoError(t, err)
			require.Len(t, dls, 1)
			refuse.Store(false)
			require.NoError(t, export.Replay(ctx, st, dls[0].Key))
			require.ErrorIs(t, export.Replay(ctx, st, dls[0].Key), store.ErrNotFound, "a record replays once")
			drain(t, w)
			requireAllDelivered(t, st, refs, bus.Messages())
			require.Zero(t, countPrefix(t, st, export.DeadLetterPrefix()))
		})
	}
}

func TestNewWorker_RejectsAStoreWithoutConditionalBatches(t *testing.T) {
	t.Parallel()
	_, err := export.NewWorker(noCAS{memStore(t)}, export.NewMemoryBus(), export.Config{})
	require.ErrorIs(t, err, store.ErrUnsupported)
}

type noCAS struct{ store.Store }

func (n noCAS) Capabilities() store.Capabilities {
	c := n.Store.Capabilities()
	c.ConditionalBatch = false
	return c
}

func TestConfig_Validate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  export.Config
		want string
	}{
		{export.Config{BatchSize: -1}, "batch size must be between 1 and 10000, got -1"},
		{export.Config{BatchSize: 20000}, "batch size must be between 1 and 10000, got 20000"},
		{export.Config{PollInterval: time.Microsecond}, "poll interval must be at least 1ms, got 1µs"},
		{export.Config{MaxAttempts: -2}, "max attempts must be at least 1, got -2"},
		{export.Config{BackoffInitial: 2 * time.Second, BackoffCap: time.Second}, "backoff cap must be at least the initial backoff 2s, got 1s"},
	} {
		_, err := export.NewWorker(memStore(t), export.NewMemoryBus(), tc.cfg)
		require.Error(t, err)
		require.True(t, strings.HasSuffix(err.Error(), tc.want), err.Error())
	}
}

func TestBackoff_DoublesUpToTheCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {9, 256 * time.Second},
		{10, 5 * time.Minute}, {64, 5 * time.Minute}, {1000, 5 * time.Minute},
	} {
		require.Equal(t, tc.want, export.Backoff(time.Second, 5*time.Minute, tc.attempt), "attempt %d", tc.attempt)
	}
}

func TestWorker_FullJitterDrawsTheDelayBelowTheCeiling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	writeOutbox(t, st, 1, 1)
	clock := newFakeClock()
	w, err := export.NewWorker(st, export.PublisherFunc(func(context.Context, export.Message) error { return errors.New("no") }),
		export.Config{Clock: clock, Jitter: func() float64 { return 0.5 }, BackoffInitial: time.Second})
	require.NoError(t, err)
	_, err = w.RunOnce(ctx)
	require.NoError(t, err)
	it, err := st.Get(ctx, export.RetryKey("run-0000", 1))
	require.NoError(t, err)
	require.Contains(t, string(it.Value), `"attempts":1`)
	require.Contains(t, string(it.Value), clock.Now().Add(500*time.Millisecond).Format(time.RFC3339Nano))
	require.NotContains(t, string(it.Value), payloadMarker)
}

// The worker counts its passes and its store commits by kind, so that its
// share of the store's transactions can be told apart.
func TestWorker_CountsItsPassesAndStoreCommitsByKind(t *testing.T) {
	t.Parallel()
	st := memStore(t)
	writeOutbox(t, st, 3, 4)
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	w, err := export.NewWorker(st, export.NewMemoryBus(), export.Config{MeterProvider: pipeline.Provider})
	require.NoError(t, err)
	stats, err := w.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 12, stats.Published)
	require.EqualValues(t, 1, metricValue(t, pipeline.Registry, export.MetricPasses, nil))
	require.EqualValues(t, 1, metricValue(t, pipeline.Registry, export.MetricStoreCommits, map[string]string{"kind": "acknowledge"}),
		"a page is acknowledged in one commit")
}

// raceOnFirstPublish is a publisher that, on its first call, has another
// worker acknowledge the first `gone` entries of run-0000 and a replay
// rewrite run-0001's first entry, in the inner store, then calls then (if
// set): the pass's acknowledgement finds some of its entries gone or
// changed.
func raceOnFirstPublish(t *testing.T, inner store.Store, bus export.Publisher, gone int, then func()) export.Publisher {
	var once sync.Once
	return export.PublisherFunc(func(ctx context.Context, msg export.Message) error {
		once.Do(func() {
			b := &store.Batch{Ops: []store.Op{store.Put(export.OutboxKey("run-0001", 1), outboxValue(t, "run-0001", 1))}}
			for seq := 1; seq <= gone; seq++ {
				b.Ops = append(b.Ops, store.Delete(export.OutboxKey("run-0000", uint64(seq))))
			}
			_, err := inner.Commit(ctx, b)
			require.NoError(t, err)
			if then != nil {
				then()
			}
		})
		return bus.Publish(ctx, msg)
	})
}

// An acknowledgement that loses a race with another worker (or a replay)
// re-reads its entries and deletes, in one more commit, those still as read:
// not one commit per entry, and never one that changed.
func TestWorker_AnAcknowledgementThatLosesARaceDeletesTheRestInOneMoreCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeOutbox(t, st, 3, 5)
	bus := export.NewMemoryBus()
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	w, err := export.NewWorker(st, raceOnFirstPublish(t, st, bus, 3, nil), export.Config{MeterProvider: pipeline.Provider})
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 15, stats.Published)
	require.True(t, stats.Overtaken, "entries another worker acknowledged")
	require.EqualValues(t, 2, metricValue(t, pipeline.Registry, export.MetricStoreCommits, map[string]string{"kind": "acknowledge"}),
		"the whole page, then the entries still as read")
	require.Equal(t, 1, countPrefix(t, st, runlog.OutboxPrefix()), "only the rewritten entry stays")
	_, err = st.Get(ctx, export.OutboxKey("run-0001", 1))
	require.NoError(t, err)
	drain(t, w)
	requireAllDelivered(t, st, refs, bus.Messages())
}

// A crash at the second acknowledgement — before it applied, or after with
// its outcome lost — leaves the entries it would have deleted to the next
// worker, which publishes them again: nothing is lost.
func TestWorker_KilledAtTheSecondAcknowledgementLosesNothing(t *testing.T) {
	t.Parallel()
	for _, fault := range []faultstore.Fault{faultstore.BeforeCommit, faultstore.AfterCommit} {
		t.Run(fault.String(), func(t *testing.T) {
			t.Parallel()
			inner := memstore.New(memstore.Config{})
			t.Cleanup(func() { _ = inner.Close() })
			refs := writeOutbox(t, inner, 3, 5)
			st, err := faultstore.New(inner, faultstore.Config{})
			require.NoError(t, err)
			bus := export.NewMemoryBus()
			// The first acknowledgement goes through (and loses the race), the second fails.
			pub := raceOnFirstPublish(t, inner, bus, 3, func() { st.InjectNext(faultstore.None, fault) })
			w, err := export.NewWorker(st, pub, export.Config{})
			require.NoError(t, err)
			_, err = w.RunOnce(context.Background())
			require.Error(t, err, "the failed acknowledgement ends the pass")
			left := countPrefix(t, inner, runlog.OutboxPrefix())
			if fault == faultstore.BeforeCommit {
				require.Equal(t, 15-3, left, "nothing of the second acknowledgement applied")
			} else {
				require.Equal(t, 1, left, "the second acknowledgement applied")
			}
			w, err = export.NewWorker(st, bus, export.Config{}) // the next life
			require.NoError(t, err)
			drain(t, w)
			dups := requireAllDelivered(t, inner, refs, bus.Messages())
			if fault == faultstore.BeforeCommit {
				require.GreaterOrEqual(t, dups, 15-3-1, "what was not acknowledged is published again")
			}
		})
	}
}

// A pass that finds entries it published already acknowledged by another
// worker ends there and leaves the rest of the outbox to that worker and to
// later passes, rather than publish every page twice; nothing is lost.
func TestWorker_APassOvertakenByAnotherWorkerLeavesTheRestToIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memStore(t)
	refs := writeOutbox(t, st, 3, 5) // three pages of 5
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, raceOnFirstPublish(t, st, bus, 3, nil), export.Config{BatchSize: 5})
	require.NoError(t, err)
	stats, err := w.RunOnce(ctx)
	require.NoError(t, err)
	require.True(t, stats.Overtaken)
	require.Equal(t, 5, stats.Seen, "the pass ended after its first page")
	require.Equal(t, 10, countPrefix(t, st, runlog.OutboxPrefix()), "the first page is acknowledged, by one worker or the other")

	stats, err = w.RunOnce(ctx) // nobody overtakes this one
	require.NoError(t, err)
	require.False(t, stats.Overtaken)
	drain(t, w)
	requireAllDelivered(t, st, refs, bus.Messages())
}
