// Package rediswake carries wake-ups between the weftd processes of a
// cluster over Redis pub/sub: one channel per deployment, on which each
// process PUBLISHes the keys its commits woke (coalesced by a wake.Batcher)
// and to which each SUBSCRIBEs, handing what others publish to its engine.
//
// Pub/sub is fire-and-forget: a process that is not subscribed at the moment
// of a PUBLISH (Redis restarting, a reconnect in progress) misses it, and a
// PUBLISH that fails is not retried. That costs latency only, because every
// long poll and event watch also looks at the store on its interval. go-redis
// reconnects a subscription that breaks and subscribes again on its own; each
// (re-)subscription is counted and logged.
//
// A process skips its own messages (each Notifier tags what it sends with a
// random origin): its engine already woke its own waiters before publishing,
// and waking them again would only cost each a needless look at the store.
//
// A process alone on its channel holds its keys instead of publishing them:
// PUBLISH answers how many subscribers received the message, and when that
// was one and this process received the same message itself (so the one
// was its own subscription), its keys stay pending, unsent, for
// Config.AloneRecheck (1 s). A process that subscribes, and again after each
// reconnect, publishes an empty message (a hello); a process holding keys
// sends them as soon as it hears any other process, and otherwise with the
// first key after AloneRecheck, whose PUBLISH looks again. So a single weftd
// pays no Redis command, goroutine wake-up or message of its own per step,
// and a process that joins gets the keys held meanwhile late, not never.
//
// Layering: it imports wake and github.com/redis/go-redis/v9.
package rediswake

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weft-dev/weft/wake"
)

// DefaultChannel is the channel of a deployment that sets none; it sits
// beside the leases' "weft:lease:" keys.
const DefaultChannel = "weft:wake"

// DefaultAloneRecheck is how long a process that found itself alone on its
// channel publishes nothing before it looks again.
const DefaultAloneRecheck = time.Second

// Config configures a Notifier.
type Config struct {
	// Channel is the deployment's channel (default DefaultChannel). Every
	// process of one deployment must use the same; deployments that share a
	// Redis should not (sharing only wakes waiters for nothing).
	Channel string
	// Batch says how published keys are coalesced (wake.BatcherConfig).
	Batch wake.BatcherConfig
	// AloneRecheck is how long keys are held after a PUBLISH that no other
	// process received (default DefaultAloneRecheck; negative: never held).
	AloneRecheck time.Duration
	// Logger receives subscriptions at info and problems (no payloads: there
	// are none).
	Logger *slog.Logger
}

// WithDefaults answers the config with unset fields defaulted.
func (c Config) WithDefaults() Config {
	if c.Channel == "" {
		c.Channel = DefaultChannel
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Batch.Logger == nil {
		c.Batch.Logger = c.Logger
	}
	if c.AloneRecheck == 0 {
		c.AloneRecheck = DefaultAloneRecheck
	}
	return c
}

// Stats count what a Notifier did since it was made.
type Stats struct {
	// BatcherStats count the publishing side: keys accepted and dropped,
	// PUBLISHes sent and failed.
	wake.BatcherStats
	// Received counts the keys received from other processes and delivered;
	// Own the messages of this Notifier skipped; Malformed the messages that
	// did not decode.
	Received, Own, Malformed uint64
	// Alone counts the times a PUBLISH found no other process listening,
	// and keys were held.
	Alone uint64
	// Subscriptions counts the times the channel was subscribed: 1, plus one
	// for every reconnect.
	Subscriptions uint64
}

// Notifier publishes this process's wake-ups and delivers other processes'.
// Publish implements engine.Notifier; Run does the Redis work.
type Notifier struct {
	rdb    redis.UniversalClient
	cfg    Config
	origin string
	batch  *wake.Batcher

	received, own, malformed, subscriptions, alone atomic.Uint64
	echo                                           echo
}

// echo matches a PUBLISH that reached a single subscriber with this
// process's receipt of the same message, which arrives before or after the
// PUBLISH's answer.
type echo struct {
	mu sync.Mutex
	// sentAlone is the last message a PUBLISH delivered to one subscriber,
	// not yet received back; received is the last own message received.
	sentAlone, received string
}

// sent notes a message a PUBLISH delivered to a single subscriber and
// reports whether this process already received it.
func (e *echo) sent(msg string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.received == msg {
		e.received = ""
		return true
	}
	e.sentAlone = msg
	return false
}

// heard notes an own message received and reports whether a PUBLISH
// delivered it to this process alone.
func (e *echo) heard(msg string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sentAlone == msg {
		e.sentAlone = ""
		return true
	}
	e.received = msg
	return false
}

// clear forgets a message sent alone: a later PUBLISH reached others.
func (e *echo) clear() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sentAlone = ""
}

// New answers a notifier on rdb. Nothing is sent or received until Run.
func New(rdb redis.UniversalClient, cfg Config) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	var origin [8]byte
	_, _ = rand.Read(origin[:])
	n := &Notifier{rdb: rdb, cfg: cfg, origin: string(origin[:])}
	batch, err := wake.NewBatcher(cfg.Batch, n.send)
	if err != nil {
		return nil, err
	}
	n.batch = batch
	return n, nil
}

// Channel answers the channel the notifier uses.
func (n *Notifier) Channel() string { return n.cfg.Channel }

// Publish queues keys for the next PUBLISH (held while this process is alone
// on its channel). It never waits for Redis: keys beyond the buffer are
// dropped and counted.
func (n *Notifier) Publish(keys []string) { n.batch.Add(keys) }

// Stats answers the counters.
func (n *Notifier) Stats() Stats {
	return Stats{BatcherStats: n.batch.Stats(), Received: n.received.Load(), Own: n.own.Load(),
		Malformed: n.malformed.Load(), Subscriptions: n.subscriptions.Load(), Alone: n.alone.Load()}
}

// Run publishes what Publish queues and hands every key other processes
// publish to deliver (an engine's Wake), until ctx ends. Call it once.
// deliver runs on Run's goroutine and must return quickly.
func (n *Notifier) Run(ctx context.Context, deliver func(keys ...string)) {
	var wg sync.WaitGroup
	wg.Go(func() { n.batch.Run(ctx) })
	n.subscribe(ctx, deliver)
	wg.Wait()
}

// send is the batcher's SendFunc: one PUBLISH, whose count of receivers
// says, with this process's receipt of the message, whether another process
// listens.
func (n *Notifier) send(ctx context.Context, keys []string) error {
	msg := string(wake.Encode(n.origin, keys))
	receivers, err := n.rdb.Publish(ctx, n.cfg.Channel, msg).Result()
	switch {
	case err != nil:
		return err
	case receivers != 1 || n.cfg.AloneRecheck < 0:
		n.echo.clear()
	case n.echo.sent(msg):
		n.beAlone()
	}
	return nil
}

// beAlone holds the keys Publish is given for AloneRecheck: the one
// subscriber of a PUBLISH was this process.
func (n *Notifier) beAlone() {
	n.alone.Add(1)
	n.batch.Hold(time.Now().Add(n.cfg.AloneRecheck))
}

// hello announces a (re-)subscription with a message of no keys, so that a
// process holding its keys sends them now.
func (n *Notifier) hello(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	if err := n.rdb.Publish(ctx, n.cfg.Channel, wake.Encode(n.origin, nil)).Err(); err != nil && ctx.Err() == nil {
		n.cfg.Logger.Debug("the wake-up hello could not be sent", slog.String("error", err.Error()))
	}
}

// helloTimeout bounds a hello, sent on the receiving goroutine.
const helloTimeout = time.Second

// subscribe receives until ctx ends. go-redis keeps the subscription: after
// a broken connection it reconnects and subscribes again by itself.
func (n *Notifier) subscribe(ctx context.Context, deliver func(keys ...string)) {
	ps := n.rdb.Subscribe(ctx, n.cfg.Channel)
	defer func() { _ = ps.Close() }()
	msgs := ps.ChannelWithSubscriptions()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-msgs:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if n.subscribed(m) {
					n.batch.Release() // held while this process's own subscription was down, perhaps wrongly
					n.hello(ctx)
				}
			case *redis.Message:
				n.receive(m.Payload, deliver)
			}
		}
	}
}

// subscribed counts and logs a (re-)subscription, and reports whether it was
// one.
func (n *Notifier) subscribed(s *redis.Subscription) bool {
	if s.Kind != "subscribe" {
		return false
	}
	if n.subscriptions.Add(1) == 1 {
		n.cfg.Logger.Info("wake-ups subscribed", slog.String("channel", n.cfg.Channel))
		return true
	}
	n.cfg.Logger.Info("wake-ups subscribed again after a reconnect; those sent meanwhile were missed",
		slog.String("channel", n.cfg.Channel))
	return true
}

// receive decodes a message and delivers its keys unless it is this
// notifier's own.
func (n *Notifier) receive(payload string, deliver func(keys ...string)) {
	origin, keys, err := wake.Decode([]byte(payload))
	switch {
	case err != nil:
		n.malformed.Add(1)
		n.cfg.Logger.Debug("a wake-up message did not decode; skipped", slog.String("channel", n.cfg.Channel), slog.String("error", err.Error()))
	case origin == n.origin:
		n.own.Add(1)
		if n.echo.heard(payload) {
			n.beAlone()
		}
	default:
		n.batch.Release() // another process listens: what was held goes to it
		if len(keys) > 0 {
			n.received.Add(uint64(len(keys)))
			deliver(keys...)
		}
	}
}
