package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/store"
)

// Worker publishes the outbox. Several workers may run on one store, in one
// process or many: every deletion and every record update is a conditional
// batch on the versions the worker read, so workers never lose an entry or a
// count; they may publish the same entry twice (at least once).
type Worker struct {
	st  store.Store
	pub Publisher
	cfg Config
	m   *metrics
	log *slog.Logger
	// resume is where the next pass starts (resume.go).
	resume *resume
	// marks is how far it published the runs' entries it did not delete.
	marks marks
	// memory is the memory of the last pass, for the next (nil while a
	// pass has it).
	memory atomic.Pointer[pageMemory]
}

// takeMemory answers memory for a pass's pages: the last pass's, unless
// another pass has it. Give it back with giveMemory once the pass is over.
func (w *Worker) takeMemory() *pageMemory {
	if m := w.memory.Swap(nil); m != nil {
		return m
	}
	return &pageMemory{}
}

func (w *Worker) giveMemory(m *pageMemory) { w.memory.Store(m) }

// NewWorker answers a worker that publishes st's outbox to pub. st must
// support conditional batches.
func NewWorker(st store.Store, pub Publisher, cfg Config) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if st == nil || pub == nil {
		return nil, errors.New("export: a worker needs a store and a publisher")
	}
	if caps := st.Capabilities(); !caps.ConditionalBatch {
		return nil, &store.CapabilityError{Capability: store.CapabilityConditionalBatch, Backend: caps.Backend}
	}
	m, err := newMetrics(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	return &Worker{st: st, pub: pub, cfg: cfg, m: m, log: cfg.Logger, resume: newResume(st)}, nil
}

// Close stops the worker's watch of the store's outbox puts, if it had one;
// passes made after it scan the whole outbox. Run and RunOnce need no Close.
func (w *Worker) Close() { w.resume.stop() }

// PassStats says what one pass did.
type PassStats struct {
	// Seen is how many outbox entries the pass scanned.
	Seen int
	// Published is how many it published (and then tried to acknowledge).
	Published int
	// Retried is how many failed publishes it recorded for a later retry.
	Retried int
	// DeadLettered is how many entries it moved to the dead-letter record.
	DeadLettered int
	// Waiting is how many entries it left for later: in backoff, or behind an
	// earlier entry of the same run that is.
	Waiting int
	// Overtaken says the pass ended before the end of the outbox because
	// another worker had acknowledged entries it published: that worker is
	// going through the same entries, so the pass leaves the rest to it and
	// to later passes rather than publish them all twice.
	Overtaken bool
}

// Run runs passes until ctx is done: after a linger between Config.Linger
// and Config.MaxLinger after a pass that published (Config.lingerAfter),
// after MaxLinger after one another worker overtook, after
// Config.PollInterval after an idle one, and with backoff while the bus
// is unavailable or the store fails. It returns nil when ctx is done.
func (w *Worker) Run(ctx context.Context) error {
	failures := 0
	var last time.Time // when the previous pass began
	for {
		began := w.cfg.Clock.Now()
		stats, err := w.RunOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var cycle time.Duration
		if !last.IsZero() {
			cycle = began.Sub(last)
		}
		last = began
		wait := w.cfg.PollInterval
		switch {
		case err != nil:
			failures++
			wait = max(w.cfg.delay(failures), w.cfg.PollInterval)
			w.logPassError(err, failures, wait)
		case stats.Overtaken:
			// Another worker is going through the outbox: stand by for the
			// longest linger rather than race it page for page.
			wait = w.cfg.longestLinger()
		case stats.Published > 0:
			wait = w.cfg.lingerAfter(stats.Seen-stats.Waiting, cycle, w.cfg.Clock.Now().Sub(began))
		}
		if err == nil {
			if failures > 0 {
				w.log.Info("export: publishing again", "after_failed_passes", failures)
			}
			failures = 0
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

func (w *Worker) logPassError(err error, failures int, wait time.Duration) {
	if errors.Is(err, ErrUnavailable) {
		if failures == 1 {
			w.log.Warn("export: event bus unavailable; events wait in the outbox", "error", err.Error())
		}
		return
	}
	w.log.Warn("export: pass failed", "error", err.Error(), "failed_passes", failures, "retry_in", wait)
}

// RunOnce makes one pass over the outbox, in key order (by run, then
// run_seq): it publishes every entry that is due, acknowledges what was
// published, records failures, and moves entries that failed too often or
// cannot be decoded to the dead-letter record. A pass stops early, with an
// error wrapping ErrUnavailable, when the bus is unavailable, and without
// one when another worker overtook it (PassStats.Overtaken). On a store that
// reports its puts, a pass starts where no entry below is live (resume.go).
func (w *Worker) RunOnce(ctx context.Context) (PassStats, error) {
	p := &pass{w: w, now: w.cfg.Clock.Now(), held: map[string]bool{}, seen: map[string]bool{}, mem: w.takeMemory()}
	defer w.giveMemory(p.mem)
	w.m.passes.Inc()
	from, gen := w.resume.start()
	retries, err := w.loadRetries(ctx)
	if err != nil {
		return p.stats, err
	}
	p.retries = retries
	params := scanFrom(from, w.cfg.BatchSize)
	for {
		page, err := w.st.Scan(ctx, params)
		if err != nil {
			return p.stats, fmt.Errorf("export: scan outbox: %w", err)
		}
		if page.Next != nil {
			if page.Items, err = w.wholeLastRun(ctx, page.Items); err != nil {
				return p.stats, err
			}
			page.Next = page.Items[len(page.Items)-1].Key
		}
		err = p.page(ctx, page.Items)
		if ferr := p.flush(ctx); err == nil {
			err = ferr
		}
		if err != nil {
			return p.stats, err
		}
		if p.stats.Overtaken {
			return p.stats, nil // not through the outbox: no position, no orphans
		}
		if page.Next == nil {
			break
		}
		params.After = page.Next
	}
	w.resume.raise(p.leftFrom(from), gen)
	if from == nil { // a whole pass: the entries it did not see are gone
		w.marks.keepOnly(func(key string) bool { return p.runEntries[key] })
	}
	w.m.pending.Set(float64(p.stats.Seen))
	return p.stats, p.dropOrphans(ctx)
}

// commit commits b to the store, counted as kind (MetricStoreCommits).
func (w *Worker) commit(ctx context.Context, kind string, b *store.Batch) error {
	w.m.commits.WithLabelValues(kind).Inc()
	_, err := w.st.Commit(ctx, b)
	return err
}

// versioned is a retry record with the version it was read at.
type versioned struct {
	rec     RetryRecord
	version uint64
}

// loadRetries reads every retry record, keyed by its outbox key.
func (w *Worker) loadRetries(ctx context.Context) (map[string]versioned, error) {
	out := map[string]versioned{}
	params := &store.ScanParams{Prefix: RetryPrefix(), Limit: store.MaxScanLimit}
	for {
		page, err := w.st.Scan(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("export: scan retry records: %w", err)
		}
		for _, it := range page.Items {
			var rec RetryRecord
			if json.Unmarshal(it.Value, &rec) != nil {
				rec = RetryRecord{} // a damaged count starts again
			}
			out[string(rekey(it.Key, RetryPrefix(), runlog.OutboxPrefix()))] = versioned{rec: rec, version: it.Version}
		}
		if page.Next == nil {
			return out, nil
		}
		params.After = page.Next
	}
}

// wholeLastRun answers a page that ends with a run's entry's run (its
// entry first, its older entries after) with the rest of that run's older
// entries, which the next page would hold: page puts the run's entry after
// those that name events before its own (runsOf).
func (w *Worker) wholeLastRun(ctx context.Context, items []store.Item) ([]store.Item, error) {
	first := len(items) - 1
	run := runKey(items[first].Key)
	for first > 0 && bytes.Equal(runKey(items[first-1].Key), run) {
		first--
	}
	if !isRunEntryKey(items[first].Key) {
		return items, nil
	}
	params := &store.ScanParams{Prefix: items[first].Key, After: items[len(items)-1].Key, Limit: store.MaxScanLimit}
	for {
		page, err := w.st.Scan(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("export: scan outbox: %w", err)
		}
		items = append(items, page.Items...)
		if page.Next == nil {
			return items, nil
		}
		params.After = page.Next
	}
}
