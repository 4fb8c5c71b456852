package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// The fan-out measurement (docs/performance.md#fan-out): one run at a time,
// a step fanning out over FanOutItems no-op items beside a sequence of as
// many no-op steps, on the same weftd and workers.
const (
	// FanOutItems is the length of the measured fan-out's list, and of the
	// sequence it is compared with.
	FanOutItems = 100
	// fanOutRuns is how many runs of each shape are timed (after one untimed).
	fanOutRuns = 5
)

// FanOut is one shape of the fan-out measurement in one configuration.
type FanOut struct {
	Config string `json:"config"`
	// Shape is "sequence" (Items steps one after another) or "forEach"
	// (one step over Items items, MaxConcurrency at once).
	Shape          string  `json:"shape"`
	Items          int     `json:"items"`
	MaxConcurrency int     `json:"max_concurrency,omitempty"`
	Runs           int     `json:"runs"`
	Seconds        float64 `json:"seconds"`
	ItemsSec       float64 `json:"items_per_sec"`
	// RunP50 is a run's submit-to-COMPLETED median, in milliseconds.
	RunP50 float64 `json:"run_p50_ms"`
}

// fanOutShapes are the shapes measured: the sequence, and the fan-out at
// its default concurrency and with every item in flight at once.
var fanOutShapes = []struct {
	shape string
	conc  int
}{{"sequence", 0}, {"forEach", 10}, {"forEach", FanOutItems}}

// fanOutDefinition answers the shape's definition.
func fanOutDefinition(shape string, conc int) *weftv1.WorkflowDefinition {
	def := &weftv1.WorkflowDefinition{PlanId: "bench-" + shape + strconv.Itoa(conc), PlanVersion: "1"}
	if shape == "sequence" {
		for i := range FanOutItems {
			def.Actions = append(def.Actions, &weftv1.Action{Id: "s" + strconv.Itoa(i+1), Order: uint32(i + 1), Activity: noopActivity})
		}
		return def
	}
	n := uint32(conc)
	def.Actions = []*weftv1.Action{{Id: "each", Order: 1, Activity: noopActivity,
		ForEach: fmt.Sprintf("lists.range(%d)", FanOutItems), MaxConcurrency: &n}}
	return def
}

// measureFanOut measures the fan-out shapes on a fresh weftd of the
// configuration.
func (r *Report) measureFanOut(ctx context.Context, cfg Config, name, tmp string) error {
	log := cfg.Logger.With(slog.String("config", name), slog.String("measure", "fan-out"))
	st, err := newSite(ctx, cfg, name, filepath.Join(tmp, "fan-out"))
	if err != nil {
		return err
	}
	defer st.cleanup()
	d, err := startWeftd(ctx, cfg.Weftd, st.args...)
	if err != nil {
		return err
	}
	defer d.stop()
	wl := &workload{cfg: cfg, client: client.New(d.url), prefix: newTag()}
	stopWorkers := wl.startWorkers()
	for _, s := range fanOutShapes {
		log.Info("measuring", slog.String("shape", s.shape), slog.Int("max_concurrency", s.conc))
		f, err := wl.fanOut(ctx, s.shape, s.conc)
		if err != nil {
			_ = stopWorkers()
			return fmt.Errorf("%s configuration, %s: %w", name, s.shape, err)
		}
		f.Config = name
		r.FanOuts = append(r.FanOuts, f)
	}
	if err := stopWorkers(); err != nil {
		return fmt.Errorf("workers: %w", err)
	}
	return d.exited()
}

// fanOut runs one untimed and fanOutRuns timed runs of the shape, one at a
// time, each checked COMPLETED with every item (or step) SUCCEEDED.
func (w *workload) fanOut(ctx context.Context, shape string, conc int) (FanOut, error) {
	def := fanOutDefinition(shape, conc)
	var took []time.Duration
	var elapsed time.Duration
	for i := range fanOutRuns + 1 {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RunTimeout)
		start := time.Now()
		run, err := w.client.SubmitAndAwait(rctx, &weftv1.SubmitRunRequest{Definition: def, Start: true,
			RunRequestId: fmt.Sprintf("%s-%s%d-%d", w.prefix, shape, conc, i)})
		cancel()
		if err != nil {
			return FanOut{}, err
		}
		d := time.Since(start)
		if err := fanOutDone(run); err != nil {
			return FanOut{}, err
		}
		if i > 0 { // the first warms up
			took, elapsed = append(took, d), elapsed+d
		}
	}
	return FanOut{Shape: shape, Items: FanOutItems, MaxConcurrency: conc, Runs: fanOutRuns, Seconds: elapsed.Seconds(),
		ItemsSec: perSecond(fanOutRuns*FanOutItems, elapsed), RunP50: summarise(took).P50}, nil
}

// fanOutDone checks a measured run completed with all its steps SUCCEEDED:
// FanOutItems of them besides a fan-out's own step.
func fanOutDone(run *weftv1.Run) error {
	if run.GetStatus() != weftv1.RunStatus_RUN_STATUS_COMPLETED {
		return fmt.Errorf("run %s ended %s, not COMPLETED", run.GetRunId(), run.GetStatus())
	}
	n := 0
	for _, s := range run.GetSteps() {
		if s.GetStatus() != weftv1.StepStatus_STEP_STATUS_SUCCEEDED {
			return fmt.Errorf("run %s completed with step %s %s", run.GetRunId(), s.GetActionId(), s.GetStatus())
		}
		if s.GetFanOut() == nil {
			n++
		}
	}
	if n != FanOutItems {
		return fmt.Errorf("run %s has %d steps or items, want %d", run.GetRunId(), n, FanOutItems)
	}
	return nil
}

// renderFanOut writes the fan-out table, when measured.
func (r *Report) renderFanOut(w io.Writer) error {
	if len(r.FanOuts) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFan-out: one run at a time, %d no-op items of a forEach step beside a sequence of %d no-op steps\n", FanOutItems, FanOutItems)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "config\tshape\tmaxConcurrency\truns\titems/s\trun p50 ms\t\n")
	for _, f := range r.FanOuts {
		conc := "-"
		if f.MaxConcurrency > 0 {
			conc = strconv.Itoa(f.MaxConcurrency)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f\t%.1f\t\n", f.Config, f.Shape, conc, f.Runs, f.ItemsSec, f.RunP50)
	}
	return tw.Flush()
}
