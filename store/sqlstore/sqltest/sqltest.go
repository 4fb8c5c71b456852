// Package sqltest opens SQL stores for tests, each isolated in a schema of
// its own on the local PostgreSQL (or WEFT_TEST_POSTGRES_URL), or on any
// database a test connects to (a CockroachDB test server). Without a
// reachable database a test skips loudly, and fails when CI is set. Its
// Proxy is a PostgreSQL wire protocol proxy that injects faults: a
// connection dropped after its COMMIT committed, serialization failures the
// server raises, stalls.
//
// It imports the SQL backend and pgx; only tests import it.
package sqltest

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

	"github.com/weft-dev/weft/store/sqlstore"
)

// DefaultURL is the local PostgreSQL of the development machines and CI.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// URL answers the database tests use: WEFT_TEST_POSTGRES_URL, or DefaultURL.
func URL() string {
	if u := os.Getenv("WEFT_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// DB is one database server tests run on, with an admin pool that creates
// and drops the per-test schemas.
type DB struct {
	URL   string
	Admin *pgxpool.Pool
}

// Connect opens an admin pool on url.
func Connect(url string) (*DB, error) {
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
	return &DB{URL: url, Admin: pool}, nil
}

var (
	once     sync.Once
	local    *DB
	localErr error
	warnOnce sync.Once
)

// Require answers the local test database, or skips the test loudly when it
// is not reachable — and fails it when CI is set.
func Require(t testing.TB) *DB {
	t.Helper()
	once.Do(func() { local, localErr = Connect(URL()) })
	if localErr != nil {
		msg := fmt.Sprintf("PostgreSQL at %s is not reachable: %v. The SQL tests need it: start it, or point WEFT_TEST_POSTGRES_URL at one.", URL(), localErr)
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so a missing database fails the run: %s", msg)
		}
		warnOnce.Do(func() { shout("\n!!! SKIPPING SQL TESTS: " + msg + "\n\n") })
		t.Skip("SKIPPING: " + msg)
	}
	return local
}

// shout writes msg to stderr and, since go test hides the output of passing
// packages, straight to the terminal when there is one.
func shout(msg string) {
	fmt.Fprint(os.Stderr, msg)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprint(tty, msg)
		_ = tty.Close()
	}
}

// NewSchema creates a schema only the calling test uses, dropped when it ends.
func (d *DB) NewSchema(t testing.TB) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "weft_test_" + hex.EncodeToString(b[:])
	if _, err := d.Admin.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := d.Admin.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// Path answers the code path tests force (sqlstore.Config.Path):
// WEFT_TEST_SQL_PATH, "cockroachdb" to run CockroachDB's path against the
// local PostgreSQL, or empty for the database's own.
func Path() sqlstore.Dialect { return sqlstore.Dialect(os.Getenv("WEFT_TEST_SQL_PATH")) }

// Open opens a SQL store on schema, closed when the test ends, on the path
// Path answers.
func (d *DB) Open(t testing.TB, schema string) *sqlstore.Store {
	t.Helper()
	return d.OpenConfig(t, sqlstore.Config{Schema: schema, MaxConns: 8, Path: Path()})
}

// ThroughProxy reports whether WEFT_TEST_SQL_PROXY asks every store Open
// and OpenConfig open to reach the database through a Proxy of its own,
// relaying every message unchanged.
func ThroughProxy() bool { return os.Getenv("WEFT_TEST_SQL_PROXY") != "" }

// OpenConfig opens a SQL store on d with cfg (its URL set to d's, or a
// proxy's in front of it: ThroughProxy), closed when the test ends.
func (d *DB) OpenConfig(t testing.TB, cfg sqlstore.Config) *sqlstore.Store {
	t.Helper()
	cfg.URL = d.URL
	if ThroughProxy() {
		cfg.URL = StartProxy(t, d.URL).URL
	}
	s, err := sqlstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open SQL store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Through answers d with its stores connecting through p (its admin pool
// stays direct).
func (d *DB) Through(p *Proxy) *DB { return &DB{URL: p.URL, Admin: d.Admin} }

// OpenOnPath opens a SQL store on schema, on the code path path names
// (sqlstore.Config.Path: "cockroachdb", "postgresql" or empty), closed when
// the test ends.
func (d *DB) OpenOnPath(t testing.TB, schema, path string) *sqlstore.Store {
	t.Helper()
	return d.OpenConfig(t, sqlstore.Config{Schema: schema, MaxConns: 8, Path: sqlstore.Dialect(path)})
}

// NewSchema creates a schema on the local test database (see DB.NewSchema).
func NewSchema(t testing.TB) string { return Require(t).NewSchema(t) }

// Open opens a store on a schema of the local test database (see DB.Open).
func Open(t testing.TB, schema string) *sqlstore.Store { return Require(t).Open(t, schema) }
