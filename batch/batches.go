package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/store"
)

// Runs is what a batch needs of the engine: the call of each operation.
type Runs interface {
	CancelRun(ctx context.Context, p engine.ControlParams) (*engine.ControlResult, error)
	PauseRun(ctx context.Context, p engine.ControlParams) (*engine.ControlResult, error)
	ResumeRun(ctx context.Context, p engine.ControlParams) (*engine.ControlResult, error)
	RerunRun(ctx context.Context, p engine.ControlParams) (*engine.ControlResult, error)
	RetryStep(ctx context.Context, p engine.ControlParams) (*engine.ControlResult, error)
	SignalRun(ctx context.Context, p engine.SignalParams) (*engine.SignalResult, error)
	DeleteRun(ctx context.Context, p engine.DeleteRunParams) (*engine.DeleteRunResult, error)
}

// SelectFunc answers the ids of a tenant's runs a query selects, at most
// limit of them (the run query language of ListRuns).
type SelectFunc func(ctx context.Context, tenant, query string, limit int) ([]string, error)

// Config configures Batches.
type Config struct {
	// Store holds the batches; it must support conditional batches.
	Store store.Store
	// Runs acts on each run.
	Runs Runs
	// Select resolves a query; nil refuses batches that select by one.
	Select SelectFunc
	// Clock defaults to engine.SystemClock.
	Clock engine.Clock
	// Logger receives a line per batch taken over or ended, never a payload.
	Logger *slog.Logger
	// Owner names this process in the records it drives (default a fresh UUID).
	Owner string
	// LeaseTTL is how long a batch stays this process's without a write
	// (default 10s); another weftd takes it over after that.
	LeaseTTL time.Duration
	// Interval is how often Run looks for batches to drive (default 200ms).
	Interval time.Duration
}

// WithDefaults answers the config with every unset field given its default.
func (c Config) WithDefaults() Config {
	if c.Clock == nil {
		c.Clock = engine.SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Owner == "" {
		c.Owner = uuid.NewString()
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 10 * time.Second
	}
	if c.Interval == 0 {
		c.Interval = 200 * time.Millisecond
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("batch: a store is required")
	case c.Runs == nil:
		return errors.New("batch: the engine (Runs) is required")
	case !c.Store.Capabilities().ConditionalBatch:
		return &engine.Error{Code: engine.CodeCapabilityUnavailable, Capability: "conditionalBatch",
			Message: "batches need a store with conditional batches; " + c.Store.Capabilities().Backend + " has none"}
	case c.LeaseTTL < 100*time.Millisecond:
		return fmt.Errorf("batch lease TTL must be at least 100ms, got %s", c.LeaseTTL)
	case c.Interval < 10*time.Millisecond:
		return fmt.Errorf("batch interval must be at least 10ms, got %s", c.Interval)
	}
	return nil
}

// Batches stores batches, serves their API and drives them. Every weftd
// runs one over the shared store (see the package doc).
type Batches struct {
	cfg   Config
	store store.Store
	runs  Runs
	log   *slog.Logger
	// wake starts a drive round at once (a batch just started).
	wake chan struct{}
}

// New builds Batches; it fails on a store without conditional batches.
func New(cfg Config) (*Batches, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Batches{cfg: cfg, store: cfg.Store, runs: cfg.Runs, log: cfg.Logger, wake: make(chan struct{}, 1)}, nil
}

// now answers the time in UTC, to the millisecond.
func (b *Batches) now() time.Time { return b.cfg.Clock.Now().UTC().Truncate(time.Millisecond) }

// kick asks Run for a round now.
func (b *Batches) kick() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
