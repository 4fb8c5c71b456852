package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Report is everything one benchmark run measured.
type Report struct {
	StartedAt time.Time `json:"started_at"`
	// Machine describes where it ran.
	Machine Machine `json:"machine"`
	// Weftd says which weftd binary was measured.
	Weftd string `json:"weftd"`
	// Workflows (W), Steps (S), Warmup, Workers and WorkerSlots as run.
	Workflows   int `json:"workflows"`
	Steps       int `json:"steps_per_workflow"`
	Warmup      int `json:"warmup_workflows"`
	Workers     int `json:"workers"`
	WorkerSlots int `json:"worker_slots"`
	// Ceilings are the raw commit measurements.
	Ceilings []Ceiling `json:"ceilings"`
	// Measurements are Weft end to end, per configuration and concurrency.
	Measurements []Measurement `json:"measurements"`
	// FanOuts are the fan-out measurement's shapes, per configuration
	// (docs/performance.md#fan-out).
	FanOuts []FanOut `json:"fan_outs,omitempty"`
	// Scale is the scale mode's measurements (Config.Scale), if it ran.
	Scale *ScaleReport `json:"scale,omitempty"`
	// Targets are issue 8's, each judged on figures from this run.
	Targets []Target `json:"targets"`
}

// Machine describes the host.
type Machine struct {
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	// StealPct is the share of CPU time stolen by the hypervisor during the
	// run, from /proc/stat (−1 when unknown).
	StealPct float64 `json:"steal_pct"`
	// BusyPct is the share of all CPUs' time that was not idle during the
	// run, the harness and weftd included; other processes on the machine
	// show up here (−1 when unknown).
	BusyPct float64 `json:"busy_pct"`
}

// Target statuses.
const (
	Pass        = "PASS"
	Miss        = "MISS"
	NotMeasured = "not measured"
)

// Target is one of the targets with what this run measured.
type Target struct {
	Name     string `json:"name"`
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Status   string `json:"status"`
}

// RenderTable writes the report as aligned text tables.
func (r *Report) RenderTable(w io.Writer) error {
	if err := r.renderEndToEnd(w); err != nil {
		return err
	}
	if err := r.renderFanOut(w); err != nil {
		return err
	}
	if r.Scale != nil {
		if err := r.Scale.render(w); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\nTargets (issue 8), each judged on figures from this run")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\tgoal\tmeasured\tstatus\n")
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Goal, t.Measured, t.Status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d CPUs, %s; during the run CPU busy %s, stolen %s; weftd %s\n", r.Machine.CPUs,
		r.Machine.GoVersion, pct(r.Machine.BusyPct), pct(r.Machine.StealPct), r.Weftd)
	return err
}

// renderEndToEnd writes the ceiling and end-to-end tables, when measured.
func (r *Report) renderEndToEnd(w io.Writer) error {
	if len(r.Ceilings) == 0 && len(r.Measurements) == 0 {
		return nil
	}
	fmt.Fprintln(w, "Ceiling: raw commits of a 100-byte row or key, one per transaction")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "backend\tcommitters\tcommits/s\tp50 ms\tp99 ms\t\n")
	for _, c := range r.Ceilings {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t\n", c.Backend, c.Conns, c.CommitsPerSec, c.Latency.P50, c.Latency.P99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWeft end to end: W=%d workflows x S=%d no-op steps (after %d warm-up), %d workers x %d slots\n",
		r.Workflows, r.Steps, r.Warmup, r.Workers, r.WorkerSlots)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "config\tC\twf/s\tsteps/s\tp50 ms\tp95 ms\tp99 ms\tserver p50\tCPU s\tCPU ms/step\tharness\tdb\tpeak RSS MiB\tceiling c/s\tsteps/commit\t\n")
	for _, m := range r.Measurements {
		ceiling := "-"
		if m.Ceiling != nil {
			ceiling = fmt.Sprintf("%.0f (%s/%d)", m.Ceiling.CommitsPerSec, m.Ceiling.Backend, m.Ceiling.Conns)
		}
		config := m.Config
		if m.FlowControl {
			config += "+flow"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t%.3f\t\n", config, m.Clients,
			m.WorkflowsSec, m.StepsSec, m.Latency.P50, m.Latency.P95, m.Latency.P99, m.ServerLatency.P50,
			m.WeftdCPUSeconds, m.CPUMsPerStep, m.HarnessCPUMsPerStep, m.ServicesCPUMsPerStep, m.WeftdPeakRSSMB, ceiling, m.StepsPerCommit)
	}
	return tw.Flush()
}

func pct(v float64) string {
	if v < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f%%", v)
}
