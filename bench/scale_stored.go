package bench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/weft-dev/weft/bench/fill"
	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// quiesceLimit bounds the wait for a freshly filled store to settle.
const quiesceLimit = 5 * time.Minute

// StoredMeasurement is the workload measured with a number of completed
// runs in the store.
type StoredMeasurement struct {
	Config string `json:"config"`
	// StoredRuns is how many completed runs the store held when the
	// workload started: clones, and the workflows of earlier measurements.
	StoredRuns int `json:"stored_runs"`
	// Filled clones were written before this measurement, in FillSeconds
	// (FillRecords records, FillMiB of keys and values).
	Filled      int     `json:"filled_runs"`
	FillSeconds float64 `json:"fill_seconds"`
	FillRecords int     `json:"fill_records"`
	FillMiB     float64 `json:"fill_mib"`
	// StoreMiB is the data directory's size after the fill (embedded; 0
	// otherwise).
	StoreMiB float64 `json:"store_mib"`
	// Verified clones were read back through weftd (GetRun, ListEvents, a
	// repeated SubmitRun) and matched what was written.
	Verified int `json:"verified_clones"`
	// StartSeconds is how long weftd took to answer /healthz over the
	// filled store.
	StartSeconds float64 `json:"start_seconds"`
	// QuiesceSeconds is how long weftd took to go idle after it started
	// (a filled store's compactions), before the workload.
	QuiesceSeconds float64 `json:"quiesce_seconds"`
	// Rounds are the workload's measurements, one per round; Workload is
	// the round with the median CPU per step.
	Rounds   []Measurement `json:"rounds"`
	Workload Measurement   `json:"workload"`
	// Profile is the CPU profile taken during it, if any.
	Profile string `json:"cpu_profile,omitempty"`
}

// measureStored fills a fresh site with completed runs up to each of
// cfg.Scale.Stored in turn, and measures the workload at each, on a weftd
// started over it.
func measureStored(ctx context.Context, cfg Config, name, tmp string, log *slog.Logger) ([]StoredMeasurement, error) {
	tmpl, err := makeTemplate(ctx, cfg, name, tmp, log)
	if err != nil {
		return nil, fmt.Errorf("template run: %w", err)
	}
	st, err := newSite(ctx, cfg, name, filepath.Join(tmp, "scale-stored-"+name))
	if err != nil {
		return nil, err
	}
	defer st.cleanup()
	stored := 0
	// Every fill is older than everything stored before it, so that a
	// fill's keys never interleave with earlier ones.
	oldest := time.Now().UTC().Truncate(time.Millisecond)
	var out []StoredMeasurement
	for _, n := range cfg.Scale.Stored {
		m := StoredMeasurement{Config: name}
		var samples []fill.Identity
		if need := n - stored; need > 0 {
			from := oldest.Add(-time.Duration(need) * fill.DefaultSpacing)
			res, err := fillSite(ctx, name, st, tmpl, need, from, log)
			if err != nil {
				return nil, err
			}
			m.Filled, m.FillSeconds, m.FillRecords = res.Runs, res.Elapsed.Seconds(), res.Records
			m.FillMiB = float64(res.Bytes) / (1 << 20)
			samples, oldest, stored = res.Samples, from, stored+need
		}
		if name == Embedded {
			m.StoreMiB = dirMiB(st.location)
		}
		m.StoredRuns = stored
		if err := m.measure(ctx, cfg, st, tmpl, samples, log); err != nil {
			return nil, fmt.Errorf("with %d stored runs: %w", stored, err)
		}
		stored += cfg.Warmup + cfg.Scale.Rounds*cfg.Scale.Workflows
		out = append(out, m)
	}
	return out, nil
}

// measure starts weftd over the filled site, checks the fill's samples
// through it, waits for it to go idle, and measures the workload.
func (m *StoredMeasurement) measure(ctx context.Context, cfg Config, st *site, tmpl *fill.Template, samples []fill.Identity, log *slog.Logger) error {
	start := time.Now()
	d, debug, err := startScaleWeftd(ctx, cfg, st)
	if err != nil {
		return err
	}
	defer d.stop()
	m.StartSeconds = time.Since(start).Seconds()
	if err := m.checkAndMeasure(ctx, cfg, d, debug, tmpl, samples, log); err != nil {
		return fmt.Errorf("%w\nweftd's log ends:\n%s", err, d.logs.String())
	}
	return nil
}

// checkAndMeasure is measure's work on a running weftd.
func (m *StoredMeasurement) checkAndMeasure(ctx context.Context, cfg Config, d *weftd, debug string, tmpl *fill.Template,
	samples []fill.Identity, log *slog.Logger) error {
	var err error
	wl := &workload{cfg: cfg, client: client.New(d.url)}
	if m.Verified, err = verifyClones(ctx, wl, tmpl, samples); err != nil {
		return fmt.Errorf("check the clones through weftd: %w", err)
	}
	q, err := quiesce(ctx, d, quiesceLimit)
	if err != nil {
		return err
	}
	m.QuiesceSeconds = q.Seconds()
	log.Info("measuring the workload", slog.Int("stored_runs", m.StoredRuns), slog.Duration("quiesced_in", q))
	for round := range cfg.Scale.Rounds {
		var atStart func() func()
		var profile *string
		if round == 0 {
			atStart, profile = profiler(cfg, debug, fmt.Sprintf("%s-stored-%d", m.Config, m.StoredRuns), log)
		} else {
			cfg.Warmup = -1 // warm once per weftd
		}
		wm, err := measureOn(ctx, cfg, d, m.Config, cfg.Scale.Clients, cfg.Scale.Workflows, atStart, log)
		if err != nil {
			return err
		}
		m.Rounds = append(m.Rounds, wm)
		if profile != nil {
			m.Profile = *profile
		}
	}
	m.Workload = medianRound(m.Rounds)
	return nil
}

// medianRound answers the round with the median CPU per step (the lower
// middle one of an even number).
func medianRound(rounds []Measurement) Measurement {
	sorted := slices.Clone(rounds)
	slices.SortFunc(sorted, func(a, b Measurement) int { return cmp.Compare(a.CPUMsPerStep, b.CPUMsPerStep) })
	return sorted[(len(sorted)-1)/2]
}

// cpuRange answers the lowest and highest CPU per step of the rounds.
func (m *StoredMeasurement) cpuRange() (lo, hi float64) {
	for i, r := range m.Rounds {
		if i == 0 || r.CPUMsPerStep < lo {
			lo = r.CPUMsPerStep
		}
		hi = max(hi, r.CPUMsPerStep)
	}
	return lo, hi
}

// makeTemplate runs one workflow of the workload's shape through a weftd on
// a fresh site, stops it, and captures the run's records.
func makeTemplate(ctx context.Context, cfg Config, name, tmp string, log *slog.Logger) (*fill.Template, error) {
	st, err := newSite(ctx, cfg, name, filepath.Join(tmp, "scale-template-"+name))
	if err != nil {
		return nil, err
	}
	defer st.cleanup()
	d, err := startWeftd(ctx, cfg.Weftd, st.args...)
	if err != nil {
		return nil, err
	}
	wl := &workload{cfg: cfg, client: client.New(d.url), prefix: newTag()}
	stop := wl.startWorkers()
	requestID := wl.prefix + "-template"
	run, _, err := wl.complete(ctx, wl.definition(), requestID)
	if werr := stop(); err == nil && werr != nil {
		err = fmt.Errorf("workers: %w", werr)
	}
	d.stop()
	if err != nil {
		return nil, err
	}
	s, err := openSite(ctx, name, st)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	tmpl, err := fill.Capture(ctx, s, run.GetRunId(), requestID)
	if err != nil {
		return nil, err
	}
	log.Info("template run captured", slog.String("run_id", tmpl.RunID()), slog.Int("records", tmpl.Records()),
		slog.Int("events", tmpl.Events()), slog.Int("outbox_entries_left_out", tmpl.Skipped()))
	return tmpl, nil
}

// fillSite writes n clones into the site's store, with weftd stopped.
func fillSite(ctx context.Context, name string, st *site, tmpl *fill.Template, n int, from time.Time, log *slog.Logger) (*fill.Result, error) {
	s, err := openSite(ctx, name, st)
	if err != nil {
		return nil, err
	}
	log.Info("filling", slog.Int("runs", n))
	start, last := time.Now(), time.Now()
	res, err := fill.Fill(ctx, s, tmpl, fill.Options{Runs: n, RequestPrefix: newTag() + "-fill", CreatedFrom: from,
		Progress: func(written int) {
			if time.Since(last) >= 30*time.Second {
				last = time.Now()
				log.Info("filling", slog.Int("runs", written), slog.Int("of", n), slog.Duration("elapsed", time.Since(start).Round(time.Second)))
			}
		}})
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("fill %d runs: %w", n, err)
	}
	log.Info("filled", slog.Int("runs", res.Runs), slog.Int("records", res.Records), slog.Duration("elapsed", res.Elapsed.Round(time.Second)))
	return res, nil
}

// verifyClones reads clones back through weftd: each must be a COMPLETED
// run with the identity it was written with, its whole log in order, and
// the owner of its run_request_id (a repeated submission answers it). A
// ListRuns page must answer too. It answers how many clones it checked.
func verifyClones(ctx context.Context, wl *workload, tmpl *fill.Template, samples []fill.Identity) (int, error) {
	c := wl.client
	if _, err := c.ListRuns(ctx, &weftv1.ListRunsRequest{PageSize: 5}); err != nil {
		return 0, fmt.Errorf("ListRuns: %w", err)
	}
	for _, id := range samples {
		run, err := c.GetRun(ctx, id.RunID)
		switch {
		case err != nil:
			return 0, fmt.Errorf("GetRun %s: %w", id.RunID, err)
		case run.GetStatus() != weftv1.RunStatus_RUN_STATUS_COMPLETED || run.GetRunRequestId() != id.RequestID ||
			!run.GetCreatedAt().AsTime().Equal(id.CreatedAt) || len(run.GetSteps()) != wl.cfg.Steps:
			return 0, fmt.Errorf("run %s is %s, request %q, created %s, %d steps: not the clone written",
				id.RunID, run.GetStatus(), run.GetRunRequestId(), run.GetCreatedAt().AsTime(), len(run.GetSteps()))
		}
		if err := verifyLog(ctx, c, tmpl, id); err != nil {
			return 0, err
		}
		again, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Definition: wl.definition(), Start: true, RunRequestId: id.RequestID})
		if err != nil {
			return 0, fmt.Errorf("submit again with run_request_id %s: %w", id.RequestID, err)
		}
		if !again.GetExisting() || again.GetRun().GetRunId() != id.RunID {
			return 0, fmt.Errorf("run_request_id %s answered run %s (existing %t), not the clone %s",
				id.RequestID, again.GetRun().GetRunId(), again.GetExisting(), id.RunID)
		}
	}
	return len(samples), nil
}

// verifyLog checks a clone's events through ListEvents.
func verifyLog(ctx context.Context, c *client.Client, tmpl *fill.Template, id fill.Identity) error {
	res, err := c.ListEvents(ctx, &weftv1.ListEventsRequest{RunId: id.RunID, PageSize: 1000})
	if err != nil {
		return fmt.Errorf("ListEvents %s: %w", id.RunID, err)
	}
	evs := res.GetEvents()
	if len(evs) != tmpl.Events() || res.GetLastEventSeq() != uint64(tmpl.Events()) {
		return fmt.Errorf("run %s has %d events (last seq %d), want %d", id.RunID, len(evs), res.GetLastEventSeq(), tmpl.Events())
	}
	for i, ev := range evs {
		if ev.GetRunSeq() != uint64(i+1) || ev.GetEventId() != id.EventIDs[i] || ev.GetRunId() != id.RunID {
			return fmt.Errorf("run %s event %d is seq %d, id %s: not the clone written", id.RunID, i+1, ev.GetRunSeq(), ev.GetEventId())
		}
	}
	return nil
}
