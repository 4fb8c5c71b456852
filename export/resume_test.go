package export_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// scanLog is a Pebble store that records where each outbox scan started. It
// embeds the store, so that it still reports its puts (WatchPuts).
type scanLog struct {
	*pebblestore.Store
	mu     sync.Mutex
	starts [][]byte // the first key each outbox scan could return
}

func (s *scanLog) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if lower, _, _ := p.Bounds(); bytes.HasPrefix(lower, runlog.OutboxPrefix()) && p.After == nil {
		s.mu.Lock()
		s.starts = append(s.starts, bytes.Clone(lower))
		s.mu.Unlock()
	}
	return s.Store.Scan(ctx, p)
}

func (s *scanLog) lastStart() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts[len(s.starts)-1]
}

func openScanLog(t *testing.T) *scanLog {
	t.Helper()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return &scanLog{Store: st}
}

var errRefused = errors.New("bus refused the event")

// writeEntry writes one outbox entry as the engine does.
func writeEntry(t testing.TB, st store.Store, run string, seq uint64) ref {
	t.Helper()
	_, err := st.Commit(context.Background(), &store.Batch{Ops: entryOps(t, run, seq)})
	require.NoError(t, err)
	return ref{run, seq}
}

func TestWorker_OnPebbleAPassStartsPastTheEntriesTheLastPassExported(t *testing.T) {
	t.Parallel()
	st := openScanLog(t)
	refs := writeOutbox(t, st, 10, 10)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{BatchSize: 16})
	require.NoError(t, err)
	drain(t, w)
	stats, err := w.RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, stats.Seen)
	require.Positive(t, bytes.Compare(st.lastStart(), export.OutboxKey("run-0009", 10)),
		"an idle pass starts past every entry already exported, not at the beginning of the outbox")
	requireAllDelivered(t, st, refs, bus.Messages())
}

func TestWorker_OnPebbleAnEntryWrittenBehindTheResumePointIsExported(t *testing.T) {
	t.Parallel()
	st := openScanLog(t)
	refs := []ref{writeEntry(t, st, "run-0005", 1), writeEntry(t, st, "run-0005", 2)}
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	drain(t, w)
	drain(t, w)
	require.Positive(t, bytes.Compare(st.lastStart(), export.OutboxKey("run-0005", 2)), "the worker resumes")

	// Two older runs append: both keys sort below where the worker would
	// resume.
	refs = append(refs, writeEntry(t, st, "run-0004", 1), writeEntry(t, st, "run-0001", 3))
	stats, err := w.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, stats.Published, "entries written behind the resume point are exported by the next pass")
	require.Equal(t, export.OutboxKey("run-0001", 3), st.lastStart())
	requireAllDelivered(t, st, refs, bus.Messages())
}

func TestWorker_OnPebbleAnEntryWrittenBehindAPassWhileItRunsIsExported(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"first pass", "resumed pass"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := openScanLog(t)
			bus := export.NewMemoryBus()
			var refs []ref
			if name == "resumed pass" {
				refs = append(refs, writeEntry(t, st, "run-0003", 1))
			}
			var behind sync.Once
			// While the pass publishes run-0005's entry (its scan is past
			// run-0001), run-0001 appends and commits.
			pub := export.PublisherFunc(func(ctx context.Context, msg export.Message) error {
				if msg.RunID == "run-0005" {
					behind.Do(func() { refs = append(refs, writeEntry(t, st, "run-0001", 1)) })
				}
				return bus.Publish(ctx, msg)
			})
			w, err := export.NewWorker(st, pub, export.Config{})
			require.NoError(t, err)
			drain(t, w)
			refs = append(refs, writeEntry(t, st, "run-0005", 1))
			stats, err := w.RunOnce(context.Background())
			require.NoError(t, err)
			require.Equal(t, 1, stats.Published)
			stats, err = w.RunOnce(context.Background())
			require.NoError(t, err)
			require.Equal(t, 1, stats.Published, "the entry committed behind the running pass is exported by the next")
			requireAllDelivered(t, st, refs, bus.Messages())
		})
	}
}

func TestWorker_OnPebbleAnEntryInBackoffHoldsTheResumePoint(t *testing.T) {
	t.Parallel()
	st := openScanLog(t)
	clock := newFakeClock()
	bus := export.NewMemoryBus()
	refuse := true
	pub := export.PublisherFunc(func(ctx context.Context, msg export.Message) error {
		if refuse && msg.RunID == "run-0001" {
			return errRefused
		}
		return bus.Publish(ctx, msg)
	})
	refs := []ref{writeEntry(t, st, "run-0001", 1), writeEntry(t, st, "run-0002", 1)}
	w, err := export.NewWorker(st, pub, export.Config{Clock: clock, Jitter: func() float64 { return 1 }})
	require.NoError(t, err)
	stats, err := w.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, export.PassStats{Seen: 2, Published: 1, Retried: 1}, stats)
	refs = append(refs, writeEntry(t, st, "run-0003", 1))
	stats, err = w.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, export.PassStats{Seen: 2, Published: 1, Waiting: 1}, stats, "the entry in backoff is still scanned")
	refuse = false
	clock.Advance(export.DefaultBackoffInitial)
	drain(t, w)
	requireAllDelivered(t, st, refs, bus.Messages())
}

func TestWorker_OnPebbleANewWorkerExportsWhatTheLastLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := pebblestore.Open(dir, pebblestore.Config{})
	require.NoError(t, err)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	refs := []ref{writeEntry(t, st, "run-0005", 1)}
	drain(t, w)
	// Written behind the old worker's resume point, then the process stops
	// (the old worker never passes again) and starts over the same store.
	refs = append(refs, writeEntry(t, st, "run-0001", 1))
	require.NoError(t, st.Close())
	st, err = pebblestore.Open(dir, pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	w, err = export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	drain(t, w)
	requireAllDelivered(t, st, refs, bus.Messages())
}

func TestWorker_AfterCloseEveryPassScansTheWholeOutbox(t *testing.T) {
	t.Parallel()
	st := openScanLog(t)
	bus := export.NewMemoryBus()
	w, err := export.NewWorker(st, bus, export.Config{})
	require.NoError(t, err)
	refs := []ref{writeEntry(t, st, "run-0005", 1)}
	drain(t, w)
	w.Close()
	w.Close()
	refs = append(refs, writeEntry(t, st, "run-0001", 1))
	drain(t, w)
	require.Equal(t, runlog.OutboxPrefix(), st.lastStart())
	requireAllDelivered(t, st, refs, bus.Messages())
}
