package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

// groupBundle is one test's store on a schema of its own.
type groupBundle struct {
	db     *database
	schema string
	s      *sqlstore.Store
}

// setupGroups opens a store with cfg (URL and schema filled in).
func setupGroups(t *testing.T, cfg sqlstore.Config) *groupBundle {
	t.Helper()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	cfg.Schema = schema
	if cfg.URL == "" {
		cfg.URL = db.URL
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 8
	}
	s, err := sqlstore.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return &groupBundle{db: db, schema: schema, s: s}
}

func key(parts ...string) []byte { return store.Key(parts...) }

// gate holds the at-th group transaction that reaches the hook (the first,
// from newGate) inside its transaction until released, so that what is
// committed meanwhile queues up. It is released when the test ends, before
// the store closes, so that a failing test never leaves a transaction open.
type gate struct {
	at      int32
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate(t *testing.T) *gate { return newGateAt(t, 1) }

func newGateAt(t *testing.T, at int32) *gate {
	g := &gate{at: at, entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) hook(int, int) error {
	if g.calls.Add(1) == g.at {
		close(g.entered)
		<-g.release
	}
	return nil
}

// open releases the held group (once).
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// result is one Commit's answer.
type result struct {
	res *store.CommitResult
	err error
}

// commitAsync commits b on its own goroutine and answers the channel its
// result arrives on.
func commitAsync(ctx context.Context, s store.Store, b *store.Batch) chan result {
	ch := make(chan result, 1)
	go func() {
		res, err := s.Commit(ctx, b)
		ch <- result{res, err}
	}()
	return ch
}

// holdAndQueue starts a blocker commit whose group the gate holds, then
// queues batches behind it one at a time (so they queue in this order), and
// answers their result channels. Release the gate to let them commit.
func holdAndQueue(t *testing.T, s *sqlstore.Store, g *gate, batches ...*store.Batch) []chan result {
	t.Helper()
	blocker := commitAsync(context.Background(), s, &store.Batch{Ops: []store.Op{store.Put(key("blocker"), []byte("b"))}})
	t.Cleanup(func() {
		g.open()
		r := <-blocker
		require.NoError(t, r.err)
	})
	<-g.entered
	out := make([]chan result, len(batches))
	for i, b := range batches {
		out[i] = commitAsync(context.Background(), s, b)
		require.Eventually(t, func() bool { return sqlstore.QueuedBatches(s) == i+1 }, 10*time.Second, time.Millisecond)
	}
	return out
}

func requireOK(t *testing.T, ch chan result) *store.CommitResult {
	t.Helper()
	r := <-ch
	require.NoError(t, r.err)
	return r.res
}

func requireConditionFailed(t *testing.T, ch chan result) *store.ConditionFailedError {
	t.Helper()
	r := <-ch
	var cf *store.ConditionFailedError
	require.ErrorAs(t, r.err, &cf)
	return cf
}

func TestGroupCommit_ConcurrentCASIncrementsOnOneKeyLoseNoUpdate(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{})
	const workers, perWorker = 64, 10
	k := key("counter")
	var (
		mu       sync.Mutex
		versions = map[uint64]bool{}
		wins     atomic.Int64
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for range workers {
		wg.Go(func() {
			for n := 0; n < perWorker; {
				cond, next := store.IfAbsent(k), 1
				if it, err := b.s.Get(ctx, k); err == nil {
					v, _ := strconv.Atoi(string(it.Value))
					cond, next = store.IfVersion(k, it.Version), v+1
				} else if !errors.Is(err, store.ErrNotFound) {
					t.Error(err)
					return
				}
				res, err := b.s.Commit(ctx, &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(k, []byte(strconv.Itoa(next)))}})
				switch {
				case err == nil:
					mu.Lock()
					if versions[res.Versions[0]] {
						t.Errorf("two successful compare-and-sets produced version %d", res.Versions[0])
					}
					versions[res.Versions[0]] = true
					mu.Unlock()
					wins.Add(1)
					n++
				case errors.Is(err, store.ErrConditionFailed), errors.Is(err, store.ErrRetryable):
				default:
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	it, err := b.s.Get(ctx, k)
	require.NoError(t, err)
	require.Equal(t, strconv.FormatInt(wins.Load(), 10), string(it.Value), "an update was lost")
	require.EqualValues(t, workers*perWorker, wins.Load())
	require.Len(t, versions, workers*perWorker)
	require.True(t, versions[it.Version], "the stored version is one a winner was given")
}

func TestGroupCommit_IndependentBatchesInOneGroupAllSucceed(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	existing := put(t, b.s, key("existing"), "0")
	g := newGate(t)
	sqlstore.SetAfterReadHook(b.s, g.hook)
	batches := []*store.Batch{
		{Ops: []store.Op{store.Put(key("a"), []byte("a"))}},
		{Conditions: []store.Condition{store.IfAbsent(key("b"))}, Ops: []store.Op{store.Put(key("b"), []byte("b")), store.Put(key("b2"), nil)}},
		{Conditions: []store.Condition{store.IfVersion(key("existing"), existing)}, Ops: []store.Op{store.Put(key("existing"), []byte("1"))}},
		{Conditions: []store.Condition{store.IfPresent(key("existing"))}},
		{Ops: []store.Op{store.Delete(key("never-was")), store.Put(key("c"), []byte("c"))}},
	}
	chans := holdAndQueue(t, b.s, g, batches...)
	g.open()
	for i, ch := range chans {
		res := requireOK(t, ch)
		require.Len(t, res.Versions, len(batches[i].Ops))
		for j, op := range batches[i].Ops {
			if op.Kind == store.OpDelete {
				require.Zero(t, res.Versions[j])
				continue
			}
			it, err := b.s.Get(context.Background(), op.Key)
			require.NoError(t, err)
			require.Equal(t, res.Versions[j], it.Version, "key %s", op.Key)
			require.Equal(t, string(op.Value), string(it.Value))
		}
	}
	st := b.s.Stats()
	require.GreaterOrEqual(t, st.LargestGroup, len(batches), "the queued batches commit as one group: %+v", st)
}

func TestGroupCommit_FailedConditionLeavesNeighboursCommitted(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	xVersion := put(t, b.s, key("x"), "x0")
	g := newGate(t)
	sqlstore.SetAfterReadHook(b.s, g.hook)
	chans := holdAndQueue(t, b.s, g,
		&store.Batch{Ops: []store.Op{store.Put(key("n1"), []byte("1"))}},
		// A stale version: fails, writes neither of its keys.
		&store.Batch{Conditions: []store.Condition{store.IfVersion(key("x"), xVersion+1000)},
			Ops: []store.Op{store.Put(key("x"), []byte("stale")), store.Put(key("stale-side"), nil)}},
		&store.Batch{Conditions: []store.Condition{store.IfVersion(key("x"), xVersion)}, Ops: []store.Op{store.Put(key("x"), []byte("x1"))}},
		// Read before the batch above: its version is now that batch's.
		&store.Batch{Conditions: []store.Condition{store.IfVersion(key("x"), xVersion)}, Ops: []store.Op{store.Put(key("x"), []byte("lost"))}},
		&store.Batch{Conditions: []store.Condition{store.IfAbsent(key("y"))}, Ops: []store.Op{store.Put(key("y"), []byte("first"))}},
		&store.Batch{Conditions: []store.Condition{store.IfAbsent(key("y"))}, Ops: []store.Op{store.Put(key("y"), []byte("second"))}},
		&store.Batch{Ops: []store.Op{store.Put(key("n2"), []byte("2"))}},
	)
	g.open()
	requireOK(t, chans[0])
	cf := requireConditionFailed(t, chans[1])
	require.Equal(t, key("x"), cf.Key)
	require.True(t, cf.Found)
	require.Equal(t, xVersion, cf.Version)
	x1 := requireOK(t, chans[2]).Versions[0]
	cf = requireConditionFailed(t, chans[3])
	require.Equal(t, x1, cf.Version, "the loser sees the version its group neighbour wrote")
	y := requireOK(t, chans[4]).Versions[0]
	cf = requireConditionFailed(t, chans[5])
	require.True(t, cf.Found)
	require.Equal(t, y, cf.Version)
	requireOK(t, chans[6])

	requireValue(t, b.s, key("x"), "x1", x1)
	requireValue(t, b.s, key("y"), "first", y)
	for _, k := range [][]byte{key("n1"), key("n2")} {
		_, err := b.s.Get(context.Background(), k)
		require.NoError(t, err)
	}
	_, err := b.s.Get(context.Background(), key("stale-side"))
	require.ErrorIs(t, err, store.ErrNotFound, "a failed batch writes none of its keys")
}

func TestGroupCommit_SameKeyTwiceInOneGroupGetsDistinctVersionsLastWriteWins(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	k := key("k")
	old := put(t, b.s, k, "old")
	g := newGate(t)
	sqlstore.SetAfterReadHook(b.s, g.hook)
	chans := holdAndQueue(t, b.s, g,
		&store.Batch{Ops: []store.Op{store.Put(k, []byte("one"))}},
		&store.Batch{Ops: []store.Op{store.Delete(k)}},
		&store.Batch{Conditions: []store.Condition{store.IfAbsent(k)}, Ops: []store.Op{store.Put(k, []byte("three"))}},
	)
	g.open()
	one := requireOK(t, chans[0]).Versions[0]
	requireOK(t, chans[1])
	three := requireOK(t, chans[2]).Versions[0]
	require.NotEqual(t, old, one)
	require.NotEqual(t, one, three)
	require.NotEqual(t, old, three)
	requireValue(t, b.s, k, "three", three)
}

func TestGroupCommit_GroupsFormUnderConcurrency(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{})
	const workers, perWorker = 32, 20
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				k := key("w", strconv.Itoa(w), strconv.Itoa(i))
				_, err := b.s.Commit(context.Background(), &store.Batch{
					Conditions: []store.Condition{store.IfAbsent(k)}, Ops: []store.Op{store.Put(k, []byte("v"))}})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st := b.s.Stats()
	require.EqualValues(t, workers*perWorker, st.Batches, "%+v", st)
	require.Less(t, st.Groups, st.Batches, "concurrent commits share transactions: %+v", st)
	require.Greater(t, st.LargestGroup, 1, "%+v", st)
	res, err := b.s.Scan(context.Background(), &store.ScanParams{Prefix: store.KeyPrefix("w"), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	require.Len(t, res.Items, workers*perWorker)
}

func TestGroupCommit_SerializationFailureRetryGivesEveryBatchOneOutcome(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	g := newGate(t)
	x, y, z := key("x"), key("y"), key("z")
	zVersion := put(t, b.s, z, "z0")
	var injected atomic.Uint64
	var attempts [][2]int // batches, attempt
	var mu sync.Mutex
	sqlstore.SetAfterReadHook(b.s, func(batches, attempt int) error {
		if err := g.hook(batches, attempt); err != nil {
			return err
		}
		if batches == 1 {
			return nil // the blocker
		}
		mu.Lock()
		attempts = append(attempts, [2]int{batches, attempt})
		mu.Unlock()
		if attempt == 1 {
			// Another process creates x after this transaction's snapshot:
			// its upsert of x can no longer serialize.
			injected.Store(insertBehind(t, b, x, "theirs"))
		}
		return nil
	})
	chans := holdAndQueue(t, b.s, g,
		&store.Batch{Conditions: []store.Condition{store.IfAbsent(x)}, Ops: []store.Op{store.Put(x, []byte("ours"))}},
		&store.Batch{Ops: []store.Op{store.Put(y, []byte("y"))}},
		&store.Batch{Conditions: []store.Condition{store.IfVersion(z, zVersion)}, Ops: []store.Op{store.Put(z, []byte("z1"))}},
	)
	g.open()
	cf := requireConditionFailed(t, chans[0])
	require.True(t, cf.Found)
	require.Equal(t, injected.Load(), cf.Version, "the retry sees the other process's write")
	yv := requireOK(t, chans[1]).Versions[0]
	zv := requireOK(t, chans[2]).Versions[0]
	for _, ch := range chans {
		select {
		case r := <-ch:
			t.Fatalf("a batch got a second outcome: %+v", r)
		default:
		}
	}
	requireValue(t, b.s, x, "theirs", injected.Load())
	requireValue(t, b.s, y, "y", yv)
	requireValue(t, b.s, z, "z1", zv)
	st := b.s.Stats()
	require.GreaterOrEqual(t, st.Retries, uint64(1), "%+v", st)
	require.Equal(t, store.GroupStats{Groups: st.Groups, Batches: st.Batches, Retries: st.Retries}, b.s.GroupStats())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, [][2]int{{3, 1}, {2, 2}}, attempts, "one failed attempt of all three, then one of the two left")
}

// insertBehind writes key straight into the test's table from another
// connection, as another process would, and answers its version.
func insertBehind(t *testing.T, b *groupBundle, k []byte, value string) uint64 {
	table := pgx.Identifier{b.schema, "weft_kv"}.Sanitize()
	seq := b.schema + ".weft_kv_version"
	var v int64
	err := b.db.Admin.QueryRow(context.Background(),
		fmt.Sprintf("INSERT INTO %s (k, v, version) VALUES ($1, $2, nextval('%s')) RETURNING version", table, seq),
		k, []byte(value)).Scan(&v)
	if err != nil {
		t.Errorf("insert behind the group: %v", err)
	}
	return uint64(v)
}

func TestGroupCommit_ContextCanceledWhileQueuedWritesNothing(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	g := newGate(t)
	sqlstore.SetAfterReadHook(b.s, g.hook)
	ctx, cancel := context.WithCancel(context.Background())
	k := key("withdrawn")
	blocker := commitAsync(context.Background(), b.s, &store.Batch{Ops: []store.Op{store.Put(key("blocker"), nil)}})
	<-g.entered
	ch := commitAsync(ctx, b.s, &store.Batch{Ops: []store.Op{store.Put(k, []byte("v"))}})
	require.Eventually(t, func() bool { return sqlstore.QueuedBatches(b.s) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	select {
	case r := <-ch:
		require.ErrorIs(t, r.err, context.Canceled)
		require.NotErrorIs(t, r.err, store.ErrOutcomeUnknown, "a batch withdrawn from the queue was never sent")
	case <-time.After(10 * time.Second):
		t.Fatal("a queued commit did not end with its context")
	}
	g.open()
	requireOK(t, blocker)
	after := key("after")
	put(t, b.s, after, "v")
	_, err := b.s.Get(context.Background(), k)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.EqualValues(t, 2, b.s.Stats().Batches, "the withdrawn batch joined no group")
}

func TestGroupCommit_ContextCanceledWhileCommittingIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	blocker, inFlight := newGateAt(t, 1), newGateAt(t, 2)
	sqlstore.SetAfterReadHook(b.s, func(batches, attempt int) error {
		_ = blocker.hook(batches, attempt)
		return inFlight.hook(batches, attempt)
	})
	ctx, cancel := context.WithCancel(context.Background())
	k := key("in-flight")
	first := commitAsync(context.Background(), b.s, &store.Batch{Ops: []store.Op{store.Put(key("blocker"), nil)}})
	<-blocker.entered
	ch := commitAsync(ctx, b.s, &store.Batch{Ops: []store.Op{store.Put(k, []byte("v"))}})
	require.Eventually(t, func() bool { return sqlstore.QueuedBatches(b.s) == 1 }, 10*time.Second, time.Millisecond)
	blocker.open()
	requireOK(t, first)
	<-inFlight.entered // the batch's group is inside its transaction
	cancel()
	select {
	case r := <-ch:
		require.ErrorIs(t, r.err, store.ErrOutcomeUnknown)
		require.ErrorIs(t, r.err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("a committing batch did not answer when its context ended")
	}
	inFlight.open()
	// The group was not cancelled with its caller: the batch committed,
	// which the caller learns by reading.
	require.Eventually(t, func() bool {
		_, err := b.s.Get(context.Background(), k)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
}

func TestGroupCommit_AloneCommitsOnTheCallersContext(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(key("k"), nil)}})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, store.ErrOutcomeUnknown)
	v := put(t, b.s, key("k"), "v")
	requireValue(t, b.s, key("k"), "v", v)
	st := b.s.Stats()
	require.EqualValues(t, 1, st.Groups, "an idle store commits a batch at once, as a group of one: %+v", st)
}

func put(t *testing.T, s store.Store, k []byte, value string) uint64 {
	t.Helper()
	res, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put(k, []byte(value))}})
	require.NoError(t, err)
	return res.Versions[0]
}

func requireValue(t *testing.T, s store.Store, k []byte, value string, version uint64) {
	t.Helper()
	it, err := s.Get(context.Background(), k)
	require.NoError(t, err)
	require.Equal(t, value, string(it.Value), "key %s", k)
	require.Equal(t, version, it.Version, "key %s", k)
}

// holdBeforeAttempt is holdAndQueue with the gate before the blocker's
// transaction begins, which leaves every group on the path it takes without
// a test hook.
func holdBeforeAttempt(t *testing.T, s *sqlstore.Store, batches ...*store.Batch) ([]chan result, *gate) {
	t.Helper()
	g := newGate(t)
	sqlstore.SetBeforeAttemptHook(s, g.hook)
	return holdAndQueue(t, s, g, batches...), g
}

func TestGroupCommit_BatchesSharingNoKeyCommitInOneRoundTrip(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	existing := put(t, b.s, key("existing"), "0")
	present := put(t, b.s, key("present"), "p")
	batches := []*store.Batch{
		{Ops: []store.Op{store.Put(key("a"), []byte("a"))}},
		{Conditions: []store.Condition{store.IfAbsent(key("b"))}, Ops: []store.Op{store.Put(key("b"), []byte("b")), store.Put(key("b2"), nil)}},
		{Conditions: []store.Condition{store.IfVersion(key("existing"), existing)}, Ops: []store.Op{store.Put(key("existing"), []byte("1"))}},
		{Conditions: []store.Condition{store.IfPresent(key("present"))}, Ops: []store.Op{store.Delete(key("present"))}},
		{Ops: []store.Op{store.Delete(key("never-was")), store.Put(key("c"), []byte("c"))}},
	}
	chans, g := holdBeforeAttempt(t, b.s, batches...)
	g.open()
	for i, ch := range chans {
		res := requireOK(t, ch)
		require.Len(t, res.Versions, len(batches[i].Ops))
		for j, op := range batches[i].Ops {
			if op.Kind == store.OpDelete {
				require.Zero(t, res.Versions[j])
				_, err := b.s.Get(context.Background(), op.Key)
				require.ErrorIs(t, err, store.ErrNotFound)
				continue
			}
			it, err := b.s.Get(context.Background(), op.Key)
			require.NoError(t, err)
			require.Equal(t, res.Versions[j], it.Version, "key %s", op.Key)
			require.Equal(t, string(op.Value), string(it.Value))
			require.NotEqual(t, existing, it.Version)
			require.NotEqual(t, present, it.Version)
		}
	}
	st := b.s.Stats()
	require.GreaterOrEqual(t, st.LargestGroup, len(batches), "the queued batches commit as one group: %+v", st)
	require.Equal(t, st.Groups, st.OneRoundTrip, "every group committed in one round trip: %+v", st)
	require.Zero(t, st.Fallbacks, "%+v", st)
}

func TestGroupCommit_FailedConditionInOneRoundTripFallsBackAndLeavesNeighboursCommitted(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	xVersion := put(t, b.s, key("x"), "x0")
	yVersion := put(t, b.s, key("y"), "y0")
	chans, g := holdBeforeAttempt(t, b.s,
		&store.Batch{Ops: []store.Op{store.Put(key("n1"), []byte("1"))}},
		// A stale version: fails, writes neither of its keys.
		&store.Batch{Conditions: []store.Condition{store.IfVersion(key("x"), xVersion+1000)},
			Ops: []store.Op{store.Put(key("x"), []byte("stale")), store.Put(key("stale-side"), nil)}},
		&store.Batch{Conditions: []store.Condition{store.IfAbsent(key("y"))}, Ops: []store.Op{store.Put(key("absent-side"), nil)}},
		&store.Batch{Conditions: []store.Condition{store.IfPresent(key("z"))}, Ops: []store.Op{store.Put(key("present-side"), nil)}},
		&store.Batch{Ops: []store.Op{store.Put(key("n2"), []byte("2"))}},
	)
	g.open()
	requireOK(t, chans[0])
	cf := requireConditionFailed(t, chans[1])
	require.Equal(t, key("x"), cf.Key)
	require.True(t, cf.Found)
	require.Equal(t, xVersion, cf.Version)
	cf = requireConditionFailed(t, chans[2])
	require.Equal(t, key("y"), cf.Key)
	require.True(t, cf.Found)
	require.Equal(t, yVersion, cf.Version)
	cf = requireConditionFailed(t, chans[3])
	require.Equal(t, key("z"), cf.Key)
	require.False(t, cf.Found)
	requireOK(t, chans[4])

	requireValue(t, b.s, key("x"), "x0", xVersion)
	for _, k := range [][]byte{key("n1"), key("n2")} {
		_, err := b.s.Get(context.Background(), k)
		require.NoError(t, err)
	}
	for _, k := range [][]byte{key("stale-side"), key("absent-side"), key("present-side")} {
		_, err := b.s.Get(context.Background(), k)
		require.ErrorIs(t, err, store.ErrNotFound, "a failed batch writes none of its keys")
	}
	st := b.s.Stats()
	require.EqualValues(t, 1, st.Fallbacks, "the group was decided batch by batch after its one-round-trip attempt: %+v", st)
}

func TestGroupCommit_BatchesSharingAKeyAreDecidedBatchByBatch(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	k := key("k")
	v0 := put(t, b.s, k, "v0")
	chans, g := holdBeforeAttempt(t, b.s,
		&store.Batch{Conditions: []store.Condition{store.IfVersion(k, v0)}, Ops: []store.Op{store.Put(k, []byte("first"))}},
		&store.Batch{Conditions: []store.Condition{store.IfVersion(k, v0)}, Ops: []store.Op{store.Put(k, []byte("second"))}},
	)
	g.open()
	first := requireOK(t, chans[0]).Versions[0]
	cf := requireConditionFailed(t, chans[1])
	require.Equal(t, first, cf.Version, "the second sees the first's write")
	requireValue(t, b.s, k, "first", first)
	st := b.s.Stats()
	require.Equal(t, st.Groups-1, st.OneRoundTrip, "only the group with the shared key took two round trips: %+v", st)
	require.Zero(t, st.Fallbacks, "%+v", st)
}

func TestGroupCommit_OneRoundTripSerializationFailureIsRetriedAndAnswersTheNewRow(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	ctx := context.Background()
	x := key("x")
	v0 := put(t, b.s, x, "x0")
	// Another process updates x and holds its row lock until told.
	other, err := b.db.Admin.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = other.Rollback(ctx) }()
	table := pgx.Identifier{b.schema, "weft_kv"}.Sanitize()
	seq := b.schema + ".weft_kv_version"
	var theirs int64
	require.NoError(t, other.QueryRow(ctx, fmt.Sprintf("UPDATE %s SET v = 'theirs', version = nextval('%s') WHERE k = $1 RETURNING version", table, seq), x).Scan(&theirs))
	ch := commitAsync(ctx, b.s, &store.Batch{Conditions: []store.Condition{store.IfVersion(x, v0)}, Ops: []store.Op{store.Put(x, []byte("ours"))}})
	// The one-round-trip check waits for the row lock, with a snapshot from
	// before the other process commits.
	require.Eventually(t, func() bool {
		var waiting int
		err := b.db.Admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE $1::INT4 = ANY(pg_blocking_pids(pid))",
			other.Conn().PgConn().PID()).Scan(&waiting)
		return err == nil && waiting > 0
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, other.Commit(ctx))
	cf := requireConditionFailed(t, ch)
	require.True(t, cf.Found)
	require.Equal(t, uint64(theirs), cf.Version, "the retry answers from the row the other process wrote")
	requireValue(t, b.s, x, "theirs", uint64(theirs))
	st := b.s.Stats()
	require.EqualValues(t, 1, st.Retries, "%+v", st)
}

// The one round trip answers each put the version its own key drew, whatever
// the key's bytes: keys that sort differently as text and as bytes, keys
// that prefix others, bytes above 0x7f.
func TestGroupCommit_OneRoundTripAnswersEachKeyItsOwnVersionWhateverItsBytes(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
	keys := [][]byte{[]byte("\xff"), []byte("a"), []byte("a\x00"), []byte("B"), []byte("\x00"), []byte("ab"), []byte("\x7f\x80"), []byte("Ä")}
	existing := put(t, b.s, keys[2], "old")
	var batches []*store.Batch
	for i, k := range keys {
		ops := []store.Op{store.Delete([]byte(fmt.Sprintf("gone-%d", i))), store.Put(k, []byte(fmt.Sprint(i)))}
		batches = append(batches, &store.Batch{Ops: ops})
	}
	chans, g := holdBeforeAttempt(t, b.s, batches...)
	g.open()
	seen := map[uint64]bool{existing: true}
	for i, ch := range chans {
		res := requireOK(t, ch)
		it, err := b.s.Get(context.Background(), keys[i])
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(i), string(it.Value))
		require.Equal(t, it.Version, res.Versions[1], "key %q", keys[i])
		require.Zero(t, res.Versions[0])
		require.False(t, seen[it.Version], "version %d twice", it.Version)
		seen[it.Version] = true
	}
	st := b.s.Stats()
	require.GreaterOrEqual(t, st.LargestGroup, len(batches), "the queued batches commit as one group: %+v", st)
	require.Equal(t, st.Groups, st.OneRoundTrip, "every group committed in one round trip: %+v", st)
}

// A caller whose context ends while its group commits gets
// *store.OutcomeUnknownError and may reuse its batch at once: whatever it
// writes into the batch's keys and values afterwards never changes what the
// group commits, on either path (held before the attempt, the group takes
// the one round trip; held after its reads, it decides batch by batch).
func TestGroupCommit_CallerReusingItsBatchAfterOutcomeUnknownNeverChangesWhatCommits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		hold     func(*sqlstore.Store, func(batches, attempt int) error)
		oneTrips bool
	}{
		{"one round trip", sqlstore.SetBeforeAttemptHook, true},
		{"batch by batch", sqlstore.SetAfterReadHook, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupGroups(t, sqlstore.Config{MaxGroups: 1})
			sqlstore.PoisonRecycledRequests(b.s) // the request's own copy stays the leader's
			blocker, inFlight := newGateAt(t, 1), newGateAt(t, 2)
			tc.hold(b.s, func(batches, attempt int) error {
				_ = blocker.hook(batches, attempt)
				return inFlight.hook(batches, attempt)
			})
			first := commitAsync(context.Background(), b.s, &store.Batch{Ops: []store.Op{store.Put(key("blocker"), nil)}})
			<-blocker.entered
			k, k2, value := key("reused", "k"), key("reused", "k2"), []byte("the value committed")
			batch := &store.Batch{
				Conditions: []store.Condition{store.IfAbsent(k)},
				Ops:        []store.Op{store.Put(k, value), store.Put(k2, value)},
			}
			ctx, cancel := context.WithCancel(context.Background())
			ch := commitAsync(ctx, b.s, batch)
			require.Eventually(t, func() bool { return sqlstore.QueuedBatches(b.s) == 1 }, 10*time.Second, time.Millisecond)
			blocker.open()
			requireOK(t, first)
			<-inFlight.entered // the batch's group is inside its attempt
			cancel()
			r := <-ch
			require.ErrorIs(t, r.err, store.ErrOutcomeUnknown)
			// The caller reuses its buffers: other keys, other bytes.
			for _, buf := range [][]byte{k, k2, value, batch.Conditions[0].Key} {
				for i := range buf {
					buf[i] = 'x'
				}
			}
			inFlight.open()
			require.Eventually(t, func() bool {
				_, err := b.s.Get(context.Background(), key("reused", "k2"))
				return err == nil
			}, 10*time.Second, 5*time.Millisecond)
			res, err := b.s.Scan(context.Background(), &store.ScanParams{Prefix: []byte{}})
			require.NoError(t, err)
			got := map[string]bool{}
			for _, it := range res.Items {
				if string(it.Key) == string(key("blocker")) {
					continue
				}
				got[string(it.Key)] = true
				require.Equal(t, "the value committed", string(it.Value), "key %q", it.Key)
			}
			require.Len(t, got, 2, "exactly the batch's own keys were written: %q", got)
			for _, kk := range [][]byte{key("reused", "k"), key("reused", "k2")} {
				require.True(t, got[string(kk)], "key %q", kk)
			}
			if tc.oneTrips {
				// The leader counts the round trip once COMMIT has answered,
				// which the rows show first.
				require.Eventually(t, func() bool {
					st := b.s.Stats()
					return st.Groups == st.OneRoundTrip
				}, 10*time.Second, time.Millisecond, "%+v", b.s.Stats())
			} else {
				require.Zero(t, b.s.Stats().OneRoundTrip, "%+v", b.s.Stats())
			}
		})
	}
}

// A connection whose one-round-trip statements are gone (deallocated behind
// the store's back) fails the group it was sending, which writes nothing,
// and is closed: the next group prepares them on a new connection.
func TestGroupCommit_OneRoundTripOnAConnectionWithoutItsStatementsWritesNothingAndIsReplaced(t *testing.T) {
	t.Parallel()
	b := setupGroups(t, sqlstore.Config{MaxConns: 1, MaxGroups: 1})
	put(t, b.s, key("first"), "1") // prepares the statements on the only connection
	ctx := context.Background()
	_, err := sqlstore.Pool(b.s).Exec(ctx, "DEALLOCATE weft_trip_upsert")
	require.NoError(t, err)
	_, err = b.s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(key("lost"), []byte("v"))}})
	require.Error(t, err)
	require.NotErrorIs(t, err, store.ErrOutcomeUnknown, "the server refused the statement: nothing was written")
	_, err = b.s.Get(ctx, key("lost"))
	require.ErrorIs(t, err, store.ErrNotFound)
	v := put(t, b.s, key("after"), "2")
	requireValue(t, b.s, key("after"), "2", v)
	st := b.s.Stats()
	require.Equal(t, st.Groups-1, st.OneRoundTrip, "every other group committed in one round trip: %+v", st)
}
