package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// ScaleReport is what the scale mode measured.
type ScaleReport struct {
	// Clients (C), Workflows (W) and Steps (S) of the workload measured at
	// each size; Settle is how long weftd ran over the active runs before
	// their memory was read, in seconds.
	Clients   int     `json:"clients"`
	Workflows int     `json:"workflows"`
	Rounds    int     `json:"rounds"`
	Steps     int     `json:"steps_per_workflow"`
	Settle    float64 `json:"settle_seconds"`
	// Stored is the workload with growing numbers of completed runs stored.
	Stored []StoredMeasurement `json:"stored"`
	// Active is weftd's memory with many active runs.
	Active []ActiveMeasurement `json:"active"`
}

// render writes the scale tables.
func (s *ScaleReport) render(w io.Writer) error {
	if len(s.Stored) > 0 {
		fmt.Fprintf(w, "\nScale: W=%d workflows x S=%d no-op steps at C=%d, %d rounds (the median round shown), with N completed runs stored (clones of a real run, written with weftd stopped)\n",
			s.Workflows, s.Steps, s.Clients, s.Rounds)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "config\tstored runs\tfilled\tfill s\tstore MiB\tverified\tstart s\tquiesce s\tsteps/s\tCPU ms/step\tCPU ms/step range\tp50 ms\tserver p50\tpeak RSS MiB\t\n")
		for _, m := range s.Stored {
			wl := m.Workload
			lo, hi := m.cpuRange()
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%d\t%.1f\t%.0f\t%.0f\t%.2f\t%.2f-%.2f\t%.1f\t%.1f\t%.0f\t\n", m.Config, m.StoredRuns, m.Filled,
				m.FillSeconds, m.StoreMiB, m.Verified, m.StartSeconds, m.QuiesceSeconds, wl.StepsSec, wl.CPUMsPerStep, lo, hi, wl.Latency.P50,
				wl.ServerLatency.P50, wl.WeftdPeakRSSMB)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, a := range s.Active {
		timer := ""
		if a.TimerSeconds > 0 {
			timer = fmt.Sprintf(", each driven once by a %.0f s wait timeout", a.TimerSeconds)
		}
		fmt.Fprintf(w, "\nScale: %s weftd with %d active runs%s (submitted through the API by %d clients in %.0f s, %.0f/s; %d RUNNING or BLOCKED in the status index)\n",
			a.Config, a.ActiveRuns, timer, a.Submitters, a.SubmitSeconds, a.SubmitPerSec, a.Counted)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "phase\tseconds\tRSS MiB\tpeak RSS MiB\tCPU s\tgoroutines\tsteps/s\tCPU ms/step\t\n")
		for _, p := range a.Phases {
			steps, cost := "-", "-"
			if p.Workload != nil {
				steps, cost = fmt.Sprintf("%.0f", p.Workload.StepsSec), fmt.Sprintf("%.2f", p.Workload.CPUMsPerStep)
			}
			g := "-"
			if p.Goroutines > 0 {
				g = fmt.Sprint(p.Goroutines)
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.1f\t%s\t%s\t%s\t\n", p.Name, p.Seconds, p.RSSMiB, p.PeakRSSMiB, p.CPUSeconds, g, steps, cost)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
