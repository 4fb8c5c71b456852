package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

// schemaConn answers an admin connection whose search_path is schema.
func schemaConn(t *testing.T, db *database, schema string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(db.URL)
	require.NoError(t, err)
	cfg.RuntimeParams["search_path"] = schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func TestMigrations_EveryStatementIsIdempotent(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	conn := schemaConn(t, db, db.NewSchema(t))
	migrations, err := sqlstore.Migrations()
	require.NoError(t, err)
	for _, m := range migrations {
		stmts := m.Statements()
		require.NotEmpty(t, stmts, m.Name)
		for i, stmt := range stmts {
			for run := 1; run <= 2; run++ {
				_, err := conn.Exec(context.Background(), stmt)
				require.NoError(t, err, "%s statement %d, run %d: a migration interrupted before its record runs again whole", m.Name, i, run)
			}
		}
	}
}

func TestMigrations_CheckSchemaOnlyRefusesAnIncompleteSchemaNamingTheMissingMigration(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	ctx := context.Background()
	migrations, err := sqlstore.Migrations()
	require.NoError(t, err)
	last := migrations[len(migrations)-1]

	// Every migration but the last applied (a process that stopped there).
	stop := errors.New("stop")
	_, err = sqlstore.Open(ctx, sqlstore.WithMigrationHook(sqlstore.Config{URL: db.URL, Schema: schema},
		func(p sqlstore.MigrationPoint) error {
			if p.Step == sqlstore.MigrationStepStatement && p.Migration == last.Name {
				return stop
			}
			return nil
		}))
	require.ErrorIs(t, err, stop)

	_, err = sqlstore.Open(ctx, sqlstore.Config{URL: db.URL, Schema: schema, CheckSchemaOnly: true})
	var incomplete *sqlstore.SchemaIncompleteError
	require.ErrorAs(t, err, &incomplete)
	require.Equal(t, []string{last.Name}, incomplete.Missing)
	require.Contains(t, err.Error(), last.Name, "the error names the missing migration")

	s := db.Open(t, schema) // applies it
	require.NoError(t, s.Close())
	s, err = sqlstore.Open(ctx, sqlstore.Config{URL: db.URL, Schema: schema, CheckSchemaOnly: true})
	require.NoError(t, err, "a complete schema passes the check")
	require.NoError(t, s.Close())
}

func TestMigrationLock_AHeldLeaseKeepsOthersFromMigratingUntilItExpires(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	ctx := context.Background()
	conn := schemaConn(t, db, schema)
	_, err := conn.Exec(ctx, `CREATE TABLE weft_schema_lock (id INT8 PRIMARY KEY, holder TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL);
INSERT INTO weft_schema_lock VALUES (1, 'another-weftd', now() + INTERVAL '1 hour')`)
	require.NoError(t, err)

	_, err = sqlstore.Open(ctx, sqlstore.Config{URL: db.URL, Schema: schema, MigrationLockWait: 50 * time.Millisecond})
	var incomplete *sqlstore.SchemaIncompleteError
	require.ErrorAs(t, err, &incomplete, "a live holder keeps the lock")
	require.Contains(t, err.Error(), "another process held the migration lock")
	require.Contains(t, err.Error(), "0001_kv.sql")
	requireRecorded(t, conn, 0)

	_, err = conn.Exec(ctx, "UPDATE weft_schema_lock SET expires_at = now() - INTERVAL '1 second'")
	require.NoError(t, err)
	s := db.Open(t, schema)
	require.NoError(t, s.Close())
	requireRecorded(t, conn, -1)
	var held int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM weft_schema_lock").Scan(&held))
	require.Zero(t, held, "the migrator releases the lock it took over")
}

// requireRecorded checks that n migrations are recorded (all of them when
// n < 0).
func requireRecorded(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	if n < 0 {
		migrations, err := sqlstore.Migrations()
		require.NoError(t, err)
		n = len(migrations)
	}
	var got int
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT count(*) FROM weft_schema_migrations").Scan(&got))
	require.Equal(t, n, got)
}

// migrationPoints answers every point of a full migration run, in order.
func migrationPoints(t *testing.T, db *database) []string {
	t.Helper()
	var points []string
	s, err := sqlstore.Open(context.Background(), sqlstore.WithMigrationHook(sqlstore.Config{URL: db.URL, Schema: db.NewSchema(t)},
		func(p sqlstore.MigrationPoint) error {
			points = append(points, p.String())
			return nil
		}))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	return points
}

// crashEnv names the environment of TestMigrationCrashProcess.
const (
	crashEnvSchema = "WEFT_TEST_MIGRATION_CRASH_SCHEMA"
	crashEnvPoint  = "WEFT_TEST_MIGRATION_CRASH_POINT"
)

// crashExitCode is how the crashing process ends at its point.
const crashExitCode = 37

// TestMigrationCrashProcess is not a test on its own: run by
// TestMigrations_ACrashAtAnyPoint… in a process of its own, it opens a store
// on the schema it is given and exits at once, as if killed, at the
// migration point it is given, holding the migration lock.
func TestMigrationCrashProcess(t *testing.T) {
	schema, point := os.Getenv(crashEnvSchema), os.Getenv(crashEnvPoint)
	if schema == "" {
		t.Skip("run by TestMigrations_ACrashAtAnyPointIsRepairedByTheNextOpenAndRecordsNoMigrationBeforeItsStatements")
	}
	_, err := sqlstore.Open(context.Background(), sqlstore.WithMigrationHook(
		sqlstore.Config{URL: requirePostgres(t).URL, Schema: schema, MigrationLease: 200 * time.Millisecond},
		func(p sqlstore.MigrationPoint) error {
			if p.String() == point {
				os.Exit(crashExitCode)
			}
			return nil
		}))
	t.Fatalf("the process reached no point %q (open: %v)", point, err)
}

func TestMigrations_ACrashAtAnyPointIsRepairedByTheNextOpenAndRecordsNoMigrationBeforeItsStatements(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	points := migrationPoints(t, db)
	require.Contains(t, points, "locked")
	for i, point := range points {
		complete := i == len(points)-1 // after the last record
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			schema := db.NewSchema(t)
			cmd := exec.Command(os.Args[0], "-test.run=^TestMigrationCrashProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashEnvSchema+"="+schema, crashEnvPoint+"="+point)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", out)
			require.Equal(t, crashExitCode, exit.ExitCode(), "%s", out)

			conn := schemaConn(t, db, schema)
			requireRecordedMigrationsApplied(t, conn)
			s, err := sqlstore.Open(context.Background(), sqlstore.Config{URL: db.URL, Schema: schema, CheckSchemaOnly: true})
			if complete {
				require.NoError(t, err)
				require.NoError(t, s.Close())
			} else {
				var incomplete *sqlstore.SchemaIncompleteError
				require.ErrorAs(t, err, &incomplete, "a process that only checks refuses the half-migrated schema")
			}

			s = db.Open(t, schema) // takes the crashed process's lock over once its lease expires
			requireRecorded(t, conn, -1)
			requireRecordedMigrationsApplied(t, conn)
			_, err = s.Commit(context.Background(), &store.Batch{Ops: []store.Op{store.Put([]byte("k"), []byte("v"))}})
			require.NoError(t, err)
		})
	}
}

// requireRecordedMigrationsApplied checks that what each recorded migration
// does is in the schema.
func requireRecordedMigrationsApplied(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, "SELECT version FROM weft_schema_migrations")
	require.NoError(t, err)
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	for _, v := range versions {
		switch v {
		case 1:
			var table, seq *string
			require.NoError(t, conn.QueryRow(ctx, "SELECT to_regclass('weft_kv')::TEXT, to_regclass('weft_kv_version')::TEXT").Scan(&table, &seq))
			require.NotNil(t, table, "0001 recorded without its table")
			require.NotNil(t, seq, "0001 recorded without its sequence")
		case 2:
			var options []string
			require.NoError(t, conn.QueryRow(ctx, "SELECT reloptions FROM pg_class WHERE oid = to_regclass('weft_kv')").Scan(&options))
			require.Contains(t, options, "fillfactor=85", "0002 recorded without its setting")
		case 3:
			var seq *string
			require.NoError(t, conn.QueryRow(ctx, "SELECT to_regclass('weft_store_node')::TEXT").Scan(&seq))
			require.NotNil(t, seq, "0003 recorded without its sequence")
		default:
			require.Fail(t, "a migration this test does not know", "version %s: say here what it does", strconv.FormatInt(v, 10))
		}
	}
}

func TestMigrations_StatementsSplitAtSemicolonsWithoutComments(t *testing.T) {
	t.Parallel()
	m := sqlstore.Migration{SQL: "-- a; comment\nCREATE TABLE IF NOT EXISTS a (k INT8);\n\n  -- another\nALTER TABLE a SET (fillfactor = 85);\n"}
	require.Equal(t, []string{"CREATE TABLE IF NOT EXISTS a (k INT8)", "ALTER TABLE a SET (fillfactor = 85)"}, m.Statements())
	migrations, err := sqlstore.Migrations()
	require.NoError(t, err)
	for _, m := range migrations {
		for _, stmt := range m.Statements() {
			upper := strings.ToUpper(stmt)
			if strings.HasPrefix(upper, "CREATE") {
				require.Contains(t, upper, "IF NOT EXISTS", fmt.Sprintf("%s: a CREATE must be idempotent", m.Name))
			}
		}
	}
}

func TestMigrationLock_AMigratorThatLosesItsLeaseStops(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	conn := schemaConn(t, db, schema)
	const lease = 60 * time.Millisecond
	_, err := sqlstore.Open(context.Background(), sqlstore.WithMigrationHook(
		sqlstore.Config{URL: db.URL, Schema: schema, MigrationLease: lease},
		func(p sqlstore.MigrationPoint) error {
			if p.Step == sqlstore.MigrationStepLocked {
				// Another process takes the lock over, as if this one's lease
				// had expired; this one's next renewal finds it gone.
				_, err := conn.Exec(context.Background(), "UPDATE weft_schema_lock SET holder = 'another-weftd'")
				require.NoError(t, err)
				time.Sleep(3 * lease)
			}
			return nil
		}))
	require.ErrorContains(t, err, "migration lock's lease was lost")
	requireRecorded(t, conn, 0)
}

func TestMigrations_CheckSchemaOnlyCreatesNothingOnAnEmptyDatabase(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	schema := db.NewSchema(t)
	_, err := sqlstore.Open(context.Background(), sqlstore.Config{URL: db.URL, Schema: schema, CheckSchemaOnly: true})
	var incomplete *sqlstore.SchemaIncompleteError
	require.ErrorAs(t, err, &incomplete)
	migrations, err := sqlstore.Migrations()
	require.NoError(t, err)
	require.Len(t, incomplete.Missing, len(migrations), "every migration is missing")
	var tables int
	require.NoError(t, db.Admin.QueryRow(context.Background(),
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", schema).Scan(&tables))
	require.Zero(t, tables, "a process that only checks creates no table")
}
