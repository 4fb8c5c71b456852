package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/internal/redisconn"
)

// Run measures the ceilings and Weft as cfg says and answers the report. It
// fails on the first workflow that does not complete. Whatever it started —
// weftd processes, scratch schemas, temporary directories — is gone when it
// returns.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "weftbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if cfg.has(Cluster) {
		if err := pingRedis(ctx, cfg.RedisURL); err != nil {
			return nil, err
		}
	}
	r := &Report{StartedAt: time.Now().UTC(), Weftd: cfg.Weftd, Workflows: cfg.Workflows, Steps: cfg.Steps,
		Warmup: cfg.Warmup, Workers: cfg.Workers, WorkerSlots: cfg.WorkerSlots,
		Machine: Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}}
	steal := startSteal()
	if r.Weftd == "" {
		cfg.Logger.Info("building weftd")
		if cfg.Weftd, err = buildWeftd(ctx, tmp); err != nil {
			return nil, err
		}
		r.Weftd = "built from this module's working tree (" + weftdPackage + ")"
	}
	if err := r.measureEndToEnd(ctx, cfg, tmp); err != nil {
		return nil, err
	}
	if cfg.Scale != nil {
		if err := r.runScale(ctx, cfg, tmp); err != nil {
			return nil, err
		}
	}
	r.Machine.StealPct, r.Machine.BusyPct = steal()
	r.Targets = judge(r)
	return r, nil
}

// measureEndToEnd measures the ceilings, then every configuration at every
// concurrency (nothing when the scale targets are measured alone).
func (r *Report) measureEndToEnd(ctx context.Context, cfg Config, tmp string) error {
	if cfg.scaleOnly() {
		return nil
	}
	if err := r.measureCeilings(ctx, cfg, tmp); err != nil {
		return err
	}
	for _, name := range cfg.Configs {
		for _, c := range cfg.Clients {
			m, err := measure(ctx, cfg, name, c, tmp)
			if err != nil {
				return fmt.Errorf("%s configuration, C=%d: %w", name, c, err)
			}
			m.Ceiling = r.matchCeiling(name, c)
			if m.Ceiling != nil && m.Ceiling.CommitsPerSec > 0 {
				m.StepsPerCommit = m.StepsSec / m.Ceiling.CommitsPerSec
			}
			r.Measurements = append(r.Measurements, m)
		}
		if cfg.NoFlow {
			continue
		}
		if err := r.measureFlow(ctx, cfg, name, tmp); err != nil {
			return err
		}
		if err := r.measureFanOut(ctx, cfg, name, tmp); err != nil {
			return err
		}
	}
	return nil
}

// measureFlow measures the configuration again at its highest concurrency
// with flow control on every step, for the cost of a concurrency key and a
// throttle per step beside none (docs/performance.md).
func (r *Report) measureFlow(ctx context.Context, cfg Config, name, tmp string) error {
	c := slices.Max(cfg.Clients)
	cfg.flow = true
	m, err := measure(ctx, cfg, name, c, tmp)
	if err != nil {
		return fmt.Errorf("%s configuration with flow control, C=%d: %w", name, c, err)
	}
	m.FlowControl = true
	m.Ceiling = r.matchCeiling(name, c)
	if m.Ceiling != nil && m.Ceiling.CommitsPerSec > 0 {
		m.StepsPerCommit = m.StepsSec / m.Ceiling.CommitsPerSec
	}
	r.Measurements = append(r.Measurements, m)
	return nil
}

func (r *Report) measureCeilings(ctx context.Context, cfg Config, tmp string) error {
	if cfg.has(Cluster) {
		cfg.Logger.Info("measuring the PostgreSQL ceiling")
		cs, err := postgresCeilings(ctx, cfg)
		if err != nil {
			return err
		}
		r.Ceilings = append(r.Ceilings, cs...)
	}
	cfg.Logger.Info("measuring the Pebble ceiling")
	cs, err := pebbleCeilings(ctx, cfg, filepath.Join(tmp, "pebble-ceiling"))
	if err != nil {
		return err
	}
	r.Ceilings = append(r.Ceilings, cs...)
	return nil
}

// matchCeiling answers the ceiling of the configuration's database with the
// fewest committers at least c (else the most): C=1 meets 1, C=16 meets 32.
func (r *Report) matchCeiling(config string, c int) *Ceiling {
	backend := "pebble"
	if config == Cluster {
		backend = "postgresql"
	}
	var best *Ceiling
	for i := range r.Ceilings {
		x := &r.Ceilings[i]
		if x.Backend != backend {
			continue
		}
		switch {
		case best == nil:
			best = x
		case best.Conns < c && x.Conns > best.Conns:
			best = x
		case x.Conns >= c && x.Conns < best.Conns:
			best = x
		}
	}
	return best
}

// measure runs one configuration at concurrency c on a fresh weftd.
func measure(ctx context.Context, cfg Config, name string, c int, tmp string) (Measurement, error) {
	log := cfg.Logger.With(slog.String("config", name), slog.Int("clients", c))
	st, err := newSite(ctx, cfg, name, filepath.Join(tmp, fmt.Sprintf("embedded-c%d", c)))
	if err != nil {
		return Measurement{}, err
	}
	defer st.cleanup()
	d, err := startWeftd(ctx, cfg.Weftd, st.args...)
	if err != nil {
		return Measurement{}, err
	}
	defer d.stop()
	return measureOn(ctx, cfg, d, name, c, cfg.Workflows, nil, log)
}

// measureOn runs the workload — warm-up, then w timed workflows from c
// clients — on a running weftd, with the harness's workers. atStart, when
// set, is called as the timed part starts and answers a function called as
// it ends.
func measureOn(ctx context.Context, cfg Config, d *weftd, name string, c, w int, atStart func() func(), log *slog.Logger) (Measurement, error) {
	cfg.Workflows = w
	wl := &workload{cfg: cfg, client: client.New(d.url), prefix: newTag(), flow: cfg.flow}
	stopWorkers := wl.startWorkers()
	m, err := timed(ctx, wl, d, c, atStart, log)
	if werr := stopWorkers(); werr != nil && err == nil {
		err = fmt.Errorf("workers: %w", werr)
	}
	if err == nil {
		err = d.exited()
	}
	if err != nil {
		return Measurement{}, err
	}
	m.Config = name
	return m, nil
}

// timed runs the warm-up, then the timed workflows, reading weftd's CPU time
// around them.
func timed(ctx context.Context, w *workload, d *weftd, c int, atStart func() func(), log *slog.Logger) (Measurement, error) {
	if w.cfg.Warmup > 0 {
		log.Info("warming up", slog.Int("workflows", w.cfg.Warmup))
		if _, _, _, err := w.drive(ctx, "warmup", w.cfg.Warmup, c); err != nil {
			return Measurement{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	pid := d.cmd.Process.Pid
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return Measurement{}, err
	}
	harness0, err := cpuSeconds(os.Getpid())
	if err != nil {
		return Measurement{}, err
	}
	services0 := commandsCPUSeconds(serviceCommands)
	log.Info("measuring", slog.Int("workflows", w.cfg.Workflows), slog.Int("steps", w.cfg.Steps))
	atEnd := func() {}
	if atStart != nil {
		atEnd = atStart()
	}
	latencies, server, elapsed, err := w.drive(ctx, "timed", w.cfg.Workflows, c)
	if err != nil {
		atEnd()
		return Measurement{}, err
	}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		atEnd()
		return Measurement{}, err
	}
	harness1, err := cpuSeconds(os.Getpid())
	if err != nil {
		atEnd()
		return Measurement{}, err
	}
	services1 := commandsCPUSeconds(serviceCommands)
	rss, err := peakRSSMB(pid)
	atEnd() // after the readings: a profile may outlast the workload
	if err != nil {
		return Measurement{}, err
	}
	steps := w.cfg.Workflows * w.cfg.Steps
	return Measurement{Clients: c, Workflows: w.cfg.Workflows, Steps: w.cfg.Steps, Seconds: elapsed.Seconds(),
		WorkflowsSec: perSecond(w.cfg.Workflows, elapsed), StepsSec: perSecond(steps, elapsed),
		Latency: summarise(latencies), ServerLatency: summarise(server), WeftdCPUSeconds: cpu1 - cpu0, CPUMsPerStep: (cpu1 - cpu0) * 1000 / float64(steps),
		HarnessCPUMsPerStep: (harness1 - harness0) * 1000 / float64(steps), ServicesCPUMsPerStep: (services1 - services0) * 1000 / float64(steps),
		WeftdPeakRSSMB: rss}, nil
}

// site is where one weftd keeps its store: a data directory (embedded) or a
// scratch schema (cluster).
type site struct {
	// args are weftd's flags for it.
	args []string
	// location is the data directory or the store URL, for opening the
	// store in this process while weftd is stopped.
	location string
	// cleanup removes it.
	cleanup func()
}

// newSite prepares a fresh site for a configuration: dir (embedded) or a
// new scratch schema (cluster).
func newSite(ctx context.Context, cfg Config, name, dir string) (*site, error) {
	if name == Embedded {
		return &site{args: []string{"--store", "pebble", "--data-dir", dir}, location: dir,
			cleanup: func() { _ = os.RemoveAll(dir) }}, nil
	}
	admin, err := connectPostgres(ctx, cfg.PostgresURL)
	if err != nil {
		return nil, err
	}
	schema, drop, err := scratchSchema(ctx, admin)
	if err != nil {
		admin.Close()
		return nil, err
	}
	u, err := url.Parse(cfg.PostgresURL)
	if err != nil {
		drop()
		admin.Close()
		return nil, fmt.Errorf("parse the PostgreSQL URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return &site{args: []string{"--store", u.String(), "--redis", cfg.RedisURL, "--ownership", "cas-required"},
		location: u.String(), cleanup: func() { drop(); admin.Close() }}, nil
}

func pingRedis(ctx context.Context, raw string) error {
	rdb, err := redisconn.Open(raw)
	if err != nil {
		return err
	}
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return errors.Join(errors.New("Redis is not reachable (set WEFT_BENCH_REDIS, or measure only the embedded configuration)"), err)
	}
	return nil
}

// newTag answers a short random prefix for this measurement's request ids.
func newTag() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "bench-" + hex.EncodeToString(b[:])
}
