package retention

import (
	"context"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
)

// The bounds of a pass.
const (
	// PassRuns bounds the expired runs one pass visits; the rest wait for
	// the next tick.
	PassRuns = 256
	// BatchKeys bounds the records one removal batch deletes.
	BatchKeys = 500
	// BatchesPerPass bounds the batches one pass spends on one run, so that
	// a very large run does not hold the others up; its index entry stays,
	// and the next pass goes on.
	BatchesPerPass = 64
)

// ExpiryKey indexes a finished run by when retention removes it
// (rx:{expires_at}:{run}); empty value.
func ExpiryKey(at time.Time, runID string) []byte {
	return keyspace.Expiry.Key(store.Time(at), runID)
}

// Expired is one index entry whose time has come.
type Expired struct {
	Key   []byte
	RunID string
}

// ExpiredAt answers up to PassRuns index entries expired at now, oldest
// first. Its cost follows the number of expired runs, never the number of
// runs stored; an entry it cannot read is left alone.
func ExpiredAt(ctx context.Context, st store.Store, now time.Time) ([]Expired, error) {
	res, err := st.Scan(ctx, &store.ScanParams{Start: keyspace.Expiry.KeyPrefix(),
		End: keyspace.Expiry.KeyPrefix(store.Time(now.Add(time.Nanosecond))), Limit: PassRuns})
	if err != nil {
		return nil, err
	}
	out := make([]Expired, 0, len(res.Items))
	for _, it := range res.Items {
		parts, err := store.SplitKey(it.Key)
		if err != nil || len(parts) != 3 {
			continue // not ours to judge: leave what we cannot read
		}
		out = append(out, Expired{Key: it.Key, RunID: parts[2]})
	}
	return out, nil
}

// Step is how far one removal batch got.
type Step int

// The steps.
const (
	GoesOn Step = iota // more records remain: another batch follows
	Waits              // nothing more to do now (the run's events wait for export)
	Gone               // the last records went with this batch
)

// ExportWait is how long a removal waits before it looks again at an
// expired run whose events are not all exported yet.
const ExportWait = 10 * time.Second

// Records names what a run's removal reads: the prefixes of the records the
// run owns beside its record and checkpoint, in the order a removal deletes
// them, and the prefix of its events waiting in the outbox.
type Records struct {
	Owned  [][]byte
	Outbox []byte
}

// Run is one batch of a run's removal as the engine records it.
type Run interface {
	// Finished reports whether the run has ended; Hidden whether a batch
	// has hidden it already.
	Finished() bool
	Hidden() bool
	// Require makes the batch conditional; Delete deletes one key.
	Require(store.Condition)
	Delete(key []byte)
	// Derived deletes what a record under the owned prefix names outside
	// the run's prefixes (a task's ready entry and timers, an accepted
	// signal's expiry entry).
	Derived(prefix, value []byte)
	// Reindex moves the run's index entry from old (nil: none) to at.
	Reindex(old []byte, at time.Time)
	// Hide makes the run invisible: from this batch on every read and
	// every other decision answers not found.
	Hide()
	// Finish deletes the run's timers its checkpoint names, its
	// checkpoint, its record and the index entry: the run is gone.
	Finish(indexKey []byte)
}

// Cursor is where a sweep stopped: the prefix of Records.Owned it was in,
// and the last key it deleted there. A pass carries it from one batch to
// the next, so that a large run's scans do not step again over what the
// batches before deleted (a store keeps tombstones until it compacts); a
// new pass, or a batch made again, starts from the beginning, which is
// always correct.
type Cursor struct {
	prefix int
	after  []byte
}

// Batch decides one batch of the removal the index entry indexKey asks
// for, from where the previous batch stopped: a run that is not finished
// only loses the stray entry; a run whose events are not all exported waits
// (its entry moves ExportWait later); otherwise the run is hidden (first)
// and up to BatchKeys of its records go, and with the last of them the
// run itself. It answers where the next batch starts.
func Batch(ctx context.Context, st store.Store, r Run, recs Records, indexKey []byte, from Cursor, now time.Time) (Step, Cursor, error) {
	r.Require(store.IfPresent(indexKey))
	if !r.Finished() {
		// Never remove a run that is not finished: only the stray entry goes.
		r.Delete(indexKey)
		return Waits, from, nil
	}
	pending, err := st.Scan(ctx, &store.ScanParams{Prefix: recs.Outbox, Limit: 1})
	if err != nil {
		return 0, from, err
	}
	if len(pending.Items) > 0 {
		r.Reindex(indexKey, now.Add(ExportWait))
		return Waits, from, nil
	}
	if !r.Hidden() {
		r.Hide()
	}
	next, full, err := sweep(ctx, st, r, recs.Owned, from, BatchKeys)
	if err != nil || full {
		return GoesOn, next, err
	}
	r.Finish(indexKey)
	return Gone, next, nil
}

// sweep deletes up to limit of the run's records from the cursor on, with
// what each names outside the prefixes. It answers where it stopped and
// whether it hit the limit, so that more may remain.
func sweep(ctx context.Context, st store.Store, r Run, prefixes [][]byte, from Cursor, limit int) (Cursor, bool, error) {
	n := 0
	for i := from.prefix; i < len(prefixes); i++ {
		after := from.after
		if i != from.prefix {
			after = nil
		}
		res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefixes[i], After: after, Limit: limit - n})
		if err != nil {
			return from, false, err
		}
		for _, it := range res.Items {
			r.Delete(it.Key)
			r.Derived(prefixes[i], it.Value)
			n++
		}
		if n >= limit {
			return Cursor{prefix: i, after: res.Items[len(res.Items)-1].Key}, true, nil
		}
	}
	return Cursor{prefix: len(prefixes)}, false, nil
}
