package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ceilingValueBytes is the value size of a raw commit, as in the store
// benchmarks (conformance/storetest.BenchValueBytes).
const ceilingValueBytes = 100

// Ceiling is the raw commit rate of a database at one concurrency.
type Ceiling struct {
	// Backend is "postgresql" or "pebble".
	Backend string `json:"backend"`
	// Conns is the number of concurrent committers (and the pool size).
	Conns int `json:"conns"`
	// Commits were made in Seconds.
	Commits       int     `json:"commits"`
	Seconds       float64 `json:"seconds"`
	CommitsPerSec float64 `json:"commits_per_sec"`
	// Latency is one commit's, as its committer saw it.
	Latency Latency `json:"latency"`
}

// commitFunc makes one raw commit of the i-th key.
type commitFunc func(ctx context.Context, i uint64) error

// measureCeiling runs commit from conns goroutines for d.
func measureCeiling(ctx context.Context, backend string, conns int, d time.Duration, commit commitFunc) (Ceiling, error) {
	var (
		mu      sync.Mutex
		sample  []time.Duration
		firstEr error
		wg      sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for g := range conns {
		wg.Go(func() {
			var local []time.Duration
			for i := uint64(g) << 40; time.Now().Before(deadline); i++ {
				t := time.Now()
				if err := commit(ctx, i); err != nil {
					mu.Lock()
					firstEr = cmpErr(firstEr, err)
					mu.Unlock()
					return
				}
				local = append(local, time.Since(t))
			}
			mu.Lock()
			sample = append(sample, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstEr != nil {
		return Ceiling{}, fmt.Errorf("%s ceiling with %d committers: %w", backend, conns, firstEr)
	}
	return Ceiling{Backend: backend, Conns: conns, Commits: len(sample), Seconds: elapsed.Seconds(),
		CommitsPerSec: perSecond(len(sample), elapsed), Latency: summarise(sample)}, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// postgresCeilings measures single-row INSERT transactions in a scratch
// schema, dropped afterwards, with a pool of each size in conns.
func postgresCeilings(ctx context.Context, cfg Config) ([]Ceiling, error) {
	admin, err := connectPostgres(ctx, cfg.PostgresURL)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	schema, drop, err := scratchSchema(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer drop()
	table := pgx.Identifier{schema, "raw_commit"}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE TABLE "+table+" (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)"); err != nil {
		return nil, fmt.Errorf("create the ceiling's table: %w", err)
	}
	value := make([]byte, ceilingValueBytes)
	insert := "INSERT INTO " + table + " (k, v) VALUES ($1, $2)"
	var out []Ceiling
	for round, conns := range cfg.CeilingConns {
		pcfg, err := pgxpool.ParseConfig(cfg.PostgresURL)
		if err != nil {
			return nil, fmt.Errorf("parse the PostgreSQL URL: %w", err)
		}
		pcfg.MaxConns, pcfg.MinConns = int32(conns), int32(conns)
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
		}
		c, err := measureCeiling(ctx, "postgresql", conns, cfg.CeilingDuration, func(ctx context.Context, i uint64) error {
			_, err := pool.Exec(ctx, insert, key(uint64(round)<<56|i), value)
			return err
		})
		pool.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// pebbleCeilings measures synced single-key Sets in a temporary directory.
func pebbleCeilings(ctx context.Context, cfg Config, dir string) ([]Ceiling, error) {
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		return nil, fmt.Errorf("open Pebble in %s: %w", dir, err)
	}
	defer db.Close()
	value := make([]byte, ceilingValueBytes)
	var out []Ceiling
	for round, conns := range cfg.CeilingConns {
		c, err := measureCeiling(ctx, "pebble", conns, cfg.CeilingDuration, func(_ context.Context, i uint64) error {
			return db.Set(key(uint64(round)<<56|i), value, pebble.Sync)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

// connectPostgres opens a small admin pool and checks it answers.
func connectPostgres(ctx context.Context, url string) (*pgxpool.Pool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL is not reachable (set WEFT_TEST_POSTGRES_URL, or measure only the embedded configuration): %w", err)
	}
	return pool, nil
}

// scratchSchema creates a schema of its own and answers a function that
// drops it, on a fresh context so that it runs after a cancellation too.
func scratchSchema(ctx context.Context, admin *pgxpool.Pool) (string, func(), error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "weft_bench_" + hex.EncodeToString(b[:])
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	return schema, func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.Exec(dctx, "DROP SCHEMA "+ident+" CASCADE")
	}, nil
}
