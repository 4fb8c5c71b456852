package engine

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
	"github.com/weft-dev/weft/wake/rediswake"
)

// redisPeer is one engine of a two-engine cluster on PostgreSQL, with its
// Redis wake-ups.
type redisPeer struct {
	eng *Engine
	n   *rediswake.Notifier
}

// redisWakeCluster answers two engines over one PostgreSQL schema, as two
// weftd processes, each with a Notifier on a channel of this test's own that
// reaches Redis at addr (the local Redis, or a proxy in front of it). Their
// poll interval is an hour: only a wake-up ends a long poll early.
func redisWakeCluster(t *testing.T, addr string) (a, b *redisPeer) {
	t.Helper()
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	channel := "weft-test:" + uuid.NewString() + ":wake"
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	peers := make([]*redisPeer, 2)
	for i, owner := range []string{"engine-a", "engine-b"} {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { _ = rdb.Close() })
		n, err := rediswake.New(rdb, rediswake.Config{Channel: channel})
		require.NoError(t, err)
		eng, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: owner,
			PollInterval: time.Hour, Notifier: n})
		require.NoError(t, err)
		wg.Go(func() { n.Run(ctx, eng.Wakes().Wake) })
		peers[i] = &redisPeer{eng: eng, n: n}
	}
	for _, p := range peers {
		p.waitSubscribed(t, 1)
	}
	return peers[0], peers[1]
}

func (p *redisPeer) waitSubscribed(t *testing.T, times uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return p.n.Stats().Subscriptions >= times }, 30*time.Second, 5*time.Millisecond,
		"subscribed %d times", times)
}

// TestWakeRedis_ALongPollOnOneEngineReturnsTheTaskAnotherMadeReady is issue
// #8's hand-off: a worker long-polls weftd B while the step before completes
// on weftd A. B's poll would otherwise see the task only at its next look at
// the store (here after its whole 20 s wait, as the control test shows).
func TestWakeRedis_ALongPollOnOneEngineReturnsTheTaskAnotherMadeReady(t *testing.T) {
	t.Parallel()
	const wait = 20 * time.Second
	a, b := redisWakeCluster(t, redistest.Require(t).Options().Addr)
	polled := startLongPoll(t, b.eng, "act-poll", wait)
	runID := submitOn(t, a.eng, "act-poll", true)
	requireHandedOff(t, polled, runID, wait)
	require.Positive(t, b.n.Stats().Received, "B heard A over Redis")
}

func TestWakeRedis_AnEventWatchOnOneEngineHearsAnotherEnginesAppend(t *testing.T) {
	t.Parallel()
	a, b := redisWakeCluster(t, redistest.Require(t).Options().Addr)
	runID := submitOn(t, a.eng, "act-watch", false)
	appended, release := b.eng.Wakes().EventsAppended(runID)
	defer release()
	_, err := a.eng.StartRun(context.Background(), StartParams{TenantID: tenant, RunID: runID, Actor: "alice"})
	require.NoError(t, err)
	select {
	case <-appended:
	case <-time.After(20 * time.Second):
		t.Fatal("B's watch did not hear A's append")
	}
}

// TestWakeRedis_DecisionsCommitWhileRedisHangsAndWakeupsResumeAfter puts a
// proxy between the engines and Redis and makes it hang (connections cut,
// new ones accepted and never answered), as a Redis restarting or
// unreachable behind a firewall would: decisions still commit without
// waiting on it; once it answers again, go-redis subscribes again and
// wake-ups flow. The shared Redis itself is never stopped.
func TestWakeRedis_DecisionsCommitWhileRedisHangsAndWakeupsResumeAfter(t *testing.T) {
	t.Parallel()
	proxy := startHangingProxy(t, redistest.Require(t).Options().Addr)
	a, b := redisWakeCluster(t, proxy.addr())

	proxy.hang()
	began := time.Now()
	for range 10 { // each publishes; a PUBLISH to the hung Redis waits out go-redis's 3 s read timeout
		submitOn(t, a.eng, "act-outage", true)
	}
	require.Less(t, time.Since(began), 10*time.Second, "decisions waited for Redis")
	require.Eventually(t, func() bool { return a.n.Stats().Failed > 0 }, 30*time.Second, 10*time.Millisecond,
		"A's PUBLISH to the hung Redis failed (the test exercised the outage)")

	proxy.answer()
	b.waitSubscribed(t, 2)
	const wait = 20 * time.Second
	polled := startLongPoll(t, b.eng, "act-after", wait)
	runID := submitOn(t, a.eng, "act-after", true)
	requireHandedOff(t, polled, runID, wait)
}

// hangingProxy forwards TCP connections to Redis until told to hang: then it
// closes every connection and accepts new ones without ever answering, until
// told to answer again, when it closes the hung ones.
type hangingProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	hung   bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func startHangingProxy(t *testing.T, target string) *hangingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &hangingProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		_ = ln.Close()
		p.closeAll()
		p.wg.Wait()
	})
	return p
}

func (p *hangingProxy) addr() string { return p.ln.Addr().String() }

func (p *hangingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		hung := p.hung
		p.mu.Unlock()
		if hung {
			p.wg.Go(func() { _, _ = io.Copy(io.Discard, c) })
			continue
		}
		p.wg.Go(func() { p.forward(c) })
	}
}

func (p *hangingProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { _, _ = io.Copy(up, c); _ = up.Close(); close(done) }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
	<-done
}

func (p *hangingProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *hangingProxy) hang() {
	p.mu.Lock()
	p.hung = true
	p.mu.Unlock()
	p.closeAll()
}

func (p *hangingProxy) answer() {
	p.mu.Lock()
	p.hung = false
	p.mu.Unlock()
	p.closeAll()
}

// BenchmarkWakeRedis_CrossEngineHandOff measures issue #8's hand-off at the
// default poll interval: a worker long-polls engine B while engine A makes a
// task ready (a started submission, two commits); ms/handoff is from A's call
// to B's poll answering, without and with Redis wake-ups, and, as the floor,
// when the worker polls A itself.
//
//	go test -run '^$' -bench CrossEngineHandOff -benchtime 50x ./engine/
func BenchmarkWakeRedis_CrossEngineHandOff(b *testing.B) {
	addr := redistest.Addr(b)
	for _, mode := range []string{"other-engine-interval-only", "other-engine-redis-wakeups", "same-engine"} {
		b.Run(mode, func(b *testing.B) {
			a, poller := benchCluster(b, addr, mode == "other-engine-redis-wakeups")
			if mode == "same-engine" {
				poller = a
			}
			var total time.Duration
			for b.Loop() {
				total += handOffTime(b, a, poller)
			}
			b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/handoff")
		})
	}
}

// handOffTime answers how long after a began to make a task ready poller's
// waiting long poll answered.
func handOffTime(b *testing.B, a, poller *Engine) time.Duration {
	polled := make(chan time.Time, 1)
	go func() {
		_, _ = poller.PollTasks(context.Background(), PollParams{TenantID: tenant, WorkerID: "w",
			Activities: []string{"act-bench"}, Wait: 5 * time.Second})
		polled <- time.Now()
	}()
	for !hasWaiter(poller, dispatch.QueueKey(tenant, definition.DefaultQueue)) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // past the poll's first scan
	began := time.Now()
	def := definition.Definition{PlanID: "bench", PlanVersion: "1", Actions: []definition.Action{{ID: "a", Order: 1, Activity: "act-bench"}}}
	if _, err := a.SubmitRun(context.Background(), SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"}); err != nil {
		b.Fatal(err)
	}
	return (<-polled).Sub(began)
}

// benchCluster answers two engines over one PostgreSQL schema at the default
// poll interval, with Redis wake-ups or without.
func benchCluster(b *testing.B, addr string, wakeups bool) (*Engine, *Engine) {
	db := sqltest.Require(b)
	schema := db.NewSchema(b)
	channel := "weft-test:" + uuid.NewString() + ":wake"
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	var engines []*Engine
	for _, owner := range []string{"engine-a", "engine-b"} {
		cfg := Config{Store: db.Open(b, schema), Ownership: CASRequired, Owner: owner}
		var n *rediswake.Notifier
		if wakeups {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			b.Cleanup(func() { _ = rdb.Close() })
			var err error
			if n, err = rediswake.New(rdb, rediswake.Config{Channel: channel}); err != nil {
				b.Fatal(err)
			}
			cfg.Notifier = n
		}
		eng, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if n != nil {
			wg.Go(func() { n.Run(ctx, eng.Wakes().Wake) })
			for n.Stats().Subscriptions == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		engines = append(engines, eng)
	}
	return engines[0], engines[1]
}
