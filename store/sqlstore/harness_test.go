package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

// defaultPostgresURL is the local PostgreSQL of the development machines and
// CI; WEFT_TEST_POSTGRES_URL overrides it.
const defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func postgresURL() string {
	if u := os.Getenv("WEFT_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return defaultPostgresURL
}

// database is one server the suite runs on, with an admin pool that creates
// and drops the per-test schemas.
type database struct {
	url   string
	admin *pgxpool.Pool
}

var (
	pgOnce sync.Once
	pgDB   *database
	pgErr  error
)

// requirePostgres returns the local PostgreSQL, or skips loudly when it is not
// reachable — and fails instead when CI is set.
func requirePostgres(t testing.TB) *database {
	t.Helper()
	pgOnce.Do(func() { pgDB, pgErr = connect(postgresURL()) })
	if pgErr != nil {
		msg := fmt.Sprintf("PostgreSQL at %s is not reachable: %v. The SQL store suite needs it: start it, or point WEFT_TEST_POSTGRES_URL at one.", postgresURL(), pgErr)
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so a missing database fails the run: %s", msg)
		}
		warnOnce.Do(func() { shout("\n!!! SKIPPING SQL STORE TESTS: " + msg + "\n\n") })
		t.Skip("SKIPPING: " + msg)
	}
	return pgDB
}

var warnOnce sync.Once

// shout writes msg to stderr and, since go test hides the output of passing
// packages, straight to the terminal when there is one.
func shout(msg string) {
	fmt.Fprint(os.Stderr, msg)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprint(tty, msg)
		_ = tty.Close()
	}
}

func connect(url string) (*database, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return &database{url: url, admin: pool}, nil
}

// newSchema creates a schema that only the calling test uses and drops it
// when the test ends.
func (d *database) newSchema(t testing.TB) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "weft_test_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	_, err := d.admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := d.admin.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		if err != nil {
			t.Logf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

func (d *database) open(t testing.TB, schema string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), sqlstore.Config{URL: d.url, Schema: schema, MaxConns: 8})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// harness isolates each conformance test in its own schema.
func (d *database) harness() storetest.Harness {
	return storetest.Harness{Open: func(t testing.TB) *storetest.Instance {
		schema := d.newSchema(t)
		return &storetest.Instance{
			Store:  d.open(t, schema),
			Reopen: func(t testing.TB) store.Store { return d.open(t, schema) },
			Peer:   func(t testing.TB) store.Store { return d.open(t, schema) },
		}
	}}
}
