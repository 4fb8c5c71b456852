package export

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
)

// Defaults of Config.
const (
	DefaultBatchSize      = 100
	DefaultPollInterval   = 200 * time.Millisecond
	DefaultLinger         = 50 * time.Millisecond
	DefaultMaxLinger      = 500 * time.Millisecond
	DefaultMaxAttempts    = 10
	DefaultBackoffInitial = time.Second
	DefaultBackoffCap     = 5 * time.Minute
	DefaultPublishTimeout = 10 * time.Second
)

// Clock tells the time (the project's one clock.Clock). Backoff reads it, so
// tests move time by hand.
type Clock = clock.Clock

// SystemClock is the wall clock.
var SystemClock Clock = clock.System{}

// Config configures a Worker. The zero value, with defaults applied, is a
// usable configuration.
type Config struct {
	// BatchSize is how many outbox entries one scan page holds and one
	// acknowledgement batch deletes.
	BatchSize int
	// PollInterval is how long Run waits after a pass that found nothing to do.
	PollInterval time.Duration
	// Linger and MaxLinger bound how long Run waits after a pass that
	// published, so that the next pass finds the entries of many decisions
	// at once: a little export latency for fewer passes, reads and
	// acknowledgement commits. Within them Run waits until about a page
	// (BatchSize) of entries is due at the rate they arrived since the pass
	// before (lingerAfter): at a high rate Linger, at a low one up to
	// MaxLinger, so that a trickle of events costs a few passes a second,
	// not one per Linger. A negative Linger starts the next pass at once; a
	// MaxLinger below Linger is Linger.
	Linger    time.Duration
	MaxLinger time.Duration
	// MaxAttempts is how many failed publishes move an entry to the
	// dead-letter record.
	MaxAttempts int
	// BackoffInitial and BackoffCap bound the retry delay: attempt n waits a
	// uniformly random time in [0, min(BackoffCap, BackoffInitial·2^(n-1))]
	// ("full jitter"). The same policy paces the worker while the bus is
	// unavailable.
	BackoffInitial time.Duration
	BackoffCap     time.Duration
	// PublishTimeout bounds one Publish or PublishBatch call.
	PublishTimeout time.Duration
	// Clock reads the time for backoff and records; nil is SystemClock.
	Clock Clock
	// Jitter answers a uniformly random number in [0, 1); nil is math/rand/v2.
	Jitter func() float64
	// Logger receives the worker's log lines, among them the
	// EVENT_BUS_DELIVERY_FAILED alert; nil discards them.
	Logger *slog.Logger
	// MeterProvider receives the worker's OpenTelemetry instruments; nil
	// records none. Workers sharing a provider share their instruments.
	MeterProvider metric.MeterProvider
	// OutboxCache, when set, is the cache of the outbox entries the engine
	// in this process committed (engine.Config.OutboxCache): the worker
	// takes an entry's events from it instead of reading them back from
	// the store. Entries it does not hold are read from the store as
	// always; nil reads every entry's events from the store.
	OutboxCache *runlog.OutboxCache
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Linger == 0 {
		c.Linger = DefaultLinger
	}
	if c.MaxLinger == 0 {
		c.MaxLinger = DefaultMaxLinger
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.BackoffInitial == 0 {
		c.BackoffInitial = DefaultBackoffInitial
	}
	if c.BackoffCap == 0 {
		c.BackoffCap = DefaultBackoffCap
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	if c.Clock == nil {
		c.Clock = SystemClock
	}
	if c.Jitter == nil {
		c.Jitter = rand.Float64
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.BatchSize < 1 || c.BatchSize > store.MaxScanLimit:
		return fmt.Errorf("export: batch size must be between 1 and %d, got %d", store.MaxScanLimit, c.BatchSize)
	case c.PollInterval < time.Millisecond:
		return fmt.Errorf("export: poll interval must be at least 1ms, got %s", c.PollInterval)
	case c.MaxAttempts < 1:
		return fmt.Errorf("export: max attempts must be at least 1, got %d", c.MaxAttempts)
	case c.BackoffInitial < time.Millisecond:
		return fmt.Errorf("export: initial backoff must be at least 1ms, got %s", c.BackoffInitial)
	case c.BackoffCap < c.BackoffInitial:
		return fmt.Errorf("export: backoff cap must be at least the initial backoff %s, got %s", c.BackoffInitial, c.BackoffCap)
	case c.PublishTimeout < time.Millisecond:
		return fmt.Errorf("export: publish timeout must be at least 1ms, got %s", c.PublishTimeout)
	}
	return nil
}

// lingerAfter answers how long Run waits after a pass that found arrived
// entries to publish (its own, not those waiting for a retry), begun cycle
// after the pass before it (0: there was none) and done in took: until,
// at the rate of arrived per cycle, about BatchSize entries are due at the
// next pass's start, within [Linger, MaxLinger].
func (c Config) lingerAfter(arrived int, cycle, took time.Duration) time.Duration {
	switch {
	case c.Linger <= 0:
		return 0
	case arrived <= 0:
		return c.longestLinger()
	case cycle <= 0 || arrived >= c.BatchSize:
		return c.Linger
	}
	fill := time.Duration(float64(cycle) * float64(c.BatchSize) / float64(arrived))
	return min(max(fill-took, c.Linger), c.longestLinger())
}

// longestLinger is MaxLinger, or Linger when that is longer (0 when Linger
// is negative: no linger at all).
func (c Config) longestLinger() time.Duration {
	if c.Linger <= 0 {
		return 0
	}
	return max(c.MaxLinger, c.Linger)
}

// Backoff answers the ceiling of the delay after the attempt-th failure
// (attempt ≥ 1): min(cap, initial·2^(attempt-1)). The delay itself is a
// uniformly random fraction of it (full jitter).
func Backoff(initial, cap time.Duration, attempt int) time.Duration {
	d := initial
	for i := 1; i < attempt; i++ {
		if d >= cap/2 {
			return cap
		}
		d *= 2
	}
	return min(d, cap)
}

// delay answers the jittered delay after the attempt-th failure.
func (c Config) delay(attempt int) time.Duration {
	return time.Duration(c.Jitter() * float64(Backoff(c.BackoffInitial, c.BackoffCap, attempt)))
}
