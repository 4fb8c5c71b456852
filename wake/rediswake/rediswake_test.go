package rediswake_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/wake"
	"github.com/weft-dev/weft/wake/rediswake"
)

// inbox collects the keys a notifier delivers.
type inbox struct {
	mu   sync.Mutex
	keys []string
}

func (in *inbox) deliver(keys ...string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.keys = append(in.keys, keys...)
}

func (in *inbox) has(key string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Contains(in.keys, key)
}

func (in *inbox) count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.keys)
}

// process is one notifier, as one weftd would run it, with its own client.
type process struct {
	n    *rediswake.Notifier
	in   *inbox
	rdb  *redis.Client
	name string // the client's CLIENT SETNAME
}

// start runs a notifier on channel through a client of its own to addr,
// stopped when the test ends.
func start(t *testing.T, addr, channel string, batch wake.BatcherConfig) *process {
	t.Helper()
	return startWith(t, addr, rediswake.Config{Channel: channel, Batch: batch})
}

// startWith runs a notifier configured by cfg, as start does.
func startWith(t *testing.T, addr string, cfg rediswake.Config) *process {
	t.Helper()
	name := "weft-test-wake-" + uuid.NewString()[:8]
	rdb := redis.NewClient(&redis.Options{Addr: addr, ClientName: name})
	n, err := rediswake.New(rdb, cfg)
	require.NoError(t, err)
	p := &process{n: n, in: &inbox{}, rdb: rdb, name: name}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); n.Run(ctx, p.in.deliver) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = rdb.Close()
	})
	return p
}

// channel answers a channel no other test uses.
func channel() string { return "weft-test:" + uuid.NewString() + ":wake" }

func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, 20*time.Second, 5*time.Millisecond, append([]any{msg}, args...)...)
}

func (p *process) waitSubscribed(t *testing.T, times uint64) {
	t.Helper()
	eventually(t, func() bool { return p.n.Stats().Subscriptions >= times }, "subscribed %d times", times)
}

func TestNotifier_DeliversWhatOtherProcessesPublishAndSkipsItsOwn(t *testing.T) {
	t.Parallel()
	addr, ch := redistest.Addr(t), channel()
	a, b := start(t, addr, ch, wake.BatcherConfig{}), start(t, addr, ch, wake.BatcherConfig{})
	a.waitSubscribed(t, 1)
	b.waitSubscribed(t, 1)

	a.n.Publish([]string{"tenant\x00default", "run\x01run-1"})
	eventually(t, func() bool { return b.in.has("tenant\x00default") && b.in.has("run\x01run-1") }, "b hears a's keys")
	eventually(t, func() bool { return a.n.Stats().Own >= 1 }, "a sees its own message")
	require.Zero(t, a.in.count(), "a does not deliver its own keys")

	const n = 1000
	for i := range n {
		a.n.Publish([]string{fmt.Sprint("key-", i)})
	}
	eventually(t, func() bool { return b.n.Stats().Received == 2+n }, "every key arrives")
	st := a.n.Stats()
	require.Zero(t, st.Dropped)
	t.Logf("%d publishes of one key each went out in %d PUBLISH commands", n, st.Sends-1)

	require.NoError(t, a.rdb.Publish(context.Background(), ch, "not a wake-up").Err())
	eventually(t, func() bool { return b.n.Stats().Malformed == 1 }, "a foreign message is counted and skipped")
}

// TestNotifier_AloneOnItsChannelItHoldsKeysUntilAnotherProcessListens: once
// a PUBLISH reached only the notifier's own subscription, the keys it is
// given are held, unsent; a process that subscribes says hello, and the held
// keys reach it then — late, not never — however long the hold was to last.
func TestNotifier_AloneOnItsChannelItHoldsKeysUntilAnotherProcessListens(t *testing.T) {
	t.Parallel()
	addr, ch := redistest.Addr(t), channel()
	cfg := rediswake.Config{Channel: ch, AloneRecheck: time.Hour}
	a := startWith(t, addr, cfg)
	a.waitSubscribed(t, 1)
	i := 0
	eventually(t, func() bool {
		i++
		a.n.Publish([]string{fmt.Sprint("alone-", i)})
		return a.n.Stats().Alone > 0
	}, "a finds itself alone on its channel")
	for j := range 10 {
		a.n.Publish([]string{fmt.Sprint("held-", j)})
	}

	// Sent at once, the keys would have reached nobody: b was not yet
	// subscribed. They reach it when its hello releases them.
	b := startWith(t, addr, cfg)
	eventually(t, func() bool { return b.in.has("held-0") && b.in.has("held-9") },
		"b's hello releases what a held")
	a.n.Publish([]string{"after"})
	eventually(t, func() bool { return b.in.has("after") }, "with b listening, a sends")
}

// TestNotifier_HeldKeysAreSentWithTheFirstKeyAfterTheRecheck: without a
// hello (another process that subscribed without one, or whose hello was
// lost), the first key after AloneRecheck sends what was held with it, and
// its PUBLISH finds the other process.
func TestNotifier_HeldKeysAreSentWithTheFirstKeyAfterTheRecheck(t *testing.T) {
	t.Parallel()
	addr, ch := redistest.Addr(t), channel()
	a := startWith(t, addr, rediswake.Config{Channel: ch, AloneRecheck: 50 * time.Millisecond})
	a.waitSubscribed(t, 1)
	i := 0
	eventually(t, func() bool {
		i++
		a.n.Publish([]string{fmt.Sprint("alone-", i)})
		return a.n.Stats().Alone > 0
	}, "a finds itself alone on its channel")
	a.n.Publish([]string{"held"})

	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	ps := rdb.Subscribe(context.Background(), ch) // a silent listener: no hello
	t.Cleanup(func() { _ = ps.Close() })
	_, err := ps.Receive(context.Background())
	require.NoError(t, err)
	msgs := ps.Channel()
	got := map[string]bool{}
	eventually(t, func() bool {
		a.n.Publish([]string{"later"})
		for {
			select {
			case m := <-msgs:
				_, keys, err := wake.Decode([]byte(m.Payload))
				require.NoError(t, err)
				for _, k := range keys {
					got[k] = true
				}
			default:
				return got["held"] && got["later"]
			}
		}
	}, "the held key is sent with a later one after the recheck")
}

// TestNotifier_AloneIsNeverAssumedWhenTheOneReceiverIsAnother: a PUBLISH
// that one subscriber received, which was not this process (its own
// subscription is down), never makes it drop keys: it did not receive its
// message itself.
func TestNotifier_AloneIsNeverAssumedWhenTheOneReceiverIsAnother(t *testing.T) {
	t.Parallel()
	addr, ch := redistest.Addr(t), channel()
	b := start(t, addr, ch, wake.BatcherConfig{})
	b.waitSubscribed(t, 1)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	a, err := rediswake.New(rdb, rediswake.Config{Channel: ch, AloneRecheck: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rediswake.RunWithoutSubscribing(ctx, a) }()
	t.Cleanup(func() { cancel(); <-done })

	const n = 50
	for j := range n {
		a.Publish([]string{fmt.Sprint("k-", j)})
	}
	eventually(t, func() bool { return b.in.count() >= n }, "every key reaches b")
	require.Zero(t, a.Stats().Alone)
}

// TestNotifier_SubscribesAgainAfterItsConnectionIsKilled kills only this
// test's subscriber connection (CLIENT KILL ID of the connection named for
// it: never TYPE pubsub, which would cut every subscriber on the shared
// Redis), as a Redis restart would, and checks that go-redis subscribes again
// and wake-ups flow again.
func TestNotifier_SubscribesAgainAfterItsConnectionIsKilled(t *testing.T) {
	t.Parallel()
	addr, ch := redistest.Addr(t), channel()
	a, b := start(t, addr, ch, wake.BatcherConfig{}), start(t, addr, ch, wake.BatcherConfig{})
	a.waitSubscribed(t, 1)
	b.waitSubscribed(t, 1)

	ctx := context.Background()
	id := subscriberID(t, a.rdb, b.name)
	require.NoError(t, a.rdb.Do(ctx, "CLIENT", "KILL", "ID", id).Err())
	b.waitSubscribed(t, 2)

	a.n.Publish([]string{"after-the-kill"})
	eventually(t, func() bool { return b.in.has("after-the-kill") }, "wake-ups resume after the subscription is back")
}

// subscriberID answers the id of the pub/sub connection named name.
func subscriberID(t *testing.T, rdb *redis.Client, name string) string {
	t.Helper()
	var id string
	eventually(t, func() bool {
		list, err := rdb.ClientList(context.Background()).Result()
		require.NoError(t, err)
		for line := range strings.SplitSeq(list, "\n") {
			f := fields(line)
			if f["name"] == name && f["sub"] == "1" {
				id = f["id"]
				return true
			}
		}
		return false
	}, "the subscriber connection %s is listed", name)
	return id
}

func fields(line string) map[string]string {
	out := map[string]string{}
	for kv := range strings.FieldsSeq(line) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// TestNotifier_PublishNeverWaitsForAHungRedis points a notifier at a server
// that accepts connections and never answers (a Redis that hangs): Publish
// still returns at once, the keys beyond the buffer are dropped and counted,
// and Run stops when asked.
func TestNotifier_PublishNeverWaitsForAHungRedis(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { // read and never answer, until the client gives up
				defer func() { _ = c.Close() }()
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	}()
	rdb := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), ReadTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	n, err := rediswake.New(rdb, rediswake.Config{Channel: channel(), Batch: wake.BatcherConfig{MaxBatch: 8, Buffer: 64}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); n.Run(ctx, func(...string) {}) }()

	published := make(chan struct{})
	go func() {
		defer close(published)
		for i := range 10_000 {
			n.Publish([]string{fmt.Sprint("key-", i)})
		}
	}()
	select {
	case <-published:
	case <-time.After(10 * time.Second): // 10,000 map insertions take milliseconds
		t.Fatal("Publish waited for Redis")
	}
	eventually(t, func() bool { return n.Stats().Dropped > 0 && n.Stats().Failed > 0 },
		"keys beyond the buffer are dropped, and PUBLISH fails after the client's timeout")
	cancel()
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestConfig_DefaultsAndValidation(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	n, err := rediswake.New(rdb, rediswake.Config{})
	require.NoError(t, err)
	require.Equal(t, rediswake.DefaultChannel, n.Channel())
	_, err = rediswake.New(rdb, rediswake.Config{Batch: wake.BatcherConfig{MaxBatch: 10, Buffer: 1}})
	require.EqualError(t, err, "wake buffer must hold at least a batch (10 keys), got 1")
}
