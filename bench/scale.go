package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore"
)

// Scale defaults.
const (
	DefaultScaleActive     = 100_000
	DefaultScaleClients    = 16
	DefaultScaleSettle     = time.Minute
	DefaultScaleSubmitters = 32
	DefaultScaleRounds     = 3
	// DefaultScaleProfileSeconds is how long each CPU profile samples.
	DefaultScaleProfileSeconds = 15
)

// DefaultScaleStored are the stored-run counts measured by default.
var DefaultScaleStored = []int{10_000, 100_000, 1_000_000}

// ScaleConfig says what the scale mode measures (issue 8's "cost per step
// flat between 10k and 1M stored runs" and "weftd RSS with 100k active
// runs"). Zero fields take defaults.
type ScaleConfig struct {
	// Configs are the configurations measured at scale (default: embedded).
	Configs []string
	// Stored are the completed-run counts at which the workload is measured,
	// in ascending order; the store is filled up to each in turn (0 measures
	// the store as the template left it: empty but for the template).
	Stored []int
	// Active is the number of runs kept active, submitted through the API
	// by Submitters concurrent clients.
	Active, Submitters int
	// ActiveTimer, when set, puts a first step before the active runs'
	// unserved one that waits this long for a signal that never comes
	// (on_failure skip): each run's timer then fires once in weftd's
	// background loop, which drives the run. Settle should outlast it.
	ActiveTimer time.Duration
	// Clients (C) and Workflows (W) are the workload measured at each size
	// (defaults: 16, and Config.Workflows), Rounds times over on the same
	// weftd (default 3; the round with the median CPU per step stands for
	// the size, so that one disturbed round does not).
	Clients, Workflows, Rounds int
	// Settle is how long weftd runs its background loops over the active
	// runs before its memory is read.
	Settle time.Duration
	// ProfileDir, when set, receives a CPU profile of weftd (its pprof
	// endpoint, --debug-addr) taken during each timed workload, sampling
	// for ProfileSeconds.
	ProfileDir     string
	ProfileSeconds int
	// SkipActive and SkipStored leave one half out.
	SkipActive, SkipStored bool
	// Only measures the scale targets alone: no ceilings and no end-to-end
	// measurement of Config.Configs.
	Only bool
}

// WithDefaults answers s with unset fields defaulted; workflows is
// Config.Workflows.
func (s ScaleConfig) WithDefaults(workflows int) ScaleConfig {
	if len(s.Configs) == 0 {
		s.Configs = []string{Embedded}
	}
	if len(s.Stored) == 0 && !s.SkipStored {
		s.Stored = DefaultScaleStored
	}
	if s.Active == 0 && !s.SkipActive {
		s.Active = DefaultScaleActive
	}
	if s.Submitters == 0 {
		s.Submitters = DefaultScaleSubmitters
	}
	if s.Clients == 0 {
		s.Clients = DefaultScaleClients
	}
	if s.Workflows == 0 {
		s.Workflows = workflows
	}
	if s.Rounds == 0 {
		s.Rounds = DefaultScaleRounds
	}
	if s.Settle == 0 {
		s.Settle = DefaultScaleSettle
	}
	if s.ProfileSeconds == 0 {
		s.ProfileSeconds = DefaultScaleProfileSeconds
	}
	return s
}

func (s ScaleConfig) validate() error {
	for _, name := range s.Configs {
		if name != Cluster && name != Embedded {
			return fmt.Errorf("scale configuration must be %q or %q, got %q", Cluster, Embedded, name)
		}
	}
	if !slices.IsSorted(s.Stored) || (len(s.Stored) > 0 && s.Stored[0] < 0) {
		return fmt.Errorf("stored-run counts must be ascending and not negative, got %v", s.Stored)
	}
	switch {
	case s.Active < 0:
		return fmt.Errorf("active runs must not be negative, got %d", s.Active)
	case s.Submitters < 1 || s.Clients < 1 || s.Workflows < 1 || s.Rounds < 1:
		return fmt.Errorf("submitters, clients, workflows and rounds must be at least 1, got %d, %d, %d and %d",
			s.Submitters, s.Clients, s.Workflows, s.Rounds)
	case s.ActiveTimer < 0 || (s.ActiveTimer > 0 && s.ActiveTimer < time.Millisecond):
		return fmt.Errorf("active timer must be 0 (none) or at least 1ms, got %s", s.ActiveTimer)
	case s.Settle < 0:
		return fmt.Errorf("settle must not be negative, got %s", s.Settle)
	case s.ProfileSeconds < 1:
		return fmt.Errorf("profile seconds must be at least 1, got %d", s.ProfileSeconds)
	}
	return nil
}

// runScale measures the scale targets for every configuration of cfg.Scale.
func (r *Report) runScale(ctx context.Context, cfg Config, tmp string) error {
	s := cfg.Scale
	r.Scale = &ScaleReport{Clients: s.Clients, Workflows: s.Workflows, Rounds: s.Rounds, Steps: cfg.Steps, Settle: s.Settle.Seconds()}
	for _, name := range s.Configs {
		log := cfg.Logger.With(slog.String("scale", name))
		if !s.SkipStored && len(s.Stored) > 0 {
			ms, err := measureStored(ctx, cfg, name, tmp, log)
			if err != nil {
				return fmt.Errorf("scale, %s configuration, stored runs: %w", name, err)
			}
			r.Scale.Stored = append(r.Scale.Stored, ms...)
		}
		if !s.SkipActive && s.Active > 0 {
			m, err := measureActive(ctx, cfg, name, tmp, log)
			if err != nil {
				return fmt.Errorf("scale, %s configuration, active runs: %w", name, err)
			}
			r.Scale.Active = append(r.Scale.Active, *m)
		}
	}
	return nil
}

// openSite opens a site's store in this process; its weftd must be stopped.
func openSite(ctx context.Context, name string, st *site) (store.Store, error) {
	if name == Embedded {
		return pebblestore.Open(st.location, pebblestore.Config{})
	}
	return sqlstore.Open(ctx, sqlstore.Config{URL: st.location})
}

// startScaleWeftd starts weftd on a site, with its pprof endpoint when
// profiles are asked for.
func startScaleWeftd(ctx context.Context, cfg Config, st *site) (*weftd, string, error) {
	args := st.args
	debug := ""
	if cfg.Scale.ProfileDir != "" {
		addr, err := freeAddr()
		if err != nil {
			return nil, "", err
		}
		debug = addr
		args = append(slices.Clone(args), "--debug-addr", addr)
	}
	d, err := startWeftd(ctx, cfg.Weftd, args...)
	return d, debug, err
}

// profiler answers an atStart hook for measureOn that samples weftd's CPU
// for ProfileSeconds into the profile directory under name, or nil.
func profiler(cfg Config, debugAddr, name string, log *slog.Logger) (atStart func() func(), path *string) {
	if debugAddr == "" {
		return nil, nil
	}
	out := filepath.Join(cfg.Scale.ProfileDir, name+".pprof")
	path = new(string)
	return func() func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := fetchPprof(debugAddr, fmt.Sprintf("profile?seconds=%d", cfg.Scale.ProfileSeconds), out); err != nil {
				log.Warn("CPU profile", slog.String("error", err.Error()))
				return
			}
			*path = out
		}()
		return func() { <-done }
	}, path
}

// fetchPprof saves one of weftd's pprof profiles (e.g. "heap", or
// "profile?seconds=15" for CPU) to path.
func fetchPprof(addr, profile, path string) error {
	c := &http.Client{Timeout: 5 * time.Minute}
	res, err := c.Get(fmt.Sprintf("http://%s/debug/pprof/%s", addr, profile))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof answered %s", res.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.ReadFrom(res.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// goroutines answers weftd's goroutine count from its pprof endpoint, or 0.
func goroutines(addr string) int {
	c := &http.Client{Timeout: 30 * time.Second}
	res, err := c.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	var n int
	if _, err := fmt.Fscanf(res.Body, "goroutine profile: total %d", &n); err != nil {
		return 0
	}
	return n
}

// quiesce waits until weftd's CPU use over a 2 s window falls under 5% of
// one CPU — a store that took a bulk fill may still be compacting, which
// is not the workload's cost — or until limit; it answers how long it
// waited.
func quiesce(ctx context.Context, d *weftd, limit time.Duration) (time.Duration, error) {
	const window, share = 2 * time.Second, 0.05
	start := time.Now()
	pid := d.cmd.Process.Pid
	prev, err := cpuSeconds(pid)
	if err != nil {
		return 0, err
	}
	for time.Since(start) < limit {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-d.done:
			return 0, d.exited()
		case <-time.After(window):
		}
		now, err := cpuSeconds(pid)
		if err != nil {
			return 0, err
		}
		if now-prev < share*window.Seconds() {
			return time.Since(start), nil
		}
		prev = now
	}
	return time.Since(start), nil
}

// dirMiB answers the size of the files under dir, in MiB (0 when unknown).
func dirMiB(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return float64(n) / (1 << 20)
}
