package storetest

import (
	"strconv"
	"testing"
	"time"

	"github.com/weft-dev/weft/store"
)

// BenchValueBytes is the value size every storage benchmark writes.
const BenchValueBytes = 100

// Baseline prepares the raw commit of the database under a backend (for SQL,
// a single-row INSERT in its own transaction; for Pebble, a synced single-key
// Set) and returns a function that performs one. The benchmarks interleave it
// with the store's commits, so both see the same disk at the same moment.
type Baseline func(b *testing.B) (rawCommit func(i int) error)

// Bench runs the storage benchmarks — Get, Batch (one put), Batch10 (ten puts)
// and ConditionalBatch (a chained compare-and-set) — on stores from open. With
// a baseline, each commit benchmark runs one raw commit after every store
// commit, with the timer stopped, and reports raw-commit-ns (its mean) and
// x-raw-commit: the store's time per operation divided by it.
func Bench(b *testing.B, open func(testing.TB) store.Store, raw Baseline) {
	value := make([]byte, BenchValueBytes)
	b.Run("Get", func(b *testing.B) {
		s := open(b)
		key := store.Key("bench", "get")
		put(b, s, key, value)
		for b.Loop() {
			if _, err := s.Get(b.Context(), key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Batch", func(b *testing.B) { benchBatch(b, open(b), 1, value, raw) })
	b.Run("Batch10", func(b *testing.B) { benchBatch(b, open(b), 10, value, raw) })
	b.Run("ConditionalBatch", func(b *testing.B) {
		s := open(b)
		if !s.Capabilities().ConditionalBatch {
			b.Skipf("backend %q does not support conditionalBatch", s.Capabilities().Backend)
		}
		key := store.Key("bench", "cas")
		cond := store.IfAbsent(key)
		commit := func(int) error {
			res, err := s.Commit(b.Context(), &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(key, value)}})
			if err == nil {
				cond = store.IfVersion(key, res.Versions[0])
			}
			return err
		}
		loop(b, commit, raw)
	})
}

func benchBatch(b *testing.B, s store.Store, n int, value []byte, raw Baseline) {
	ops := make([]store.Op, n)
	commit := func(i int) error {
		for j := range ops {
			ops[j] = store.Put(store.Key("bench", strconv.Itoa((i*n+j)%1000)), value)
		}
		_, err := s.Commit(b.Context(), &store.Batch{Ops: ops})
		return err
	}
	loop(b, commit, raw)
}

// loop runs commit b.N times, each followed by an untimed raw commit when
// there is a baseline, and reports the ratio.
func loop(b *testing.B, commit func(i int) error, raw Baseline) {
	var rawCommit func(int) error
	if raw != nil {
		rawCommit = raw(b)
	}
	var rawTotal time.Duration
	i := 0
	for b.Loop() {
		if err := commit(i); err != nil {
			b.Fatal(err)
		}
		if rawCommit != nil {
			b.StopTimer()
			start := time.Now()
			if err := rawCommit(i); err != nil {
				b.Fatal(err)
			}
			rawTotal += time.Since(start)
			b.StartTimer()
		}
		i++
	}
	if rawCommit == nil || i == 0 {
		return
	}
	perOp := float64(b.Elapsed()) / float64(i)
	perRaw := float64(rawTotal) / float64(i)
	b.ReportMetric(perRaw, "raw-commit-ns")
	b.ReportMetric(perOp/perRaw, "x-raw-commit")
}
