package sqlstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/cockroachdb/cockroach-go/v2/testserver"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
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
	for _, cfg := range []sqlstore.Config{{}, {URL: "postgres://x", MaxConns: -1}, {URL: "postgres://x", MaxValueBytes: -1}} {
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
