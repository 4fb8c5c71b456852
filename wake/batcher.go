package wake

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Batcher defaults.
const (
	DefaultLinger   = 200 * time.Microsecond
	DefaultMaxBatch = 256
	DefaultBuffer   = 4096
)

// BatcherConfig says how a Batcher coalesces keys into sends.
type BatcherConfig struct {
	// Linger is how long the oldest pending key waits for others to join
	// its send (default 200µs; negative: none, a send starts as soon as
	// the sender is free); MaxBatch pending keys send at once.
	Linger time.Duration
	// MaxBatch is the most keys one send carries (default 256).
	MaxBatch int
	// Buffer is how many distinct keys may wait while a send is in flight
	// (default 4096); Add drops the keys beyond it.
	Buffer int
	// Logger receives failed sends and drops (at debug; the first failure
	// after a success and the recovery at warn and info).
	Logger *slog.Logger
}

// WithDefaults answers the config with unset fields defaulted.
func (c BatcherConfig) WithDefaults() BatcherConfig {
	if c.Linger == 0 {
		c.Linger = DefaultLinger
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.Buffer == 0 {
		c.Buffer = DefaultBuffer
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c BatcherConfig) validate() error {
	switch {
	case c.Linger > time.Second:
		return fmt.Errorf("wake linger must be at most 1s, got %s", c.Linger)
	case c.MaxBatch < 1:
		return fmt.Errorf("wake batch must hold at least 1 key, got %d", c.MaxBatch)
	case c.Buffer < c.MaxBatch:
		return fmt.Errorf("wake buffer must hold at least a batch (%d keys), got %d", c.MaxBatch, c.Buffer)
	}
	return nil
}

// SendFunc delivers one batch of distinct keys; an error loses them.
type SendFunc func(ctx context.Context, keys []string) error

// BatcherStats count what a Batcher did since it was made.
type BatcherStats struct {
	// Keys were accepted for sending (a key already pending is not counted
	// again); Dropped were refused because the buffer was full.
	Keys, Dropped uint64
	// Sends were attempted, one message each; Failed of them returned an
	// error, losing their keys.
	Sends, Failed uint64
}

// Batcher coalesces keys into sends: Add never blocks on a send, and one
// goroutine (Run) sends whatever is pending, at most MaxBatch keys at a time,
// once the oldest pending key has waited Linger. While a send is in flight
// keys accumulate, so a busy process sends large batches and an idle one
// sends at once. It is safe for concurrent use.
type Batcher struct {
	cfg  BatcherConfig
	send SendFunc

	mu      sync.Mutex
	pending map[string]struct{}
	oldest  time.Time // when the oldest pending key arrived
	drops   uint64    // keys dropped since the sender last looked
	// heldUntil: until then, pending keys are kept and not sent (Hold).
	heldUntil time.Time

	kick chan struct{} // pending went from empty to not empty
	full chan struct{} // a batch is pending

	keys, dropped, sends, failed atomic.Uint64
}

// NewBatcher answers a batcher that sends with send.
func NewBatcher(cfg BatcherConfig, send SendFunc) (*Batcher, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Batcher{cfg: cfg, send: send, pending: map[string]struct{}{},
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1)}, nil
}

// Add queues keys for the next send. It holds a mutex for a few map
// operations and never waits for a send: keys beyond the buffer are dropped
// and counted.
func (b *Batcher) Add(keys []string) {
	b.mu.Lock()
	wasEmpty := len(b.pending) == 0
	for _, k := range keys {
		if _, ok := b.pending[k]; ok {
			continue
		}
		if len(b.pending) >= b.cfg.Buffer {
			b.drops++
			b.dropped.Add(1)
			continue
		}
		if len(b.pending) == 0 {
			b.oldest = time.Now()
		}
		b.pending[k] = struct{}{}
		b.keys.Add(1)
	}
	kick, full := wasEmpty && len(b.pending) > 0, len(b.pending) >= b.cfg.MaxBatch
	if !b.heldUntil.IsZero() {
		if time.Now().Before(b.heldUntil) {
			kick, full = false, false
		} else { // the hold is over: send what it kept
			b.heldUntil = time.Time{}
			kick = len(b.pending) > 0
		}
	}
	b.mu.Unlock()
	if kick {
		signal(b.kick)
	}
	if full {
		signal(b.full)
	}
}

// Hold keeps the keys Add is given pending, unsent, until until (Release
// ends it sooner); the first Add after it sends them with its own. Keys
// beyond the buffer are dropped and counted, as while a send is in flight.
func (b *Batcher) Hold(until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heldUntil = until
}

// Release ends a hold and sends what it kept.
func (b *Batcher) Release() {
	b.mu.Lock()
	held := !b.heldUntil.IsZero()
	b.heldUntil = time.Time{}
	kick := held && len(b.pending) > 0
	b.mu.Unlock()
	if kick {
		signal(b.kick)
	}
}

// signal wakes a channel's reader without ever waiting.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Stats answers the counters.
func (b *Batcher) Stats() BatcherStats {
	return BatcherStats{Keys: b.keys.Load(), Dropped: b.dropped.Load(), Sends: b.sends.Load(), Failed: b.failed.Load()}
}

// Run sends pending keys until ctx ends; what is pending then is dropped.
// Call it once.
func (b *Batcher) Run(ctx context.Context) {
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		if !b.linger(ctx) {
			return
		}
		if b.holding() { // held since the kick: Release or the first Add after the hold sends
			continue
		}
		for _, batch := range b.take() {
			failing = b.sendOne(ctx, batch, failing)
		}
	}
}

// holding reports whether a hold keeps the pending keys now, clearing one
// that has ended. A kick from before the hold (an Add while a send was in
// flight, or while the sender lingered) must not send keys the hold keeps.
func (b *Batcher) holding() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.heldUntil.IsZero():
		return false
	case time.Now().Before(b.heldUntil):
		return true
	default:
		b.heldUntil = time.Time{}
		return false
	}
}

// linger waits until the oldest pending key has waited Linger or a batch is
// pending; it answers false when ctx ended first.
func (b *Batcher) linger(ctx context.Context) bool {
	b.mu.Lock()
	wait, n := b.cfg.Linger-time.Since(b.oldest), len(b.pending)
	b.mu.Unlock()
	if wait <= 0 || n >= b.cfg.MaxBatch {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-b.full:
	}
	return true
}

// take empties the buffer into batches of at most MaxBatch keys.
func (b *Batcher) take() [][]string {
	b.mu.Lock()
	keys := make([]string, 0, len(b.pending))
	for k := range b.pending {
		keys = append(keys, k)
	}
	clear(b.pending)
	drops := b.drops
	b.drops = 0
	b.mu.Unlock()
	select { // a stale "full" would cut the next linger short
	case <-b.full:
	default:
	}
	if drops > 0 {
		b.cfg.Logger.Debug("wake-ups dropped: the buffer was full while a send was in flight",
			slog.Uint64("dropped", drops), slog.Int("buffer", b.cfg.Buffer))
	}
	var batches [][]string
	for len(keys) > 0 {
		n := min(len(keys), b.cfg.MaxBatch)
		batches = append(batches, keys[:n:n])
		keys = keys[n:]
	}
	return batches
}

// sendOne sends a batch and answers whether sends are failing, logging the
// first failure after a success and the first success after a failure.
func (b *Batcher) sendOne(ctx context.Context, keys []string, failing bool) bool {
	b.sends.Add(1)
	err := b.send(ctx, keys)
	if err == nil {
		if failing {
			b.cfg.Logger.Info("wake-ups are sent again")
		}
		return false
	}
	b.failed.Add(1)
	if ctx.Err() != nil {
		return failing
	}
	if !failing {
		b.cfg.Logger.Warn("wake-ups cannot be sent; other processes see this one's work at their poll interval",
			slog.String("error", err.Error()))
	} else {
		b.cfg.Logger.Debug("wake-up send failed", slog.Int("keys", len(keys)), slog.String("error", err.Error()))
	}
	return true
}
