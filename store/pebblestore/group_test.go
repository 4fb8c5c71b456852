package pebblestore_test

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// bundle is one test's store and where it lives.
type bundle struct {
	s   *pebblestore.Store
	dir string
}

func setup(t *testing.T, cfg pebblestore.Config) *bundle {
	t.Helper()
	dir := t.TempDir()
	s, err := pebblestore.Open(dir, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return &bundle{s: s, dir: dir}
}

// result is what one Commit returned.
type result struct {
	res *store.CommitResult
	err error
}

// startCommit runs one Commit on its own goroutine.
func startCommit(ctx context.Context, s store.Store, b *store.Batch) <-chan result {
	ch := make(chan result, 1)
	go func() {
		res, err := s.Commit(ctx, b)
		ch <- result{res, err}
	}()
	return ch
}

// queueInOrder starts one commit per batch, each once the one before it is
// queued, so that they queue in this order behind a held leader.
func queueInOrder(t *testing.T, s *pebblestore.Store, ctxs []context.Context, batches []*store.Batch) []<-chan result {
	t.Helper()
	chs := make([]<-chan result, len(batches))
	for i, b := range batches {
		before := pebblestore.QueueLen(s)
		c := t.Context()
		if ctxs != nil && ctxs[i] != nil {
			c = ctxs[i]
		}
		chs[i] = startCommit(c, s, b)
		require.Eventually(t, func() bool { return pebblestore.QueueLen(s) == before+1 }, 10*time.Second, time.Millisecond,
			"commit %d did not queue", i)
	}
	return chs
}

// gate holds every group at its apply until the test lets it through.
type gate struct {
	entered chan int   // receives each held group's number of batches
	release chan error // the apply's fate: nil applies, an error fails it
}

// hold installs a gate on s. When the test ends, the gate opens for good, so
// that a failed test leaves no group held and Close can finish.
func hold(t *testing.T, s *pebblestore.Store) *gate {
	g := &gate{entered: make(chan int), release: make(chan error)}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	pebblestore.SetBeforeApply(s, func(n int) error {
		select {
		case g.entered <- n:
		case <-done:
			return nil
		}
		select {
		case err := <-g.release:
			return err
		case <-done:
			return nil
		}
	})
	return g
}

// next waits for the next group to reach its apply and returns its size.
func (g *gate) next(t *testing.T) int {
	t.Helper()
	select {
	case n := <-g.entered:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no group reached its apply")
		return 0
	}
}

// let lets the held group through, to apply (nil) or fail with err.
func (g *gate) let(t *testing.T, err error) {
	t.Helper()
	select {
	case g.release <- err:
	case <-time.After(10 * time.Second):
		t.Fatal("no group is held")
	}
}

// slowDisk makes every group's apply take at least d more, as a slow fsync
// would. On a fast disk (or tmpfs) with every CPU busy, a committer can
// otherwise finish before the next one even queues, and nothing groups.
func slowDisk(s *pebblestore.Store, d time.Duration) {
	pebblestore.SetBeforeApply(s, func(int) error {
		time.Sleep(d)
		return nil
	})
}

// holdLeader commits a put of key and holds its group at the apply, so that
// what is committed next queues behind it. It returns the put's outcome.
func holdLeader(t *testing.T, s *pebblestore.Store, g *gate, key []byte) <-chan result {
	t.Helper()
	ch := startCommit(t.Context(), s, putBatch(key, "leader"))
	require.Equal(t, 1, g.next(t))
	return ch
}

func putBatch(key []byte, value string, conds ...store.Condition) *store.Batch {
	return &store.Batch{Conditions: conds, Ops: []store.Op{store.Put(key, []byte(value))}}
}

func await(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("commit did not return")
		return result{}
	}
}

func requireCommitted(t *testing.T, ch <-chan result) *store.CommitResult {
	t.Helper()
	r := await(t, ch)
	require.NoError(t, r.err)
	return r.res
}

func requireVersion(t *testing.T, s store.Store, key []byte, version uint64) {
	t.Helper()
	item, err := s.Get(t.Context(), key)
	require.NoError(t, err, "key %q", key)
	require.Equal(t, version, item.Version, "key %q", key)
}

func requireAbsent(t *testing.T, s store.Store, key []byte) {
	t.Helper()
	_, err := s.Get(t.Context(), key)
	require.ErrorIs(t, err, store.ErrNotFound, "key %q", key)
}

func TestGroupCommit_ConcurrentCASOnOneKeyHasOneWinnerPerVersion(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	slowDisk(b.s, time.Millisecond)
	key := store.Key("counter")
	_, err := b.s.Commit(t.Context(), putBatch(key, "0"))
	require.NoError(t, err)
	const workers, attempts = 64, 20
	var mu sync.Mutex
	seen := map[uint64]bool{} // versions a winning CAS held
	made := map[uint64]bool{} // versions winning CASes wrote
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range attempts {
				item, err := b.s.Get(t.Context(), key)
				if !assertNoError(t, err) {
					return
				}
				n, _ := strconv.Atoi(string(item.Value))
				res, err := b.s.Commit(t.Context(), putBatch(key, strconv.Itoa(n+1), store.IfVersion(key, item.Version)))
				if errors.Is(err, store.ErrConditionFailed) {
					continue
				}
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				if seen[item.Version] || made[res.Versions[0]] {
					t.Errorf("two winning CASes held version %d or wrote version %d", item.Version, res.Versions[0])
				}
				seen[item.Version], made[res.Versions[0]] = true, true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	item, err := b.s.Get(t.Context(), key)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(len(made)), string(item.Value), "the counter must equal the number of winning CASes")
	require.True(t, made[item.Version], "the last winner's version is the stored one")
	groups, batches, _ := pebblestore.GroupStats(b.s)
	require.Less(t, groups, batches, "64 committers must have shared groups")
}

// assertNoError reports err from a goroutine that is not the test's.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}

func TestGroupCommit_IndependentBatchesInOneGroupAllSucceed(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	g := hold(t, b.s)
	leader := holdLeader(t, b.s, g, []byte("leader"))
	const n = 8
	batches := make([]*store.Batch, n)
	for i := range batches {
		key := []byte("k" + strconv.Itoa(i))
		batches[i] = putBatch(key, strconv.Itoa(i), store.IfAbsent(key))
	}
	chs := queueInOrder(t, b.s, nil, batches)
	g.let(t, nil)
	require.Equal(t, n, g.next(t), "everything queued behind the leader is one group")
	g.let(t, nil)
	requireCommitted(t, leader)
	versions := map[uint64]bool{}
	for i, ch := range chs {
		res := requireCommitted(t, ch)
		requireVersion(t, b.s, []byte("k"+strconv.Itoa(i)), res.Versions[0])
		versions[res.Versions[0]] = true
	}
	require.Len(t, versions, n, "each batch of a group has its own version")
	groups, batches2, largest := pebblestore.GroupStats(b.s)
	require.Equal(t, []uint64{2, n + 1, n}, []uint64{groups, batches2, largest})
}

func TestGroupCommit_FailedConditionLeavesTheRestOfItsGroupAlone(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	x, y, z := []byte("x"), []byte("y"), []byte("z")
	seeded, err := b.s.Commit(t.Context(), putBatch(y, "seed"))
	require.NoError(t, err)
	g := hold(t, b.s)
	leader := holdLeader(t, b.s, g, []byte("leader"))
	chs := queueInOrder(t, b.s, nil, []*store.Batch{
		putBatch(x, "first", store.IfAbsent(x)),         // 0: wins x
		putBatch(x, "second", store.IfAbsent(x)),        // 1: sees 0's write in the group
		putBatch(y, "stale", store.IfVersion(y, 1<<40)), // 2: fails against the store
		putBatch(z, "z"), // 3: independent
		{Conditions: []store.Condition{store.IfPresent(x)}, // 4: deletes 0's write
			Ops: []store.Op{store.Delete(x)}},
		putBatch(x, "again", store.IfAbsent(x)),                                 // 5: recreates x
		{Conditions: []store.Condition{store.IfVersion(y, seeded.Versions[0])}}, // 6: conditions only
	})
	g.let(t, nil)
	require.Equal(t, 7, g.next(t))
	g.let(t, nil)
	requireCommitted(t, leader)
	first := requireCommitted(t, chs[0]).Versions[0]

	var cf *store.ConditionFailedError
	r := await(t, chs[1])
	require.ErrorAs(t, r.err, &cf)
	require.Equal(t, store.ConditionFailedError{Condition: store.IfAbsent(x), Key: x, Found: true, Version: first}, *cf,
		"the failure names the version an earlier batch of the group wrote")
	r = await(t, chs[2])
	require.ErrorAs(t, r.err, &cf)
	require.Equal(t, seeded.Versions[0], cf.Version)

	zv := requireCommitted(t, chs[3]).Versions[0]
	requireCommitted(t, chs[4])
	again := requireCommitted(t, chs[5]).Versions[0]
	require.NotEqual(t, first, again, "a key deleted and recreated within one group never repeats a version")
	requireCommitted(t, chs[6])

	requireVersion(t, b.s, x, again)
	requireVersion(t, b.s, y, seeded.Versions[0])
	requireVersion(t, b.s, z, zv)
	item, err := b.s.Get(t.Context(), x)
	require.NoError(t, err)
	require.Equal(t, "again", string(item.Value))
}

func TestGroupCommit_ConcurrentCommitsShareGroups(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	slowDisk(b.s, time.Millisecond)
	const workers, each = 32, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				_, err := b.s.Commit(t.Context(), putBatch(store.Key("w", strconv.Itoa(w), strconv.Itoa(i)), "v"))
				assertNoError(t, err)
			}
		})
	}
	wg.Wait()
	groups, batches, largest := pebblestore.GroupStats(b.s)
	require.EqualValues(t, workers*each, batches)
	require.Less(t, groups, batches, "concurrent commits must share synced applies")
	require.Greater(t, largest, uint64(1))
	t.Logf("%d batches in %d groups (largest %d)", batches, groups, largest)
}

func TestGroupCommit_GroupsAreBoundedByBatchesAndBytes(t *testing.T) {
	t.Parallel()
	t.Run("batches", func(t *testing.T) {
		t.Parallel()
		b := setup(t, pebblestore.Config{MaxGroupBatches: 4})
		g := hold(t, b.s)
		leader := holdLeader(t, b.s, g, []byte("leader"))
		batches := make([]*store.Batch, 10)
		for i := range batches {
			batches[i] = putBatch([]byte("k"+strconv.Itoa(i)), "v")
		}
		chs := queueInOrder(t, b.s, nil, batches)
		g.let(t, nil)
		for _, want := range []int{4, 4, 2} {
			require.Equal(t, want, g.next(t))
			g.let(t, nil)
		}
		requireCommitted(t, leader)
		for _, ch := range chs {
			requireCommitted(t, ch)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, pebblestore.Config{MaxGroupBytes: 2500})
		g := hold(t, b.s)
		leader := holdLeader(t, b.s, g, []byte("leader"))
		big := string(make([]byte, 1000))
		chs := queueInOrder(t, b.s, nil, []*store.Batch{
			putBatch([]byte("a"), big), putBatch([]byte("b"), big), putBatch([]byte("c"), big),
			putBatch([]byte("huge"), string(make([]byte, 5000))), // over the bound: commits alone
			putBatch([]byte("d"), big),
		})
		g.let(t, nil)
		for _, want := range []int{2, 1, 1, 1} {
			require.Equal(t, want, g.next(t))
			g.let(t, nil)
		}
		requireCommitted(t, leader)
		for _, ch := range chs {
			requireCommitted(t, ch)
		}
	})
}

func TestGroupCommit_AcknowledgedCommitsSurviveReopen(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	const workers, each = 32, 20
	var mu sync.Mutex
	acked := map[string]uint64{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := store.Key("w", strconv.Itoa(w), strconv.Itoa(i))
				res, err := b.s.Commit(t.Context(), putBatch(key, "v", store.IfAbsent(key)))
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				acked[string(key)] = res.Versions[0]
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, acked, workers*each)
	require.NoError(t, b.s.Close())

	s, err := pebblestore.Open(b.dir, pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	used := map[uint64]bool{}
	for key, version := range acked {
		requireVersion(t, s, []byte(key), version)
		used[version] = true
	}
	res, err := s.Commit(t.Context(), putBatch([]byte("after"), "v"))
	require.NoError(t, err)
	require.False(t, used[res.Versions[0]], "version %d handed out again after reopen", res.Versions[0])
}

func TestGroupCommit_AcknowledgedCommitsSurviveACrash(t *testing.T) {
	t.Parallel()
	fs := vfs.NewCrashableMem()
	s, err := pebblestore.OpenFS("db", pebblestore.Config{}, fs)
	require.NoError(t, err)
	const workers, each = 32, 40
	var mu sync.Mutex
	acked := map[string]uint64{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := store.Key("w", strconv.Itoa(w), strconv.Itoa(i))
				res, err := s.Commit(t.Context(), putBatch(key, "v"))
				if !assertNoError(t, err) {
					return
				}
				mu.Lock()
				acked[string(key)] = res.Versions[0]
				mu.Unlock()
			}
		})
	}
	// Crash while groups are still committing: only what was synced survives.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= workers*each/2 }, time.Minute, time.Millisecond)
	mu.Lock()
	before := maps.Clone(acked)
	mu.Unlock()
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	wg.Wait()
	require.NoError(t, s.Close())

	s, err = pebblestore.OpenFS("db", pebblestore.Config{}, crashed)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	used := map[uint64]bool{}
	for key, version := range before {
		requireVersion(t, s, []byte(key), version)
		used[version] = true
	}
	res, err := s.Commit(t.Context(), putBatch([]byte("after"), "v"))
	require.NoError(t, err)
	require.False(t, used[res.Versions[0]], "version %d handed out again after the crash", res.Versions[0])
	t.Logf("%d of %d commits acknowledged before the crash", len(before), workers*each)
}

func TestGroupCommit_CancelWhileQueuedWithdrawsTheBatch(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	g := hold(t, b.s)
	leader := holdLeader(t, b.s, g, []byte("leader"))
	c, cancel := context.WithCancel(t.Context())
	chs := queueInOrder(t, b.s, []context.Context{c, nil}, []*store.Batch{
		putBatch([]byte("withdrawn"), "v"),
		putBatch([]byte("behind"), "v"),
	})
	cancel()
	r := await(t, chs[0])
	require.ErrorIs(t, r.err, context.Canceled)
	require.NotErrorIs(t, r.err, store.ErrOutcomeUnknown, "a batch withdrawn before it was taken is not ambiguous")
	require.Equal(t, 1, pebblestore.QueueLen(b.s))

	g.let(t, nil)
	require.Equal(t, 1, g.next(t), "the withdrawn batch is not in the next group")
	g.let(t, nil)
	requireCommitted(t, leader)
	requireCommitted(t, chs[1])
	requireAbsent(t, b.s, []byte("withdrawn"))
}

func TestGroupCommit_CancelAfterTakenReportsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	g := hold(t, b.s)
	leader := holdLeader(t, b.s, g, []byte("leader"))
	c, cancel := context.WithCancel(t.Context())
	chs := queueInOrder(t, b.s, []context.Context{nil, c}, []*store.Batch{
		putBatch([]byte("next-leader"), "v"),
		putBatch([]byte("left"), "v"),
	})
	g.let(t, nil)
	require.Equal(t, 2, g.next(t), "both batches are taken and folded")
	cancel()
	r := await(t, chs[1])
	require.ErrorIs(t, r.err, store.ErrOutcomeUnknown)
	require.ErrorIs(t, r.err, context.Canceled)
	g.let(t, nil)
	requireCommitted(t, leader)
	requireCommitted(t, chs[0])
	_, err := b.s.Get(t.Context(), []byte("left"))
	require.NoError(t, err, "the caller left, but its group still applied its batch")
}

func TestGroupCommit_FailedApplyFailsEveryBatchOfTheGroupAsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	g := hold(t, b.s)
	leader := holdLeader(t, b.s, g, []byte("leader"))
	chs := queueInOrder(t, b.s, nil, []*store.Batch{
		putBatch([]byte("a"), "v"),
		putBatch([]byte("b"), "v", store.IfAbsent([]byte("b"))),
		putBatch([]byte("leader"), "v", store.IfAbsent([]byte("leader"))), // fails its condition
	})
	g.let(t, nil)
	require.Equal(t, 3, g.next(t))
	injected := errors.New("injected: disk gone")
	g.let(t, injected)
	requireCommitted(t, leader)
	for i, ch := range chs {
		r := await(t, ch)
		require.ErrorIs(t, r.err, store.ErrOutcomeUnknown, "batch %d", i)
		require.ErrorIs(t, r.err, injected, "batch %d", i)
	}
	requireAbsent(t, b.s, []byte("a"))
	requireAbsent(t, b.s, []byte("b"))

	ch := startCommit(t.Context(), b.s, putBatch([]byte("a"), "v"))
	require.Equal(t, 1, g.next(t))
	g.let(t, nil)
	requireCommitted(t, ch)
}

func TestGroupCommit_CancelledCallersNeverStallOrTearTheQueue(t *testing.T) {
	t.Parallel()
	b := setup(t, pebblestore.Config{})
	const workers, each = 32, 30
	type outcomeOf struct {
		key     []byte
		version uint64
		err     error
	}
	outcomes := make(chan outcomeOf, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := store.Key("w", strconv.Itoa(w), strconv.Itoa(i))
				c, cancel := context.WithTimeout(t.Context(), time.Duration(rand.IntN(3000))*time.Microsecond)
				res, err := b.s.Commit(c, putBatch(key, "v"))
				cancel()
				o := outcomeOf{key: key, err: err}
				if err == nil {
					o.version = res.Versions[0]
				}
				outcomes <- o
			}
		})
	}
	wg.Wait()
	close(outcomes)
	counts := map[string]int{}
	for o := range outcomes {
		switch {
		case o.err == nil:
			counts["committed"]++
			requireVersion(t, b.s, o.key, o.version)
		case errors.Is(o.err, store.ErrOutcomeUnknown):
			counts["unknown"]++
		case errors.Is(o.err, context.DeadlineExceeded):
			counts["withdrawn"]++
			requireAbsent(t, b.s, o.key)
		default:
			require.NoError(t, o.err)
		}
	}
	t.Logf("outcomes: %v", counts)
	require.Zero(t, pebblestore.QueueLen(b.s))
	_, err := b.s.Commit(t.Context(), putBatch([]byte("after"), "v"))
	require.NoError(t, err, "the queue still has a leader to give")
}
