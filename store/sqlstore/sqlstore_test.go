package sqlstore_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/cockroach-go/v2/testserver"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

func TestConformance_PostgreSQL(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	storetest.Exercise(t, harness(db))
}

// TestConformance_CockroachDB runs the same suite on a real CockroachDB when
// COCKROACH_BINARY names a cockroach binary.
func TestConformance_CockroachDB(t *testing.T) {
	t.Parallel()
	bin := os.Getenv("COCKROACH_BINARY")
	if bin == "" {
		t.Skip("COCKROACH_BINARY is not set: skipping the CockroachDB run of the storage suite (set it to a cockroach binary to run it)")
	}
	ts, err := testserver.NewTestServer(testserver.CockroachBinaryPathOpt(bin))
	require.NoError(t, err)
	t.Cleanup(ts.Stop)
	db, err := connect(ts.PGURL().String())
	require.NoError(t, err)
	t.Cleanup(db.Admin.Close)
	storetest.Exercise(t, harness(db))
}

func TestOpen_DetectsDialectAndNamesBackend(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := db.Open(t, db.NewSchema(t))
	if sqltest.Path() == sqlstore.CockroachDB { // make test-crdb-path: the path forced onto PostgreSQL
		require.Equal(t, sqlstore.CockroachDB, s.Dialect())
		require.Equal(t, "sql/postgresql+cockroachdb-path", s.Capabilities().Backend)
		return
	}
	require.Equal(t, sqlstore.PostgreSQL, s.Dialect())
	require.Equal(t, "sql/postgresql", s.Capabilities().Backend)
}

func TestMigrations_ApplyOnceAndAreRecorded(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	// Several stores opening the same schema at once apply each migration once.
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := sqlstore.Open(context.Background(), sqlstore.Config{URL: db.URL, Schema: schema, MaxConns: 2})
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
	migrations, err := sqlstore.Migrations()
	require.NoError(t, err)
	require.NotEmpty(t, migrations)
	var n int
	require.NoError(t, db.Admin.QueryRow(context.Background(),
		"SELECT count(*) FROM "+schema+".weft_schema_migrations").Scan(&n))
	require.Equal(t, len(migrations), n)
}

func TestConfig_RejectsInvalidSettings(t *testing.T) {
	t.Parallel()
	for _, cfg := range []sqlstore.Config{{}, {URL: "postgres://x", MaxConns: -1}, {URL: "postgres://x", MaxValueBytes: -1},
		{URL: "postgres://x", MaxConns: 4, MaxGroups: 5}, {URL: "postgres://x", MaxGroups: -1},
		{URL: "postgres://x", MaxGroupBatches: -1}, {URL: "postgres://x", MaxGroupBytes: -1},
		{URL: "postgres://x", IdleInTransactionTimeout: time.Microsecond}} {
		_, err := sqlstore.Open(context.Background(), cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestCommit_CanceledDuringTransactionLeavesNoPartialWrite(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := db.Open(t, db.NewSchema(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put([]byte("a"), nil), store.Put([]byte("b"), nil)}})
	require.Error(t, err)
	_, err = s.Get(context.Background(), []byte("a"))
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestOpen_SessionsPlanEachStatementOnceOnTheIndexAndEndTransactionsLeftIdle(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := db.Open(t, db.NewSchema(t))
	var timeout string
	require.NoError(t, sqlstore.Pool(s).QueryRow(context.Background(), "SHOW idle_in_transaction_session_timeout").Scan(&timeout))
	require.Equal(t, "1min", timeout)
	var planCache, seqScan string
	require.NoError(t, sqlstore.Pool(s).QueryRow(context.Background(), "SHOW plan_cache_mode").Scan(&planCache))
	require.Equal(t, "force_generic_plan", planCache, "each statement is planned once per session")
	require.NoError(t, sqlstore.Pool(s).QueryRow(context.Background(), "SHOW enable_seqscan").Scan(&seqScan))
	require.Equal(t, "off", seqScan, "a generic plan made while the table was small must not be a sequential scan")

	s, err := sqlstore.Open(context.Background(), sqlstore.Config{URL: db.URL, Schema: db.NewSchema(t), IdleInTransactionTimeout: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	var server string
	require.NoError(t, db.Admin.QueryRow(context.Background(), "SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'").Scan(&server))
	require.NoError(t, sqlstore.Pool(s).QueryRow(context.Background(), "SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'").Scan(&timeout))
	require.Equal(t, server, timeout, "a negative timeout leaves the database's setting")
}

func TestOpen_GenericPlansMadeOnASmallTableReadTheIndex(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	s := db.Open(t, db.NewSchema(t))
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		_, err := s.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put([]byte(k), []byte(k))}})
		require.NoError(t, err)
	}
	conn, err := sqlstore.Pool(s).Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	// A small table with statistics: the cheapest plan there is a
	// sequential scan, and a generic plan made now would stay one.
	_, err = conn.Exec(ctx, "ANALYZE weft_kv")
	require.NoError(t, err)
	for _, q := range []string{
		"SELECT k, version FROM weft_kv WHERE k = ANY($1::BYTEA[]) ORDER BY k FOR UPDATE",
		"SELECT v, version FROM weft_kv WHERE k = $1::BYTEA",
		"DELETE FROM weft_kv WHERE k = ANY($1::BYTEA[])",
		"SELECT k, v, version FROM weft_kv WHERE k >= $1::BYTEA ORDER BY k LIMIT 10",
	} {
		_, err := conn.Exec(ctx, "PREPARE p AS "+q)
		require.NoError(t, err)
		rows, err := conn.Query(ctx, "EXPLAIN EXECUTE p(NULL)")
		require.NoError(t, err)
		plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		text := strings.Join(plan, "\n")
		require.Contains(t, text, "weft_kv_pkey", "%s:\n%s", q, text)
		require.NotContains(t, text, "Seq Scan", "%s:\n%s", q, text)
		_, err = conn.Exec(ctx, "DEALLOCATE p")
		require.NoError(t, err)
	}
}

func TestMigrations_UpgradeATableOfTheFirstSchemaToLeaveRoomForUpdates(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	ctx := context.Background()
	migrations, err := sqlstore.Migrations()
	require.NoError(t, err)
	// A database of the first schema, with a row in it.
	conn, err := db.Admin.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	_, err = conn.Exec(ctx, migrations[0].SQL)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `CREATE TABLE weft_schema_migrations (version INT8 PRIMARY KEY, name TEXT NOT NULL,
applied_at TIMESTAMPTZ NOT NULL DEFAULT now()); INSERT INTO weft_schema_migrations (version, name) VALUES (1, '0001_kv.sql');
INSERT INTO weft_kv (k, v, version) VALUES ('old', 'v', nextval('weft_kv_version'))`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "RESET search_path")
	require.NoError(t, err)

	s := db.Open(t, schema)
	it, err := s.Get(ctx, []byte("old"))
	require.NoError(t, err)
	require.Equal(t, "v", string(it.Value), "the old rows stay")
	var options []string
	require.NoError(t, db.Admin.QueryRow(ctx, `SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = 'weft_kv'`, schema).Scan(&options))
	require.Contains(t, options, "fillfactor=85")
}
