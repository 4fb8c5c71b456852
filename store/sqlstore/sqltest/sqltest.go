// Package sqltest opens SQL stores for tests, each isolated in a schema of
// its own on the local PostgreSQL (or WEFT_TEST_POSTGRES_URL). Without a
// reachable database a test skips loudly, and fails when CI is set.
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

var (
	once  sync.Once
	admin *pgxpool.Pool
	err   error
)

// Require answers the admin pool of the test database, or skips the test
// loudly when none is reachable — and fails it when CI is set.
func Require(t testing.TB) *pgxpool.Pool {
	t.Helper()
	once.Do(func() { admin, err = connect(URL()) })
	if err != nil {
		msg := fmt.Sprintf("PostgreSQL at %s is not reachable: %v. Start it, or point WEFT_TEST_POSTGRES_URL at one.", URL(), err)
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set, so a missing database fails the run: %s", msg)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING SQL TESTS: %s\n\n", msg)
		t.Skip("SKIPPING: " + msg)
	}
	return admin
}

func connect(url string) (*pgxpool.Pool, error) {
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
	return pool, nil
}

// NewSchema creates a schema only the calling test uses, dropped when it ends.
func NewSchema(t testing.TB) string {
	t.Helper()
	pool := Require(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "weft_test_" + hex.EncodeToString(b[:])
	if _, err := pool.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// Open opens a SQL store on schema, closed when the test ends.
func Open(t testing.TB, schema string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Open(context.Background(), sqlstore.Config{URL: URL(), Schema: schema, MaxConns: 8})
	if err != nil {
		t.Fatalf("open SQL store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
