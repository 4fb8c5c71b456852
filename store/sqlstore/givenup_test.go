package sqlstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/sqlstore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// A commit whose caller gave up once its COMMIT was on its way answers
// *store.OutcomeUnknownError, and every later batch on any of its keys is
// ordered after it: it never commits after a later batch on its keys.
//
// The database is made to hold the given-up transaction deterministically: a
// transaction of the test locks a row the batch writes, so the batch's
// backend waits on that lock, COMMIT already sent, while its caller's
// deadline passes (the afterSend hook waits for both). pgconn then closes
// the connection and sends the server a cancel request, which a backend
// that is not running a statement at that instant (one waiting for a CPU
// before it reads the pipeline, on a busy machine) ignores; the store
// reaches the database through a proxy that drops cancel requests, which
// makes that miss certain. A later batch then
// requires absent a key the given-up batch puts, and succeeds. Once the test
// lets go of its lock and the given-up backend has ended, that key must
// still be absent: had the given-up batch committed then, it would have
// committed after a later batch on its key that found the key absent.
func TestGivenUpCommit_IsOrderedBeforeEveryLaterBatchOnItsKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []givenUpCase{
		{name: "alone/one round trip/one group in flight", maxGroups: 1},
		{name: "alone/two round trips/one group in flight", maxGroups: 1, twoTrips: true},
		{name: "alone/one round trip/four groups in flight", maxGroups: 4},
		{name: "leader/one round trip/one group in flight", maxGroups: 1, queued: true},
		{name: "leader/two round trips/one group in flight", maxGroups: 1, twoTrips: true, queued: true},
		{name: "leader/one round trip/four groups in flight", maxGroups: 4, queued: true},
		{name: "cockroachdb/alone/one round trip/one group in flight", maxGroups: 1, cockroach: true},
		{name: "cockroachdb/alone/two round trips/one group in flight", maxGroups: 1, twoTrips: true, cockroach: true},
		{name: "cockroachdb/leader/one round trip/four groups in flight", maxGroups: 4, queued: true, cockroach: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			givenUpCommitScenario(t, tc)
		})
	}
}

// givenUpCase is a way a commit is given up on.
type givenUpCase struct {
	name      string
	maxGroups int
	twoTrips  bool // the two-round-trip path (pipelineGroup, cockroachGroup) instead of one
	queued    bool // through a leader, behind a group in flight, instead of alone
	// cockroach runs CockroachDB's path, its in-doubt session ended the way
	// of CockroachDB (CANCEL SESSION, crdb_internal.cluster_sessions) through
	// a proxy that runs PostgreSQL's equivalents.
	cockroach bool
}

func givenUpCommitScenario(t *testing.T, tc givenUpCase) {
	maxGroups, twoTrips, queued := tc.maxGroups, tc.twoTrips, tc.queued
	cfg := sqlstore.Config{MaxGroups: maxGroups, URL: cancelDroppingProxy(t, requirePostgres(t).URL)}
	var emulator *sqltest.Proxy
	if tc.cockroach {
		emulator = sqltest.StartProxy(t, requirePostgres(t).URL)
		emulator.EmulateCockroachSessions()
		emulator.DropCancelRequests()
		cfg = sqlstore.WithFence(sqlstore.Config{MaxGroups: maxGroups, URL: emulator.URL, Path: sqlstore.CockroachDB}, sqlstore.CockroachDB)
	}
	b := setupGroups(t, cfg)
	ctx := context.Background()
	cond, locked, created := key("cond"), key("a-locked"), key("b-created")
	condVersion := put(t, b.s, cond, "c0")
	put(t, b.s, locked, "l0")
	if twoTrips {
		sqlstore.SetAfterReadHook(b.s, func(int, int) error { return nil })
	}
	var armed, armNext atomic.Bool // armed: the next COMMIT sent is the given-up batch's
	sent := make(chan uint32, 1)
	holder := lockRow(t, b, locked)
	sqlstore.SetAfterSendHook(b.s, func(ctx context.Context, pid uint32) {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		// The given-up batch's backend waits on the test's lock, COMMIT sent;
		// then its caller's deadline passes.
		if blockedBy(ctx, b, pid, holder.pid) {
			sent <- pid
			<-ctx.Done()
		}
	})
	var gate *gate
	if queued {
		// The first attempt of each try is the blocker's, which the gate
		// holds; the next is the given-up batch's.
		sqlstore.SetBeforeAttemptHook(b.s, func(batches, attempt int) error {
			if gate.calls.Load() == 0 {
				return gate.hook(batches, attempt)
			}
			if armNext.CompareAndSwap(true, false) {
				armed.Store(true)
			}
			return nil
		})
	}

	// The given-up batch: its deadline must pass only once its COMMIT was
	// sent, which a starved machine may take long to do; each try that ends
	// before that (nothing sent, nothing written) doubles the deadline.
	givenUp := &store.Batch{Conditions: []store.Condition{store.IfVersion(cond, condVersion)},
		Ops: []store.Op{store.Put(locked, []byte("l1")), store.Put(created, []byte("x"))}}
	for wait := 200 * time.Millisecond; ; wait *= 2 {
		require.Less(t, wait, 2*time.Minute, "the given-up batch never reached the database before its deadline")
		var blocker chan result
		if queued {
			// In flight on a key of the given-up batch, so that it queues for a
			// leader.
			gate = newGate(t)
			blocker = commitAsync(ctx, b.s, &store.Batch{Conditions: []store.Condition{store.IfPresent(cond)}})
			<-gate.entered
		}
		if queued {
			armNext.Store(true)
		} else {
			armed.Store(true)
		}
		dctx, cancel := context.WithTimeout(ctx, wait)
		done := commitAsync(dctx, b.s, givenUp)
		if queued {
			require.Eventually(t, func() bool { return sqlstore.QueuedBatches(b.s) == 1 }, time.Minute, time.Millisecond)
			gate.open()
			requireOK(t, blocker)
		}
		givenUpErr := (<-done).err
		cancel()
		require.Error(t, givenUpErr, "the given-up batch committed although its row was locked")

		// A later batch on a key of the given-up one: it finds the key absent,
		// once the given-up batch's group has let go of its keys.
		later, laterErr := b.s.Commit(ctx, &store.Batch{Conditions: []store.Condition{store.IfAbsent(created)}})
		var pid uint32
		select {
		case pid = <-sent:
		default:
			armed.Store(false)
			armNext.Store(false)
			require.NoError(t, laterErr) // nothing was sent: try again with more time
			continue
		}
		require.ErrorIs(t, givenUpErr, store.ErrOutcomeUnknown, "a commit given up on once its COMMIT was sent")
		holder.release(t)
		waitGone(t, b, pid)
		if laterErr != nil {
			require.ErrorIs(t, laterErr, store.ErrConditionFailed)
			return // ordered after the given-up batch, which committed first
		}
		require.NotNil(t, later)
		_, getErr := b.s.Get(ctx, created)
		require.ErrorIs(t, getErr, store.ErrNotFound,
			"the given-up batch committed after a later batch on its key found the key absent")
		it, getErr := b.s.Get(ctx, cond)
		require.NoError(t, getErr)
		require.Equal(t, condVersion, it.Version, "the given-up batch committed in part")
		require.NotZero(t, b.s.Stats().InDoubt, "the transaction in doubt was ended before the later batch")
		if tc.cockroach {
			require.NotZero(t, emulator.Emulated("CANCEL SESSION IF EXISTS $1"), "ended as CockroachDB ends a session")
		}
		return
	}
}

// rowLock is a transaction of the test holding a row's lock.
type rowLock struct {
	tx  pgx.Tx
	pid uint32
}

// lockRow begins a transaction in b's schema that locks k's row until
// release (or the test's end).
func lockRow(t *testing.T, b *groupBundle, k []byte) *rowLock {
	t.Helper()
	ctx := context.Background()
	conn, err := b.db.Admin.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	l := &rowLock{tx: tx, pid: conn.Conn().PgConn().PID()}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	var got []byte
	require.NoError(t, tx.QueryRow(ctx, fmt.Sprintf("SELECT k FROM %s.weft_kv WHERE k = $1 FOR UPDATE",
		pgx.Identifier{b.schema}.Sanitize()), k).Scan(&got))
	return l
}

func (l *rowLock) release(t *testing.T) {
	t.Helper()
	require.NoError(t, l.tx.Rollback(context.Background()))
}

// blockedBy waits until backend pid waits on a lock holder holds, and
// answers true then, or false once ctx has ended.
func blockedBy(ctx context.Context, b *groupBundle, pid, holder uint32) bool {
	for ctx.Err() == nil {
		var blocked bool
		err := b.db.Admin.QueryRow(context.Background(),
			"SELECT $2::INT4 = ANY(pg_blocking_pids($1::INT4))", int32(pid), int32(holder)).Scan(&blocked)
		if err == nil && blocked {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// waitGone waits until backend pid has ended: its transaction, whatever it
// did, is over.
func waitGone(t *testing.T, b *groupBundle, pid uint32) {
	require.Eventually(t, func() bool {
		var alive bool
		err := b.db.Admin.QueryRow(context.Background(),
			"SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::INT4)", int32(pid)).Scan(&alive)
		return err == nil && !alive
	}, time.Minute, time.Millisecond, "backend %d never ended", pid)
}

// cancelDroppingProxy forwards connections to the database at dbURL, but
// for PostgreSQL's cancel requests, which it drops, and answers a URL of the
// database through it.
func cancelDroppingProxy(t *testing.T, dbURL string) string { return startProxy(t, dbURL, 0).url }

// proxy stands between the store and the database: it drops cancel
// requests, holds what each client sends for hold before forwarding it, and
// holds it much longer on a connection the test stalls (stall) during that
// time, as a busy network or a backend waiting for a CPU would: a given-up
// transaction then reaches the server after what its caller sent next.
type proxy struct {
	url    string
	hold   time.Duration
	mu     sync.Mutex
	stalls map[uint32]*atomic.Bool // by backend process id
}

func startProxy(t *testing.T, dbURL string, hold time.Duration) *proxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	u.Host = ln.Addr().String()
	p := &proxy{url: u.String(), hold: hold, stalls: map[uint32]*atomic.Bool{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c, target)
		}
	}()
	return p
}

// stall makes the connection of backend pid hold what it forwards next for
// a long time, if it has not been forwarded yet.
func (p *proxy) stall(pid uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.stalls[pid]; st != nil {
		st.Store(true)
	}
}

// Protocol codes: of a CancelRequest, and the type of BackendKeyData.
const (
	cancelRequestCode = 80877102
	backendKeyData    = 'K'
)

func (p *proxy) forward(c net.Conn, target string) {
	defer c.Close()
	var head [8]byte // a startup-phase message: length, then code
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return
	}
	if binary.BigEndian.Uint32(head[4:]) == cancelRequestCode {
		return // dropped
	}
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	if _, err := s.Write(head[:]); err != nil {
		return
	}
	stalled := &atomic.Bool{}
	done := make(chan struct{}, 2)
	go func() { p.toServer(s, c, stalled); done <- struct{}{} }()
	go func() { p.toClient(c, s, stalled); done <- struct{}{} }()
	<-done
}

// toClient forwards the server's messages, learning the backend's process
// id from its BackendKeyData.
func (p *proxy) toClient(dst io.Writer, src io.Reader, stalled *atomic.Bool) {
	for {
		var head [5]byte
		if _, err := io.ReadFull(src, head[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:])-4)
		if _, err := io.ReadFull(src, body); err != nil {
			return
		}
		if head[0] == backendKeyData && len(body) >= 4 {
			p.mu.Lock()
			p.stalls[binary.BigEndian.Uint32(body)] = stalled
			p.mu.Unlock()
		}
		if _, err := dst.Write(append(head[:], body...)); err != nil {
			return
		}
	}
}

// toServer forwards what the client sends, each read held for p.hold, and
// for 50 times as long when the connection was stalled meanwhile. It
// forwards what it read even once the client has closed, as a network
// delivers what is in flight.
func (p *proxy) toServer(dst io.Writer, src io.Reader, stalled *atomic.Bool) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(p.hold)
			if stalled.CompareAndSwap(true, false) {
				time.Sleep(50 * p.hold)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Under contention — CPU hogs in this process, busy backends in the
// database, a network that delays what each connection sends, callers that
// give up at random moments, and cancel requests that never arrive — no commit given up on ever lands after a later batch
// on its key: every worker's chain of compare-and-sets on its own key finds
// exactly the versions it wrote or adopted (recyclingWorker), for a few
// seconds of rounds.
func TestGroupCommit_GivenUpCommitsStayOrderedUnderContention(t *testing.T) {
	t.Parallel()
	db := requirePostgres(t)
	for _, maxGroups := range []int{1, 4} {
		t.Run(fmt.Sprintf("groups in flight %d", maxGroups), func(t *testing.T) {
			px := startProxy(t, db.URL, 2*time.Millisecond)
			b := setupGroups(t, sqlstore.Config{MaxGroups: maxGroups, URL: px.url})
			stop := make(chan struct{})
			var hogs sync.WaitGroup
			defer func() { close(stop); hogs.Wait() }()
			hogs.Go(func() { spin(stop) })
			hogs.Go(func() { busyBackend(db, stop) })
			// Half the transactions whose callers will give up are stalled on
			// their way to the server, and held, once their COMMIT was sent,
			// until their callers have given up: each is left in doubt, and
			// reaches the server late.
			sqlstore.SetAfterSendHook(b.s, func(ctx context.Context, pid uint32) {
				if _, ok := ctx.Deadline(); ok && rand.N(2) == 0 {
					px.stall(pid)
					<-ctx.Done()
				}
			})
			settle := 60 * px.hold // longer than a stalled transaction takes to arrive
			const workers = 8
			deadline := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() { givingUpWorker(t, b.s, w, deadline, settle) })
			}
			wg.Wait()
			t.Logf("%+v", b.s.Stats())
		})
	}
}

// spin keeps a CPU busy until stop closes, yielding to the goroutines of
// the test often (it contends for the machine's CPUs, not for Go's).
func spin(stop chan struct{}) {
	for x := uint64(1); ; x = x*6364136223846793005 + 1 {
		if x&0xffff == 0 {
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}
}

// busyBackend keeps a database backend busy until stop closes.
func busyBackend(db *database, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = db.Admin.Exec(ctx, "SELECT count(*) FROM generate_series(1, 300000)")
		cancel()
	}
}

// givingUpWorker chains compare-and-sets on a key of its own until deadline,
// giving up on every other one after a random time around what a commit
// takes. After each it gave up on, a batch conditioned on the version it
// knows tells whether the given-up one landed: if that batch holds, the
// given-up one is ordered after it and so must never land; if it fails, the
// given-up one landed, and the key holds its value. A given-up batch that
// landed later anyway makes the next compare-and-set fail.
func givingUpWorker(t *testing.T, s store.Store, w int, deadline time.Time, settle time.Duration) {
	ctx := context.Background()
	own := store.Key("chain", fmt.Sprint(w))
	var version uint64
	latency := time.Millisecond // a moving average of the commits' durations
	for i := 0; time.Now().Before(deadline) && !t.Failed(); i++ {
		value := []byte(fmt.Sprintf("w%d-%d", w, i))
		cond := store.IfAbsent(own)
		if version != 0 {
			cond = store.IfVersion(own, version)
		}
		batch := &store.Batch{Conditions: []store.Condition{cond}, Ops: []store.Op{store.Put(own, value)}}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		givesUp := i%2 == 1
		if givesUp {
			cctx, cancel = context.WithTimeout(ctx, rand.N(2*latency))
		}
		start := time.Now()
		res, err := s.Commit(cctx, batch)
		cancel()
		switch {
		case err == nil:
			version = res.Versions[0]
			latency = (7*latency + time.Since(start)) / 8
			continue
		case errors.Is(err, store.ErrConditionFailed):
			require.NoError(t, err, "a condition that holds failed: a given-up batch landed after a later one")
		case !givesUp:
			require.NoError(t, err)
		}
		_, syncErr := s.Commit(ctx, &store.Batch{Conditions: []store.Condition{cond}})
		if syncErr == nil {
			// The given-up batch is ordered before this one, which found the
			// key unchanged: it must never land, not even once it could have
			// reached the server.
			if errors.Is(err, store.ErrOutcomeUnknown) {
				time.Sleep(settle)
				it, getErr := s.Get(ctx, own)
				if version == 0 {
					require.ErrorIs(t, getErr, store.ErrNotFound, "a given-up batch landed after a later batch on its key")
				} else {
					require.NoError(t, getErr)
					require.Equal(t, version, it.Version, "a given-up batch landed after a later batch on its key")
				}
			}
			continue
		}
		require.ErrorIs(t, syncErr, store.ErrConditionFailed)
		it, getErr := s.Get(ctx, own)
		require.NoError(t, getErr)
		require.Equal(t, string(value), string(it.Value), "the key changed, and not to the given-up batch's value")
		version = it.Version
	}
}
