package bench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/engine/keyspace"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/store"
)

// The active workflow's first step runs an activity on a queue no worker
// polls, so its runs stay RUNNING with that step SCHEDULED; its other steps
// are the workload's.
const (
	unservedActivity = "bench.unserved"
	unservedQueue    = "bench-unserved"
	neverSignal      = "bench.never"
)

// Phase names of an active-runs measurement.
const (
	PhaseSubmitted          = "submitted"
	PhaseSettled            = "settled"
	PhaseWorkload           = "workload"
	PhaseRestartedSettled   = "restarted, settled"
	PhaseRestartedWorkload  = "restarted, workload"
	activeSubmitTimeout     = time.Minute
	activeProgressInterval  = 30 * time.Second
	activeVerifySampleEvery = 10_000
)

// ActiveMeasurement is weftd's memory with many active runs.
type ActiveMeasurement struct {
	Config string `json:"config"`
	// ActiveRuns were submitted through the API by Submitters clients in
	// SubmitSeconds; Counted is how many the store's status index holds as
	// RUNNING or BLOCKED afterwards (read with weftd stopped). TimerSeconds
	// is ScaleConfig.ActiveTimer (0: none).
	ActiveRuns    int     `json:"active_runs"`
	TimerSeconds  float64 `json:"timer_seconds,omitempty"`
	Submitters    int     `json:"submitters"`
	SubmitSeconds float64 `json:"submit_seconds"`
	SubmitPerSec  float64 `json:"submits_per_sec"`
	Counted       int     `json:"counted_running"`
	// Phases are read in order: after the submissions, after Settle of
	// background loops, after the workload on top; then the same on a
	// weftd restarted over the same store.
	Phases []Phase `json:"phases"`
}

// Phase is weftd's memory and CPU at the end of one phase.
type Phase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// RSSMiB is VmRSS at the phase's end; PeakRSSMiB is VmHWM, the peak
	// since the process started.
	RSSMiB     float64 `json:"rss_mib"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	// CPUSeconds is weftd's CPU time during the phase.
	CPUSeconds float64 `json:"cpu_seconds"`
	// Goroutines is weftd's goroutine count at the phase's end, when its
	// pprof endpoint is on (0 otherwise).
	Goroutines int `json:"goroutines,omitempty"`
	// Workload is the workload measured in the phase, if any.
	Workload *Measurement `json:"workload,omitempty"`
	// Profile is the CPU profile of the workload, HeapProfile weftd's heap
	// at the phase's end, when profiles were asked for.
	Profile     string `json:"cpu_profile,omitempty"`
	HeapProfile string `json:"heap_profile,omitempty"`
}

// PeakRSSMiB answers the highest VmHWM of every phase.
func (a *ActiveMeasurement) PeakRSSMiB() float64 {
	peak := 0.0
	for _, p := range a.Phases {
		peak = max(peak, p.PeakRSSMiB)
	}
	return peak
}

// measureActive submits the active runs to a weftd on a fresh site through
// the API and reads its memory over the phases.
func measureActive(ctx context.Context, cfg Config, name, tmp string, log *slog.Logger) (*ActiveMeasurement, error) {
	st, err := newSite(ctx, cfg, name, filepath.Join(tmp, "scale-active-"+name))
	if err != nil {
		return nil, err
	}
	defer st.cleanup()
	a := &ActiveMeasurement{Config: name, Submitters: cfg.Scale.Submitters, TimerSeconds: cfg.Scale.ActiveTimer.Seconds()}
	for _, restarted := range []bool{false, true} {
		if err := a.run(ctx, cfg, st, restarted, log); err != nil {
			return nil, err
		}
	}
	s, err := openSite(ctx, name, st)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for _, status := range []string{"RUNNING", "BLOCKED"} {
		n, err := countKeys(ctx, s, keyspace.RunStatus.KeyPrefix(status))
		if err != nil {
			return nil, err
		}
		a.Counted += n
	}
	if a.Counted < a.ActiveRuns {
		return nil, fmt.Errorf("the status index holds %d RUNNING or BLOCKED runs after %d active ones were submitted", a.Counted, a.ActiveRuns)
	}
	return a, nil
}

// run is one weftd's life over the site: submit (the first time), settle,
// workload.
func (a *ActiveMeasurement) run(ctx context.Context, cfg Config, st *site, restarted bool, log *slog.Logger) error {
	d, debug, err := startScaleWeftd(ctx, cfg, st)
	if err != nil {
		return err
	}
	defer d.stop()
	if err := a.life(ctx, cfg, d, debug, restarted, log); err != nil {
		return fmt.Errorf("%w\nweftd's log ends:\n%s", err, d.logs.String())
	}
	return nil
}

// life is run's phases on a running weftd.
func (a *ActiveMeasurement) life(ctx context.Context, cfg Config, d *weftd, debug string, restarted bool, log *slog.Logger) error {
	settled, workload, life := PhaseSettled, PhaseWorkload, "first"
	if restarted {
		settled, workload, life = PhaseRestartedSettled, PhaseRestartedWorkload, "restarted"
	} else {
		if err := a.phase(cfg, d, debug, PhaseSubmitted, func() (*Measurement, error) { return nil, a.submit(ctx, cfg, d, log) }); err != nil {
			return err
		}
	}
	log.Info("settling", slog.String("phase", settled), slog.Duration("for", cfg.Scale.Settle))
	if err := a.phase(cfg, d, debug, settled, func() (*Measurement, error) { return nil, sleep(ctx, d, cfg.Scale.Settle) }); err != nil {
		return err
	}
	var profile *string
	err := a.phase(cfg, d, debug, workload, func() (*Measurement, error) {
		var atStart func() func()
		atStart, profile = profiler(cfg, debug, fmt.Sprintf("%s-active-%d-%s", a.Config, a.ActiveRuns, life), log)
		m, err := measureOn(ctx, cfg, d, a.Config, cfg.Scale.Clients, cfg.Scale.Workflows, atStart, log)
		return &m, err
	})
	if err == nil && profile != nil && *profile != "" {
		a.Phases[len(a.Phases)-1].Profile = *profile
	}
	return err
}

// phase runs fn and records weftd's memory and CPU at its end (and its
// heap profile, when profiles are asked for).
func (a *ActiveMeasurement) phase(cfg Config, d *weftd, debug, name string, fn func() (*Measurement, error)) error {
	pid := d.cmd.Process.Pid
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	start := time.Now()
	m, err := fn()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p := Phase{Name: name, Seconds: time.Since(start).Seconds(), Workload: m}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	p.CPUSeconds = cpu1 - cpu0
	if p.RSSMiB, p.PeakRSSMiB, err = memoryMB(pid); err != nil {
		return err
	}
	if debug != "" {
		p.Goroutines = goroutines(debug)
		path := filepath.Join(cfg.Scale.ProfileDir, fmt.Sprintf("%s-active-%d-%s.heap.pprof", a.Config, a.ActiveRuns, strings.ReplaceAll(strings.ReplaceAll(name, ",", ""), " ", "-")))
		if err := fetchPprof(debug, "heap", path); err == nil {
			p.HeapProfile = path
		}
	}
	a.Phases = append(a.Phases, p)
	return nil
}

// sleep waits d, or until ctx ends or weftd exits.
func sleep(ctx context.Context, w *weftd, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
		return w.exited()
	case <-time.After(d):
		return nil
	}
}

// activeDefinition is the workload's definition with its first step moved
// to the activity no worker runs — after a wait for a signal that never
// comes, with ActiveTimer.
func activeDefinition(cfg Config) *weftv1.WorkflowDefinition {
	def := (&workload{cfg: cfg}).definition()
	def.PlanId = "bench-active"
	def.Actions[0].Activity, def.Actions[0].Queue = unservedActivity, unservedQueue
	if t := cfg.Scale.ActiveTimer; t > 0 {
		ms := uint32(t.Milliseconds())
		for _, a := range def.Actions {
			a.Order++
		}
		wait := &weftv1.Action{Id: "wait", Order: 1, OnFailure: weftv1.OnFailure_ON_FAILURE_SKIP,
			WaitForSignal: &weftv1.WaitForSignal{SignalName: neverSignal, TimeoutMs: &ms}}
		def.Actions = append([]*weftv1.Action{wait}, def.Actions...)
	}
	return def
}

// submit submits the active runs from cfg.Scale.Submitters clients, and
// checks a sample of them is RUNNING with its first step SCHEDULED.
func (a *ActiveMeasurement) submit(ctx context.Context, cfg Config, d *weftd, log *slog.Logger) error {
	n := cfg.Scale.Active
	c := client.New(d.url)
	def := activeDefinition(cfg)
	tag := newTag()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next, done atomic.Int64
	var mu sync.Mutex
	var samples []string
	start := time.Now()
	stopProgress := progress(log, "submitting active runs", n, &done)
	defer stopProgress()
	var wg sync.WaitGroup
	for range min(cfg.Scale.Submitters, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				runID, err := submitActive(ctx, c, def, tag+"-active-"+strconv.Itoa(i))
				if err != nil {
					cancel(err)
					return
				}
				if i%activeVerifySampleEvery == 0 || i == n-1 {
					mu.Lock()
					samples = append(samples, runID)
					mu.Unlock()
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	elapsed := time.Since(start)
	a.ActiveRuns, a.SubmitSeconds, a.SubmitPerSec = n, elapsed.Seconds(), perSecond(n, elapsed)
	return checkActive(ctx, c, samples, cfg.Scale.ActiveTimer > 0)
}

func submitActive(ctx context.Context, c *client.Client, def *weftv1.WorkflowDefinition, requestID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, activeSubmitTimeout)
	defer cancel()
	res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Definition: def, Start: true, RunRequestId: requestID})
	if err != nil {
		return "", fmt.Errorf("submit active run %s: %w", requestID, err)
	}
	return res.GetRun().GetRunId(), nil
}

// checkActive checks that sampled runs are active: RUNNING with their
// first step SCHEDULED (waiting for the worker that never comes) or, with
// the timer, BLOCKED on the signal wait or already past it.
func checkActive(ctx context.Context, c *client.Client, runIDs []string, timer bool) error {
	for _, id := range runIDs {
		run, err := c.GetRun(ctx, id)
		if err != nil {
			return fmt.Errorf("GetRun %s: %w", id, err)
		}
		status, first := run.GetStatus(), weftv1.StepStatus_STEP_STATUS_UNSPECIFIED
		if len(run.GetSteps()) > 0 {
			first = run.GetSteps()[0].GetStatus()
		}
		ok := status == weftv1.RunStatus_RUN_STATUS_RUNNING && first == weftv1.StepStatus_STEP_STATUS_SCHEDULED
		if timer {
			ok = status == weftv1.RunStatus_RUN_STATUS_BLOCKED && first == weftv1.StepStatus_STEP_STATUS_WAITING_FOR_SIGNAL ||
				status == weftv1.RunStatus_RUN_STATUS_RUNNING
		}
		if !ok {
			return fmt.Errorf("active run %s is %s with its first step %s: not active as submitted", id, status, first)
		}
	}
	return nil
}

// progress logs done of total every activeProgressInterval until stopped.
func progress(log *slog.Logger, msg string, total int, done *atomic.Int64) (stop func()) {
	t := time.NewTicker(activeProgressInterval)
	quit := make(chan struct{})
	start := time.Now()
	go func() {
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				log.Info(msg, slog.Int64("done", done.Load()), slog.Int("of", total), slog.Duration("elapsed", time.Since(start).Round(time.Second)))
			}
		}
	}()
	return func() { t.Stop(); close(quit) }
}

// countKeys counts the keys under prefix.
func countKeys(ctx context.Context, s store.Store, prefix []byte) (int, error) {
	n := 0
	var after []byte
	for {
		res, err := s.Scan(ctx, &store.ScanParams{Prefix: prefix, After: after, Limit: store.MaxScanLimit})
		if err != nil {
			return 0, err
		}
		n += len(res.Items)
		if res.Next == nil {
			return n, nil
		}
		after = res.Next
	}
}
