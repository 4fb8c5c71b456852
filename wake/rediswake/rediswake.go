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
// Layering: it imports wake and github.com/redis/go-redis/v9.
package rediswake

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/weft-dev/weft/wake"
)

// DefaultChannel is the channel of a deployment that sets none; it sits
// beside the leases' "weft:lease:" keys.
const DefaultChannel = "weft:wake"

// Config configures a Notifier.
type Config struct {
	// Channel is the deployment's channel (default DefaultChannel). Every
	// process of one deployment must use the same; deployments that share a
	// Redis should not (sharing only wakes waiters for nothing).
	Channel string
	// Batch says how published keys are coalesced (wake.BatcherConfig).
	Batch wake.BatcherConfig
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

	received, own, malformed, subscriptions atomic.Uint64
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

// Publish queues keys for the next PUBLISH. It never waits for Redis: keys
// beyond the buffer are dropped and counted.
func (n *Notifier) Publish(keys []string) { n.batch.Add(keys) }

// Stats answers the counters.
func (n *Notifier) Stats() Stats {
	return Stats{BatcherStats: n.batch.Stats(), Received: n.received.Load(), Own: n.own.Load(),
		Malformed: n.malformed.Load(), Subscriptions: n.subscriptions.Load()}
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

// send is the batcher's SendFunc: one PUBLISH.
func (n *Notifier) send(ctx context.Context, keys []string) error {
	return n.rdb.Publish(ctx, n.cfg.Channel, wake.Encode(n.origin, keys)).Err()
}

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
				n.subscribed(m)
			case *redis.Message:
				n.receive(m.Payload, deliver)
			}
		}
	}
}

// subscribed counts and logs a (re-)subscription.
func (n *Notifier) subscribed(s *redis.Subscription) {
	if s.Kind != "subscribe" {
		return
	}
	if n.subscriptions.Add(1) == 1 {
		n.cfg.Logger.Info("wake-ups subscribed", slog.String("channel", n.cfg.Channel))
		return
	}
	n.cfg.Logger.Info("wake-ups subscribed again after a reconnect; those sent meanwhile were missed",
		slog.String("channel", n.cfg.Channel))
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
	default:
		n.received.Add(uint64(len(keys)))
		deliver(keys...)
	}
}
