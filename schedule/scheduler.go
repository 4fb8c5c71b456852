package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Runs is what a scheduler needs of the engine.
type Runs interface {
	SubmitRun(ctx context.Context, p engine.SubmitParams) (*engine.SubmitResult, error)
	GetRun(ctx context.Context, p engine.GetRunParams) (*runstate.Snapshot, error)
}

// Config configures a Scheduler.
type Config struct {
	// Store holds the schedules; it must support conditional batches.
	Store store.Store
	// Runs submits the fires and reads the previous run's status.
	Runs Runs
	// Clock defaults to engine.SystemClock.
	Clock engine.Clock
	// Logger receives one line per refused fire, never a payload.
	Logger *slog.Logger
	// Interval is how often Run ticks (default 1s).
	Interval time.Duration
	// MaxFiresPerTick bounds the fires one schedule submits between two
	// writes of its record (default 50).
	MaxFiresPerTick int
}

// WithDefaults answers the config with every unset field given its default.
func (c Config) WithDefaults() Config {
	if c.Clock == nil {
		c.Clock = engine.SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.MaxFiresPerTick == 0 {
		c.MaxFiresPerTick = 50
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("schedule: a store is required")
	case c.Runs == nil:
		return errors.New("schedule: the engine (Runs) is required")
	case !c.Store.Capabilities().ConditionalBatch:
		return &engine.Error{Code: engine.CodeCapabilityUnavailable, Capability: "conditionalBatch",
			Message: "schedules need a store with conditional batches; " + c.Store.Capabilities().Backend + " has none"}
	case c.Interval < 10*time.Millisecond:
		return fmt.Errorf("schedule tick interval must be at least 10ms, got %s", c.Interval)
	case c.MaxFiresPerTick < 1:
		return fmt.Errorf("schedule fires per tick must be at least 1, got %d", c.MaxFiresPerTick)
	}
	return nil
}

// Scheduler fires schedules and serves their API. Every weftd runs one over
// the shared store; compare-and-set on each schedule's record, and the
// run-request id of each fire, make that safe (see the package doc).
type Scheduler struct {
	cfg   Config
	store store.Store
	runs  Runs
	log   *slog.Logger
	stats *stats
}

// New builds a scheduler; it fails on a store without conditional batches.
func New(cfg Config) (*Scheduler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Scheduler{cfg: cfg, store: cfg.Store, runs: cfg.Runs, log: cfg.Logger, stats: newStats()}, nil
}

// now answers the scheduler's time in UTC, to the millisecond.
func (s *Scheduler) now() time.Time { return s.cfg.Clock.Now().UTC().Truncate(time.Millisecond) }

// Run ticks until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("schedule tick", slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick does one round: every schedule's due nominal times are decided and
// its pending fires submitted. Tests call it after advancing a fake clock.
func (s *Scheduler) Tick(ctx context.Context) error {
	var errs []error
	var after []byte
	found := map[string]bool{}
	for {
		page, err := s.store.Scan(ctx, &store.ScanParams{Prefix: allPrefix, After: after, Limit: 100})
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			found[string(item.Key)] = true
			if err := s.advance(ctx, item.Key); err != nil && !errors.Is(err, store.ErrNotFound) {
				errs = append(errs, fmt.Errorf("schedule %s: %w", item.Key, err))
			}
		}
		if len(page.Items) == 0 || page.Next == nil {
			s.stats.keep(found)
			return errors.Join(errs...)
		}
		after = page.Items[len(page.Items)-1].Key
	}
}

// maxRaces bounds how often one advance reads again after losing a race.
const maxRaces = 8

// advance decides one schedule's due fires and submits its pending ones,
// reading the record again whenever another writer got there first.
func (s *Scheduler) advance(ctx context.Context, k []byte) error {
	var err error
	for range maxRaces {
		if err = s.advanceOnce(ctx, k); !errors.Is(err, errRaced) {
			return err
		}
	}
	return err
}

// advanceOnce is one read-decide-write-submit-write round.
func (s *Scheduler) advanceOnce(ctx context.Context, k []byte) error {
	v, err := load(ctx, s.store, k)
	if err != nil {
		return err
	}
	s.stats.seen(v.rec)
	changed, err := s.decide(ctx, v.rec, s.now())
	if err != nil {
		return err
	}
	if changed {
		if err := s.save(ctx, v); err != nil {
			return err
		}
	}
	for len(v.rec.Pending) > 0 {
		if done := s.submitPending(ctx, v.rec); done == 0 {
			return nil // a transient refusal: the fires stay pending for the next tick
		}
		if err := s.save(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// save writes a record by compare-and-set and, once it is written, counts
// the decisions the write recorded.
func (s *Scheduler) save(ctx context.Context, v *versioned) error {
	if err := save(ctx, s.store, v); err != nil {
		return err
	}
	s.stats.written(v)
	return nil
}
