package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weft-dev/weft/conformance/storetest"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
)

const rawTableSQL = "CREATE TABLE raw_commit (k BYTEA PRIMARY KEY, v BYTEA NOT NULL)"

// rawInsert commits one single-row INSERT through pgx, in its own implicit
// transaction: the database's own commit cost, the ceiling for the store.
func rawInsert(ctx context.Context, db *database, schema string, i int, value []byte) error {
	table := pgx.Identifier{schema, "raw_commit"}.Sanitize()
	_, err := db.Admin.Exec(ctx, "INSERT INTO "+table+" (k, v) VALUES ($1, $2)", []byte(strconv.Itoa(i)), value)
	return err
}

func rawSchema(b *testing.B, db *database) string {
	schema := db.NewSchema(b)
	if _, err := db.Admin.Exec(b.Context(), "SET search_path TO "+pgx.Identifier{schema}.Sanitize()+"; "+rawTableSQL); err != nil {
		b.Fatal(err)
	}
	return schema
}

// rawInsertBaseline prepares raw single-row INSERT commits.
func rawInsertBaseline(db *database) storetest.Baseline {
	return func(b *testing.B) func(int) error {
		schema := rawSchema(b, db)
		value := make([]byte, storetest.BenchValueBytes)
		return func(i int) error { return rawInsert(b.Context(), db, schema, i, value) }
	}
}

func BenchmarkStore_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	storetest.Bench(b, func(t testing.TB) store.Store { return db.Open(t, db.NewSchema(t)) }, rawInsertBaseline(db))
}

func BenchmarkRawInsertCommit_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	schema := rawSchema(b, db)
	value := make([]byte, storetest.BenchValueBytes)
	i := 0
	for b.Loop() {
		if err := rawInsert(b.Context(), db, schema, i, value); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCommitters_PostgreSQL measures Commit throughput with 1 and 32
// concurrent committers, each chaining compare-and-sets on a key of its own
// (one condition, one 100-byte put: no conflicts between committers), and in
// the same run the raw ceiling: single-row INSERTs in their own transactions
// from as many committers over a pool of the same size. It reports
// raw-commit-ns (the ceiling's time per commit at that concurrency) and
// x-raw-commit (the store's time per commit divided by it: below 1, the store
// commits faster than the database commits single rows).
func BenchmarkCommitters_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	for _, bc := range committerBenches {
		b.Run(bc.name, func(b *testing.B) { benchCommitters(b, db, bc.committers, bc.cfg) })
	}
}

type committerBench struct {
	name       string
	committers int
	cfg        sqlstore.Config
}

var committerBenches = []committerBench{
	{"committers=1", 1, sqlstore.Config{}},
	{"committers=32", 32, sqlstore.Config{}}, // PostgreSQL's default: one group in flight
	{"committers=32/groups=2", 32, sqlstore.Config{MaxGroups: 2}},
	{"committers=32/groups=4", 32, sqlstore.Config{MaxGroups: 4}},
	{"committers=32/groups=8", 32, sqlstore.Config{MaxGroups: 8}},
	// Every batch in a transaction of its own: the store without grouping.
	{"committers=32/ungrouped", 32, sqlstore.Config{MaxGroups: 32, MaxGroupBatches: 1}},
}

func benchCommitters(b *testing.B, db *database, n int, cfg sqlstore.Config) {
	schema := db.NewSchema(b)
	conns := int32(max(n, 4))
	cfg.URL, cfg.Schema, cfg.MaxConns = db.URL, schema, conns
	s, err := sqlstore.Open(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	raw := rawPool(b, db, schema, conns)
	value := make([]byte, storetest.BenchValueBytes)
	conds := make([]store.Condition, n)
	for w := range conds {
		conds[w] = store.IfAbsent(store.Key("bench", strconv.Itoa(w)))
	}
	var retryable atomic.Int64
	b.ResetTimer()
	parallel(b, n, b.N, func(w, _ int) error {
		k := conds[w].Key
		for {
			res, err := s.Commit(b.Context(), &store.Batch{Conditions: []store.Condition{conds[w]}, Ops: []store.Op{store.Put(k, value)}})
			if errors.Is(err, store.ErrRetryable) {
				retryable.Add(1) // serialization failures outlived the store's retries
				continue
			}
			if err == nil {
				conds[w] = store.IfVersion(k, res.Versions[0])
			}
			return err
		}
	})
	storeTime := b.Elapsed()
	b.StopTimer()
	start := time.Now()
	parallel(b, n, b.N, func(_, i int) error {
		_, err := raw.Exec(b.Context(), "INSERT INTO raw_commit (k, v) VALUES ($1, $2)", []byte(strconv.Itoa(i)), value)
		return err
	})
	rawTime := time.Since(start)
	b.ReportMetric(float64(rawTime.Nanoseconds())/float64(b.N), "raw-commit-ns")
	b.ReportMetric(float64(storeTime)/float64(rawTime), "x-raw-commit")
	b.ReportMetric(float64(b.N)/storeTime.Seconds(), "commits/s")
	st := s.Stats()
	b.ReportMetric(float64(st.Batches)/float64(max(st.Groups, 1)), "batches/group")
	b.ReportMetric(float64(st.Retries)/float64(max(st.Groups, 1)), "retries/group")
	b.ReportMetric(float64(retryable.Load()), "retryable-errors")
}

// rawPool opens a pool of size conns on schema, with its raw_commit table.
func rawPool(b *testing.B, db *database, schema string, conns int32) *pgxpool.Pool {
	pcfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		b.Fatal(err)
	}
	pcfg.MaxConns = conns
	pcfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(b.Context(), pcfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	if _, err := pool.Exec(b.Context(), rawTableSQL); err != nil {
		b.Fatal(err)
	}
	return pool
}

// parallel runs total calls of fn on n goroutines (fn gets the goroutine's
// index and the call's) and fails b on the first error.
func parallel(b *testing.B, n, total int, fn func(w, i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range n {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				if err := fn(w, i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGroupLeader_PostgreSQL measures one group of 16 step-shaped
// batches (a compare-and-set of a 300-byte checkpoint, five new 150-byte
// rows, one delete) through the leader: its allocations per group are the
// leader's own (the batches are built outside the timer). ns/op includes the
// round trip.
func BenchmarkGroupLeader_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	s := db.Open(b, db.NewSchema(b))
	const batches = 16
	ckpt, event := make([]byte, 300), make([]byte, 150)
	versions := make([]uint64, batches)
	n := 0
	var cpu time.Duration // this process's CPU inside the timer: the leader's
	pg := backendCPU(b, sqlstore.Pool(s), nil)
	for b.Loop() {
		b.StopTimer()
		group := make([]*store.Batch, batches)
		for i := range group {
			run := strconv.Itoa(i)
			ck := store.Key("wf", run, "ckpt")
			cond := store.IfAbsent(ck)
			if versions[i] != 0 {
				cond = store.IfVersion(ck, versions[i])
			}
			ops := []store.Op{store.Put(ck, ckpt)}
			for e := range 5 {
				ops = append(ops, store.Put(store.Key("wf", run, "ev", strconv.Itoa(n*5+e)), event))
			}
			ops = append(ops, store.Delete(store.Key("wf", run, "ev", strconv.Itoa(n*5-1))))
			group[i] = &store.Batch{Conditions: []store.Condition{cond}, Ops: ops}
		}
		n++
		start := processCPU(b)
		b.StartTimer()
		res, errs := sqlstore.CommitGroup(s, group)
		b.StopTimer()
		cpu += processCPU(b) - start
		b.StartTimer()
		for i, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
			versions[i] = res[i].Versions[0]
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(backendCPU(b, sqlstore.Pool(s), pg).Sum().Microseconds())/float64(b.N), "pg-cpu-µs/op")
}

// backends is the CPU each PostgreSQL backend of a pool had used.
type backends map[int]time.Duration

func (bs backends) Sum() time.Duration {
	var sum time.Duration
	for _, d := range bs {
		sum += d
	}
	return sum
}

// backendCPU reads the CPU of the pool's idle backends from /proc (the
// server runs on this machine), minus what since had (nil: nothing).
func backendCPU(b *testing.B, pool *pgxpool.Pool, since backends) backends {
	out := backends{}
	for _, c := range pool.AcquireAllIdle(b.Context()) {
		pid := int(c.Conn().PgConn().PID())
		c.Release()
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			b.Skipf("PostgreSQL backends are not on this machine: %v", err)
		}
		// utime and stime are fields 14 and 15, after the parenthesised name.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
		if since != nil {
			out[pid] -= since[pid]
		}
	}
	return out
}

// processCPU answers the user and system CPU this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCommitSteps_PostgreSQL measures Commit as weftd uses it: 16
// callers, each committing step-shaped batches of a run of its own (the
// checkpoint's compare-and-set, five absent-conditions on idempotency keys,
// a put for each with its event and outbox entry, and a delete), through the
// group committer. Its allocations and instructions per op are a step's in
// the store's process, round trips included.
func BenchmarkCommitSteps_PostgreSQL(b *testing.B) {
	db := requirePostgres(b)
	s := db.Open(b, db.NewSchema(b))
	const callers = 16
	ckpt, event := make([]byte, 300), make([]byte, 150)
	versions := make([]uint64, callers)
	seqs := make([]int, callers)
	b.ReportAllocs()
	b.ResetTimer()
	parallel(b, callers, b.N, func(w, _ int) error {
		run := strconv.Itoa(w)
		ck := store.Key("wf", run, "ckpt")
		cond := store.IfAbsent(ck)
		if versions[w] != 0 {
			cond = store.IfVersion(ck, versions[w])
		}
		n := seqs[w]
		seqs[w]++
		batch := &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(ck, ckpt)}}
		for e := range 5 {
			id := strconv.Itoa(n*5 + e)
			idem := store.Key("idem", run, id)
			batch.Conditions = append(batch.Conditions, store.IfAbsent(idem))
			batch.Ops = append(batch.Ops, store.Put(idem, ckpt[:8]), store.Put(store.Key("wf", run, "ev", id), event),
				store.Put(store.Key("outbox", run, id), event[:40]))
		}
		batch.Ops = append(batch.Ops, store.Delete(store.Key("wf", run, "ready", strconv.Itoa(n-1))))
		res, err := s.Commit(b.Context(), batch)
		if err != nil {
			return err
		}
		versions[w] = res.Versions[0]
		return nil
	})
	st := s.Stats()
	b.ReportMetric(float64(st.Batches)/float64(max(st.Groups, 1)), "batches/group")
}
