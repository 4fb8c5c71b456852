package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

// The CAS rule's shape is fixed by issue 3: 16 goroutines × 500 increments,
// spread over casHandles handles where the backend offers peers.
const (
	casWorkers   = 16
	casPerWorker = 500
	casHandles   = 4
)

var concurrencyRules = []rule{
	{"TestConditionalBatch_ConcurrentIncrementsLoseNoUpdate", testConcurrentIncrementsLoseNoUpdate},
	{"TestConditionalBatch_ConcurrentInsertIfAbsentHasOneWinner", testConcurrentInsertIfAbsentOneWinner},
	{"TestBatch_ConcurrentBlindPutsOfNewKeysAllCommit", testConcurrentBlindPutsOfNewKeys},
	{"TestBatch_AtomicToConcurrentScanners", testBatchAtomicToScanners},
	{"TestBatch_AtomicToConcurrentReaders", testBatchAtomicToReaders},
}

func testConcurrentIncrementsLoseNoUpdate(t *testing.T, h Harness) {
	inst := h.Open(t)
	s := inst.Store
	requireConditional(t, s)
	handles := inst.handles(t, casHandles)
	key := store.Key("counter")
	// 8,000 contended commits on a real database: a budget of its own, far
	// inside go test's default 10-minute timeout.
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, casWorkers)
	versions := make([][]uint64, casWorkers)
	for w := range casWorkers {
		wg.Go(func() {
			vs, err := incrementN(c, handles[w%len(handles)], key, casPerWorker)
			versions[w] = vs
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	item := get(t, s, key)
	require.Equal(t, strconv.Itoa(casWorkers*casPerWorker), string(item.Value), "an update was lost")
	seen := map[uint64]bool{}
	for _, vs := range versions {
		for _, v := range vs {
			require.False(t, seen[v], "two successful CAS commits produced version %d", v)
			seen[v] = true
		}
	}
	require.Len(t, seen, casWorkers*casPerWorker)
}

// incrementN adds n to the decimal counter at key by compare-and-set,
// re-reading after every lost race, and returns the versions it committed.
func incrementN(c context.Context, s store.Store, key []byte, n int) ([]uint64, error) {
	var committed []uint64
	for len(committed) < n {
		cond, next, err := readCounter(c, s, key)
		if err != nil {
			return committed, err
		}
		res, err := s.Commit(c, &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(key, []byte(strconv.Itoa(next)))}})
		switch {
		case err == nil:
			committed = append(committed, res.Versions[0])
		case isContention(err):
		default:
			return committed, fmt.Errorf("increment: %w", err)
		}
	}
	return committed, nil
}

func readCounter(c context.Context, s store.Store, key []byte) (store.Condition, int, error) {
	item, err := s.Get(c, key)
	if errors.Is(err, store.ErrNotFound) {
		return store.IfAbsent(key), 1, nil
	}
	if err != nil {
		return store.Condition{}, 0, err
	}
	n, err := strconv.Atoi(string(item.Value))
	if err != nil {
		return store.Condition{}, 0, fmt.Errorf("counter holds %d non-numeric bytes", len(item.Value))
	}
	return store.IfVersion(key, item.Version), n + 1, nil
}

func testConcurrentInsertIfAbsentOneWinner(t *testing.T, h Harness) {
	inst := h.Open(t)
	requireConditional(t, inst.Store)
	handles := inst.handles(t, casHandles)
	key := store.Key("sig", "wf-1", "approve", "signal:1")
	var wins atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, casWorkers)
	for w := range casWorkers {
		wg.Go(func() { errs <- insertOnce(ctx(t), handles[w%len(handles)], key, w, &wins) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, wins.Load(), "exactly one insert-if-absent wins")
}

// testConcurrentBlindPutsOfNewKeys races batches without conditions that
// each put the same keys, absent until then, from every handle: every
// batch commits (a backend may retry one inside Commit, never fail it),
// and each key ends with a value one of them put.
func testConcurrentBlindPutsOfNewKeys(t *testing.T, h Harness) {
	inst := h.Open(t)
	handles := inst.handles(t, casHandles)
	const rounds = 8
	for round := range rounds {
		keys := [][]byte{store.Key("blind", store.Uint64(uint64(round)), "a"), store.Key("blind", store.Uint64(uint64(round)), "b")}
		var wg sync.WaitGroup
		errs := make(chan error, casWorkers)
		for w := range casWorkers {
			wg.Go(func() {
				value := []byte(strconv.Itoa(w))
				_, err := handles[w%len(handles)].Commit(ctx(t), &store.Batch{Ops: []store.Op{store.Put(keys[0], value), store.Put(keys[1], value)}})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err, "round %d", round)
		}
		a, err := inst.Store.Get(ctx(t), keys[0])
		require.NoError(t, err)
		b, err := inst.Store.Get(ctx(t), keys[1])
		require.NoError(t, err)
		require.Equal(t, a.Value, b.Value, "round %d: both keys hold one batch's value", round)
	}
}

func insertOnce(c context.Context, s store.Store, key []byte, w int, wins *atomic.Int32) error {
	for {
		_, err := s.Commit(c, &store.Batch{Conditions: []store.Condition{store.IfAbsent(key)}, Ops: []store.Op{store.Put(key, []byte(strconv.Itoa(w)))}})
		var cf *store.ConditionFailedError
		switch {
		case err == nil:
			wins.Add(1)
			return nil
		case errors.As(err, &cf):
			if !cf.Found || cf.Version == 0 {
				return fmt.Errorf("loser saw found=%v version=%d, want the winner's record", cf.Found, cf.Version)
			}
			return nil
		case errors.Is(err, store.ErrRetryable):
		default:
			return err
		}
	}
}

// generations is how many batches the atomicity writers commit.
const generations = 60

const atomKeys = 8

func atomKey(i int) []byte { return store.Key("atom", store.Uint64(uint64(i))) }

var atomMarker = store.Key("atom", "marker")

// writeGeneration writes generation g to every atom key in one batch, and puts
// the marker on even generations and deletes it on odd ones.
func writeGeneration(c context.Context, s store.Store, g int) error {
	value := []byte(strconv.Itoa(g))
	ops := make([]store.Op, 0, atomKeys+1)
	for i := range atomKeys {
		ops = append(ops, store.Put(atomKey(i), value))
	}
	if g%2 == 0 {
		ops = append(ops, store.Put(atomMarker, value))
	} else {
		ops = append(ops, store.Delete(atomMarker))
	}
	_, err := s.Commit(c, &store.Batch{Ops: ops})
	return err
}

// runWithWriter commits generations 0..generations-1 while check runs in a
// loop on readers goroutines, and fails on the first error from either.
func runWithWriter(t *testing.T, s store.Store, readers int, check func(context.Context) error) {
	c := ctx(t)
	require.NoError(t, writeGeneration(c, s, 0))
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, readers+1)
	wg.Go(func() {
		defer done.Store(true)
		for g := 1; g < generations; g++ {
			if err := writeGeneration(c, s, g); err != nil {
				errs <- err
				return
			}
		}
	})
	for range readers {
		wg.Go(func() {
			for !done.Load() {
				if err := check(c); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func testBatchAtomicToScanners(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireCapability(t, s, "scanConsistency", func(c store.Capabilities) bool { return c.ScanConsistency })
	runWithWriter(t, s, 2, func(c context.Context) error {
		res, err := s.Scan(c, &store.ScanParams{Prefix: store.KeyPrefix("atom")})
		if err != nil {
			return err
		}
		return checkGeneration(res.Items)
	})
}

// checkGeneration proves that items, one scan of the atom prefix, hold one
// whole generation: every atom key at the same value, and the marker present
// exactly on even generations.
func checkGeneration(items []store.Item) error {
	var g string
	marker := false
	atoms := 0
	for _, it := range items {
		if string(it.Key) == string(atomMarker) {
			marker = true
			continue
		}
		atoms++
		if g == "" {
			g = string(it.Value)
		} else if string(it.Value) != g {
			return fmt.Errorf("scan saw generations %s and %s in one view: partial batch", g, it.Value)
		}
	}
	if atoms != atomKeys {
		return fmt.Errorf("scan saw %d of %d atom keys: partial batch", atoms, atomKeys)
	}
	n, _ := strconv.Atoi(g)
	if marker != (n%2 == 0) {
		return fmt.Errorf("generation %d with marker=%v: the delete or put of one batch was split", n, marker)
	}
	return nil
}

func testBatchAtomicToReaders(t *testing.T, h Harness) {
	s := h.Open(t).Store
	requireCapability(t, s, "atomicBatch", func(c store.Capabilities) bool { return c.AtomicBatch })
	runWithWriter(t, s, 2, func(c context.Context) error {
		// The writer puts the atom keys in order 0..n-1. Reading the first and
		// then the last, a non-atomic apply would show a newer first key than
		// last key.
		first, err := s.Get(c, atomKey(0))
		if err != nil {
			return err
		}
		last, err := s.Get(c, atomKey(atomKeys-1))
		if err != nil {
			return err
		}
		f, _ := strconv.Atoi(string(first.Value))
		l, _ := strconv.Atoi(string(last.Value))
		if l < f {
			return fmt.Errorf("read generation %d of the first key, then older generation %d of the last: partial batch", f, l)
		}
		return nil
	})
}
