package bench

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/weft-dev/weft/internal/redisconn"
)

// Configuration names.
const (
	// Cluster is weftd on PostgreSQL, cas-required, with Redis leases.
	Cluster = "cluster"
	// Embedded is weftd on Pebble in a temporary directory.
	Embedded = "embedded"
)

// Defaults.
const (
	DefaultWorkflows       = 2000
	DefaultSteps           = 5
	DefaultPostgresURL     = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultRedisURL        = redisconn.DefaultURL
	DefaultCeilingDuration = 5 * time.Second
	DefaultRunTimeout      = 2 * time.Minute
	DefaultWorkers         = 4
	DefaultWorkerSlots     = 16
)

// DefaultClients are the submitter concurrencies measured.
var DefaultClients = []int{1, 16}

// DefaultCeilingConns are the committer concurrencies of the ceilings.
var DefaultCeilingConns = []int{1, 32}

// Config says what to measure. Zero fields take defaults (WithDefaults).
type Config struct {
	// Workflows (W) and Steps (S): each configuration runs W workflows of S
	// sequential no-op steps.
	Workflows, Steps int
	// Clients (C) are the submitter concurrencies, one measurement each.
	Clients []int
	// Configs are the weftd configurations measured: Cluster, Embedded or both.
	Configs []string
	// CeilingConns are the concurrencies of the raw-commit ceilings.
	CeilingConns []int
	// CeilingDuration is how long each ceiling measurement commits.
	CeilingDuration time.Duration
	// Warmup workflows run before each timed measurement, untimed (default
	// W/20, at most 50; negative: none).
	Warmup int
	// Workers run the no-op activity, each with WorkerSlots tasks in flight.
	Workers, WorkerSlots int
	// NoFlow skips the flow-control measurement that follows each
	// configuration's plain ones. Its runs go to the same database (another
	// scratch schema), so a counter read over the database's life — rows
	// written per step, as a paired run reads them — counts both unless it
	// is skipped.
	NoFlow bool
	// RunTimeout bounds one workflow from submit to COMPLETED.
	RunTimeout time.Duration
	// PostgresURL is the database of the cluster configuration and its
	// ceiling; scratch schemas are created in it and dropped afterwards.
	PostgresURL string
	// RedisURL is the cluster configuration's lease service.
	RedisURL string
	// Weftd is a weftd binary; empty: built with `go build` from this module.
	Weftd string
	// Scale, when set, also measures issue 8's scale targets: the workload
	// with many completed runs stored, and weftd's memory with many active
	// runs (ScaleConfig; slow, so never by default).
	Scale *ScaleConfig
	// Logger receives progress lines (default: discard).
	Logger *slog.Logger
	// flow: the measurement's steps have flow control (measureFlow).
	flow bool
}

// WithDefaults answers c with unset fields defaulted.
func (c Config) WithDefaults() Config {
	if c.Workflows == 0 {
		c.Workflows = DefaultWorkflows
	}
	if c.Steps == 0 {
		c.Steps = DefaultSteps
	}
	if len(c.Clients) == 0 {
		c.Clients = DefaultClients
	}
	if len(c.Configs) == 0 {
		c.Configs = []string{Cluster, Embedded}
	}
	if len(c.CeilingConns) == 0 {
		c.CeilingConns = DefaultCeilingConns
	}
	if c.CeilingDuration == 0 {
		c.CeilingDuration = DefaultCeilingDuration
	}
	if c.Warmup == 0 {
		c.Warmup = min(c.Workflows/20, 50)
	}
	c.Warmup = max(c.Warmup, 0)
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.WorkerSlots == 0 {
		c.WorkerSlots = DefaultWorkerSlots
	}
	if c.RunTimeout == 0 {
		c.RunTimeout = DefaultRunTimeout
	}
	if c.PostgresURL == "" {
		c.PostgresURL = DefaultPostgresURL
	}
	if c.RedisURL == "" {
		c.RedisURL = DefaultRedisURL
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Scale != nil {
		s := c.Scale.WithDefaults(c.Workflows)
		c.Scale = &s
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Workflows < 1:
		return fmt.Errorf("workflows must be at least 1, got %d", c.Workflows)
	case c.Steps < 1:
		return fmt.Errorf("steps must be at least 1, got %d", c.Steps)
	case c.CeilingDuration < 10*time.Millisecond:
		return fmt.Errorf("ceiling duration must be at least 10ms, got %s", c.CeilingDuration)
	case c.Workers < 1 || c.WorkerSlots < 1:
		return fmt.Errorf("workers and worker slots must be at least 1, got %d and %d", c.Workers, c.WorkerSlots)
	case c.RunTimeout < time.Second:
		return fmt.Errorf("run timeout must be at least 1s, got %s", c.RunTimeout)
	}
	for _, n := range append(append([]int(nil), c.Clients...), c.CeilingConns...) {
		if n < 1 {
			return fmt.Errorf("client and ceiling concurrencies must be at least 1, got %d", n)
		}
	}
	if c.Scale != nil {
		if err := c.Scale.validate(); err != nil {
			return err
		}
	}
	if len(c.Configs) == 0 && c.Scale == nil {
		return errors.New("no configuration to measure")
	}
	for _, name := range c.Configs {
		if name != Cluster && name != Embedded {
			return fmt.Errorf("configuration must be %q or %q, got %q", Cluster, Embedded, name)
		}
	}
	return nil
}

// has reports whether c measures the named configuration, end to end or
// at scale.
func (c Config) has(name string) bool {
	return (!c.scaleOnly() && slices.Contains(c.Configs, name)) || (c.Scale != nil && slices.Contains(c.Scale.Configs, name))
}

// scaleOnly reports whether c measures the scale targets alone.
func (c Config) scaleOnly() bool { return c.Scale != nil && c.Scale.Only }
