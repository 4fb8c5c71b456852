package pebblestore_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// rawSyncedSet is the baseline: one synced single-key Pebble write.
func rawSyncedSet(b *testing.B) func(int) error {
	db, err := pebble.Open(b.TempDir(), quiet())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	value := make([]byte, storetest.BenchValueBytes)
	return func(i int) error {
		return db.Set([]byte(strconv.Itoa(i%1000)), value, pebble.Sync)
	}
}

func quiet() *pebble.Options { return &pebble.Options{Logger: noLog{}} }

type noLog struct{}

func (noLog) Infof(string, ...any)  {}
func (noLog) Errorf(string, ...any) {}
func (noLog) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(t testing.TB) store.Store { return open(t, t.TempDir()) }, rawSyncedSet)
}

func BenchmarkRawSyncedSet(b *testing.B) {
	db, err := pebble.Open(b.TempDir(), quiet())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, storetest.BenchValueBytes)
	for b.Loop() {
		if err := db.Set([]byte("k"), value, pebble.Sync); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitConcurrent measures Commit throughput with 1 and with 32
// goroutines committing at once, against the ceiling: synced single-key
// Pebble Sets from as many goroutines, b.N of them, right after the store's
// b.N commits in the same run. It reports both rates and x-raw-ceiling, the
// store's rate divided by the raw one (1 is the ceiling).
//
//   - Put: each commit is one 100-byte put, like the raw Set.
//   - CAS: each goroutine chains IfVersion compare-and-sets on a key of its
//     own, the shape of the engine's conditional batches.
func BenchmarkCommitConcurrent(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("Put/committers=%d", n), func(b *testing.B) {
			benchConcurrent(b, n, putCommitter)
		})
		b.Run(fmt.Sprintf("CAS/committers=%d", n), func(b *testing.B) {
			benchConcurrent(b, n, casCommitter)
		})
	}
}

// committer returns the commit function of goroutine g on s.
type committer func(b *testing.B, s store.Store, g int) func(i int) error

func putCommitter(b *testing.B, s store.Store, _ int) func(int) error {
	value := make([]byte, storetest.BenchValueBytes)
	return func(i int) error {
		_, err := s.Commit(b.Context(), &store.Batch{Ops: []store.Op{store.Put(store.Key("bench", strconv.Itoa(i%1000)), value)}})
		return err
	}
}

func casCommitter(b *testing.B, s store.Store, g int) func(int) error {
	value := make([]byte, storetest.BenchValueBytes)
	key := store.Key("bench", "cas", strconv.Itoa(g))
	cond := store.IfAbsent(key)
	return func(int) error {
		res, err := s.Commit(b.Context(), &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(key, value)}})
		if err == nil {
			cond = store.IfVersion(key, res.Versions[0])
		}
		return err
	}
}

func benchConcurrent(b *testing.B, n int, newCommitter committer) {
	s := open(b, b.TempDir())
	db, err := pebble.Open(b.TempDir(), quiet())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, storetest.BenchValueBytes)
	commits := make([]func(int) error, n)
	for g := range commits {
		commits[g] = newCommitter(b, s, g)
	}
	// Rounds alternate between the store and the raw Sets, so that both see
	// the disk, and the rest of the machine, at the same moments.
	var storeTime, rawTime time.Duration
	rounds := min(benchRounds, b.N)
	b.ResetTimer()
	for r := range rounds {
		lo, hi := r*b.N/rounds, (r+1)*b.N/rounds
		b.StartTimer()
		storeTime += runConcurrent(b, n, lo, hi, func(g, i int) error { return commits[g](i) })
		b.StopTimer()
		rawTime += runConcurrent(b, n, lo, hi, func(_, i int) error {
			return db.Set([]byte(strconv.Itoa(i%1000)), value, pebble.Sync)
		})
	}
	storeRate := float64(b.N) / storeTime.Seconds()
	rawRate := float64(b.N) / rawTime.Seconds()
	b.ReportMetric(storeRate, "commits/s")
	b.ReportMetric(rawRate, "raw-sets/s")
	b.ReportMetric(storeRate/rawRate, "x-raw-ceiling")
	reportGroups(b, s)
}

// benchRounds is how many times a concurrent benchmark alternates between
// the store and the raw Sets.
const benchRounds = 8

// runConcurrent performs calls lo..hi-1 of op from n goroutines (goroutine
// g, call number i) and returns the wall time they took.
func runConcurrent(b *testing.B, n, lo, hi int, op func(g, i int) error) time.Duration {
	var next atomic.Int64
	next.Store(int64(lo))
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for g := range n {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < hi; i = int(next.Add(1) - 1) {
				if err := op(g, i); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return elapsed
}

// reportGroups reports how many batches s folded into one synced apply, on
// average.
func reportGroups(b *testing.B, s store.Store) {
	groups, batches, _ := pebblestore.GroupStats(s.(*pebblestore.Store))
	if groups > 0 {
		b.ReportMetric(float64(batches)/float64(groups), "batches/group")
	}
}
