package bench

import (
	"fmt"
	"math"
	"strings"
)

// storedCost: weftd's CPU per step with 1M completed runs stored is within
// 10% of its CPU per step with 10k, in every configuration measured.
func storedCost(r *Report) Target {
	t := Target{Name: "cost per step, 10k vs 1M stored runs", Goal: fmt.Sprintf("CPU ms/step flat within %.0f%%", storedFlatShare*100)}
	if r.Scale == nil {
		return notMeasured(t)
	}
	var parts []string
	ok := true
	for _, name := range []string{Embedded, Cluster} {
		small, large := storedEnds(r.Scale.Stored, name)
		if small == nil || large == nil || small == large {
			continue
		}
		change := large.Workload.CPUMsPerStep/small.Workload.CPUMsPerStep - 1
		part := fmt.Sprintf("%s: %s %.2f -> %s %.2f ms/step (%+.1f%%), %.0f -> %.0f steps/s", name,
			count(small.StoredRuns), small.Workload.CPUMsPerStep, count(large.StoredRuns), large.Workload.CPUMsPerStep,
			change*100, small.Workload.StepsSec, large.Workload.StepsSec)
		if large.StoredRuns < storedLarge {
			part += fmt.Sprintf(" (largest N %s, not %s)", count(large.StoredRuns), count(storedLarge))
		}
		parts = append(parts, part)
		ok = ok && math.Abs(change) <= storedFlatShare
	}
	if len(parts) == 0 {
		return notMeasured(t)
	}
	t.Measured, t.Status = strings.Join(parts, "; "), status(ok)
	return t
}

// storedEnds answers a configuration's measurement with the fewest stored
// runs at or above 10k (or the fewest, when none is) and its largest.
func storedEnds(ms []StoredMeasurement, name string) (small, large *StoredMeasurement) {
	for i := range ms {
		m := &ms[i]
		if m.Config != name || m.Workload.CPUMsPerStep <= 0 {
			continue
		}
		if small == nil || (small.StoredRuns < storedSmall) != (m.StoredRuns < storedSmall) && m.StoredRuns >= storedSmall ||
			(small.StoredRuns < storedSmall) == (m.StoredRuns < storedSmall) && m.StoredRuns < small.StoredRuns {
			small = m
		}
		if large == nil || m.StoredRuns > large.StoredRuns {
			large = m
		}
	}
	return small, large
}

// activeRSS: weftd's peak RSS with 100k active runs, over every phase, is at
// most 200 MB in every configuration measured.
func activeRSS(r *Report) Target {
	t := Target{Name: "weftd RSS with 100k active runs", Goal: fmt.Sprintf("<= 200 MB (%.1f MiB)", activeRSSBytes/(1<<20))}
	if r.Scale == nil || len(r.Scale.Active) == 0 {
		return notMeasured(t)
	}
	var parts []string
	ok := true
	for _, a := range r.Scale.Active {
		peak := a.PeakRSSMiB()
		part := fmt.Sprintf("%s: peak %.0f MiB with %s active", a.Config, peak, count(a.ActiveRuns))
		if len(a.Phases) > 0 {
			last := a.Phases[len(a.Phases)-1]
			part += fmt.Sprintf(" (restarted weftd: %.0f MiB)", last.PeakRSSMiB)
		}
		if a.ActiveRuns < activeRuns {
			part += fmt.Sprintf(" (not %s)", count(activeRuns))
		}
		parts = append(parts, part)
		ok = ok && peak*(1<<20) <= activeRSSBytes
	}
	t.Measured, t.Status = strings.Join(parts, "; "), status(ok)
	return t
}

// count writes a run count the way the issue does: 10k, 1M, 2.5k.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return trimZero(float64(n)/1e6) + "M"
	case n >= 1_000 && n%100 == 0:
		return trimZero(float64(n)/1e3) + "k"
	default:
		return fmt.Sprint(n)
	}
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f), "0"), ".")
}
