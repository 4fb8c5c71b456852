package sqlstore_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// cockroachPath opens a store on the CockroachDB path against the local
// PostgreSQL (sqlstore.Config.Path), at SERIALIZABLE.
func cockroachPath(t testing.TB, d *database, schema string, cfg sqlstore.Config) *sqlstore.Store {
	cfg.Schema, cfg.Path = schema, sqlstore.CockroachDB
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 8
	}
	return d.OpenConfig(t, cfg)
}

// TestConformance_CockroachDBPathOnPostgreSQL runs the storage suite through
// CockroachDB's code path (savepoint retries, no one-round-trip pipeline,
// SERIALIZABLE reads) against the local PostgreSQL. The suite gets no peers:
// on PostgreSQL each contended commit of this path costs several round trips
// and a doomed in-place retry, and the suite's 8,000 compare-and-set commits
// from four processes outlast its budget on a shared machine (over five
// minutes, measured); TestCockroachDBPath_ProcessesContendingForOneKeyLoseNoUpdate
// keeps processes contending on this path.
func TestConformance_CockroachDBPathOnPostgreSQL(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	storetest.Exercise(t, storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		schema := db.NewSchema(t)
		open := func(t testing.TB) store.Store { return cockroachPath(t, db, schema, sqlstore.Config{}) }
		return &storetest.Instance{Store: open(t), Reopen: open}
	}})
}

func TestCockroachDBPath_ProcessesContendingForOneKeyLoseNoUpdate(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	const processes, each = 4, 25
	key := []byte("counter")
	stores := make([]*sqlstore.Store, processes)
	for i := range stores {
		stores[i] = cockroachPath(t, db, schema, sqlstore.Config{MaxConns: 2})
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, processes)
	for _, s := range stores {
		wg.Go(func() {
			for done := 0; done < each; {
				cond, next := store.IfAbsent(key), 1
				it, err := s.Get(ctx, key)
				if err == nil {
					n, _ := strconv.Atoi(string(it.Value))
					cond, next = store.IfVersion(key, it.Version), n+1
				} else if !errors.Is(err, store.ErrNotFound) {
					errs <- err
					return
				}
				_, err = s.Commit(ctx, &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(key, []byte(strconv.Itoa(next)))}})
				switch {
				case err == nil:
					done++
				case errors.Is(err, store.ErrConditionFailed), errors.Is(err, store.ErrRetryable):
				default:
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
	it, err := stores[0].Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(processes*each), string(it.Value), "an update was lost")
}

func TestCockroachDBPath_RunsAtSerializableAndNamesItsBackend(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := cockroachPath(t, db, db.NewSchema(t), sqlstore.Config{})
	require.Equal(t, sqlstore.CockroachDB, s.Dialect())
	require.Equal(t, sqlstore.PostgreSQL, s.Server())
	require.Equal(t, "sql/postgresql+cockroachdb-path", s.Capabilities().Backend)
	var iso string
	require.NoError(t, sqlstore.Pool(s).QueryRow(context.Background(), "SHOW transaction_isolation").Scan(&iso))
	require.Equal(t, "serializable", iso, "reads run at SERIALIZABLE, as on CockroachDB")
}

func serializationFailure() error { return &pgconn.PgError{Code: "40001", Message: "injected"} }

func TestCockroachDBPath_ASerializationFailureIsRetriedInPlaceAndCounted(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	log := &statementLog{}
	s := cockroachPath(t, db, db.NewSchema(t), sqlstore.WithTracer(sqlstore.Config{}, log))
	var calls atomic.Int32
	sqlstore.SetAfterReadHook(s, func(_, _ int) error {
		if calls.Add(1) == 1 {
			return serializationFailure()
		}
		return nil
	})
	_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
	require.NoError(t, err)
	require.EqualValues(t, 2, calls.Load())
	require.EqualValues(t, 1, s.Stats().Retries, "the retry is counted")
	log.mu.Lock()
	require.Equal(t, 1, log.batched["ROLLBACK TO SAVEPOINT cockroach_restart"], "retried in place, through the savepoint")
	require.Equal(t, 1, log.batched["BEGIN ISOLATION LEVEL SERIALIZABLE"], "one transaction")
	log.mu.Unlock()
	it, err := s.Get(context.Background(), []byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(it.Value))
}

func TestRetries_EveryAttemptInPlaceOrFromBeginCountsAgainstMaxTxAttempts(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	for _, path := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.CockroachDB} {
		t.Run(string(path), func(t *testing.T) {
			t.Parallel()
			s := db.OpenConfig(t, sqlstore.Config{Schema: db.NewSchema(t), Path: path, MaxTxAttempts: 4})
			var calls atomic.Int32
			sqlstore.SetAfterReadHook(s, func(_, _ int) error {
				calls.Add(1)
				return serializationFailure()
			})
			_, err := s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put([]byte("k"), nil)}})
			require.ErrorIs(t, err, store.ErrRetryable)
			require.NotErrorIs(t, err, store.ErrOutcomeUnknown)
			require.EqualValues(t, 4, calls.Load(), "four attempts in all, never 4 × 50")
			require.EqualValues(t, 3, s.Stats().Retries, "each attempt after the first is counted")
			_, err = s.Get(context.Background(), []byte("k"))
			require.ErrorIs(t, err, store.ErrNotFound, "no attempt wrote")
		})
	}
}

func TestRetries_ReadsRunAgainAfterASerializationFailureBoundedAndCounted(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := db.OpenConfig(t, sqlstore.Config{Schema: db.NewSchema(t), MaxReadAttempts: 3})
	ctx := context.Background()
	_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
	require.NoError(t, err)

	var failures atomic.Int32
	failures.Store(2)
	sqlstore.SetBeforeReadHook(s, func(int) error {
		if failures.Add(-1) >= 0 {
			return serializationFailure()
		}
		return nil
	})
	it, err := s.Get(ctx, []byte("k"))
	require.NoError(t, err, "two failures, three attempts")
	require.Equal(t, "v", string(it.Value))
	require.EqualValues(t, 2, s.Stats().ReadRetries)

	for name, read := range map[string]func() error{
		"get":      func() error { _, err := s.Get(ctx, []byte("k")); return err },
		"get many": func() error { _, err := s.GetMany(ctx, [][]byte{[]byte("k")}); return err },
		"scan":     func() error { _, err := s.Scan(ctx, &store.ScanParams{Prefix: []byte("k")}); return err },
	} {
		failures.Store(3)
		before := s.Stats().ReadRetries
		require.ErrorIs(t, read(), store.ErrRetryable, "%s: the failure persists past the bound", name)
		require.EqualValues(t, 2, s.Stats().ReadRetries-before, name)
	}
}

// On CockroachDB's path a group whose batches share no key commits in one
// round trip, an implicit transaction of one pipeline; a condition that
// fails costs one read more; batches that share a key take two round trips
// (the reads, then the writes). The proxy counts what the store sends and
// then waits on: Syncs and simple Queries.
func TestCockroachDBPath_AGroupOfBatchesSharingNoKeyTakesOneRoundTrip(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	proxy := sqltest.StartProxy(t, db.URL)
	s := cockroachPath(t, db.Through(proxy), db.NewSchema(t), sqlstore.Config{MaxConns: 1})
	ctx := context.Background()
	k := func(s string) []byte { return []byte(s) }
	put := func(key string) *store.Batch {
		return &store.Batch{Conditions: []store.Condition{store.IfAbsent(k(key))}, Ops: []store.Op{store.Put(k(key), k("v"))}}
	}
	cases := []struct {
		name    string
		commit  func(round string)
		trips   int
		because string
	}{
		{"a batch alone", func(r string) {
			_, err := s.Commit(ctx, put("alone"+r))
			require.NoError(t, err)
		}, 1, "the check, the upsert and the Sync that commits them"},
		{"a group sharing no key", func(r string) {
			_, errs := sqlstore.CommitGroup(s, []*store.Batch{put("a" + r), put("b" + r),
				{Ops: []store.Op{store.Delete(k("a" + r + "x")), store.Put(k("c"+r), nil)}}})
			require.Equal(t, []error{nil, nil, nil}, errs)
		}, 1, "one implicit transaction"},
		{"a condition that fails", func(r string) {
			_, err := s.Commit(ctx, put("alone"+r))
			require.ErrorIs(t, err, store.ErrConditionFailed)
		}, 2, "the implicit transaction that aborts, then the read that answers the batch"},
		{"a group sharing a key", func(r string) {
			_, errs := sqlstore.CommitGroup(s, []*store.Batch{put("s" + r), {Ops: []store.Op{store.Put(k("s"+r), k("w"))}}})
			require.Equal(t, []error{nil, nil}, errs)
		}, 2, "BEGIN, SAVEPOINT and the reads; then the writes, RELEASE and COMMIT"},
	}
	for _, c := range cases {
		c.commit("warm") // prepares the statements of the path on the connection, once
	}
	for _, c := range cases {
		before := proxy.RoundTrips()
		c.commit("")
		require.Equal(t, c.trips, proxy.RoundTrips()-before, "%s: %s", c.name, c.because)
	}
	require.EqualValues(t, 4, s.Stats().OneRoundTrip, "the batch alone and the group, each warming up and then counted: %+v", s.Stats())
}
