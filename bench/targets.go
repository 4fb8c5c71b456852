package bench

import "fmt"

// Issue 8's thresholds.
const (
	clusterCeilingShare = 0.65
	latencyCommitFactor = 7.0
	embeddedStepsSec    = 10_000.0
	targetSteps         = 5
	storedSmall         = 10_000
	storedLarge         = 1_000_000
	storedFlatShare     = 0.10
	activeRuns          = 100_000
	activeRSSBytes      = 200e6 // "200 MB"
)

// judge answers the targets on figures from r.
func judge(r *Report) []Target {
	return []Target{
		clusterThroughput(r), clusterLatency(r), embeddedThroughput(r), storedCost(r), activeRSS(r),
	}
}

func status(ok bool) string {
	if ok {
		return Pass
	}
	return Miss
}

// clusterThroughput: cluster, the largest C, steps/s ≥ 65% of the ceiling.
func clusterThroughput(r *Report) Target {
	t := Target{Name: "cluster throughput", Goal: fmt.Sprintf("C=16 steps/s >= %.0f%% of PostgreSQL commits/s", clusterCeilingShare*100)}
	var best *Measurement
	for i, m := range r.Measurements {
		if m.Config == Cluster && m.Ceiling != nil && (best == nil || m.Clients > best.Clients) {
			best = &r.Measurements[i]
		}
	}
	if best == nil || best.Clients == 1 {
		return notMeasured(t)
	}
	t.Measured = fmt.Sprintf("C=%d: %.0f steps/s = %.1f%% of %.0f commits/s (%d conns)", best.Clients, best.StepsSec,
		best.StepsPerCommit*100, best.Ceiling.CommitsPerSec, best.Ceiling.Conns)
	t.Status = status(best.StepsPerCommit >= clusterCeilingShare)
	return t
}

// clusterLatency: cluster, C=1, p50 of a five-step workflow ≤ 7 × the p50
// of one raw commit.
func clusterLatency(r *Report) Target {
	t := Target{Name: "cluster latency", Goal: fmt.Sprintf("C=1 p50 of %d steps <= %.0f x single-commit p50", targetSteps, latencyCommitFactor)}
	var m *Measurement
	for i := range r.Measurements {
		if r.Measurements[i].Config == Cluster && r.Measurements[i].Clients == 1 && r.Measurements[i].Ceiling != nil {
			m = &r.Measurements[i]
		}
	}
	if m == nil || m.Ceiling.Latency.P50 <= 0 {
		return notMeasured(t)
	}
	factor := m.Latency.P50 / m.Ceiling.Latency.P50
	t.Measured = fmt.Sprintf("%.1f ms = %.1f x %.2f ms", m.Latency.P50, factor, m.Ceiling.Latency.P50)
	if m.Steps != targetSteps {
		t.Measured += fmt.Sprintf(" (S=%d, not %d)", m.Steps, targetSteps)
	}
	t.Status = status(factor <= latencyCommitFactor)
	return t
}

// embeddedThroughput: the embedded configuration's best steps/s.
func embeddedThroughput(r *Report) Target {
	t := Target{Name: "embedded throughput", Goal: fmt.Sprintf(">= %.0f steps/s", embeddedStepsSec)}
	var best *Measurement
	for i, m := range r.Measurements {
		if m.Config == Embedded && (best == nil || m.StepsSec > best.StepsSec) {
			best = &r.Measurements[i]
		}
	}
	if best == nil {
		return notMeasured(t)
	}
	t.Measured = fmt.Sprintf("C=%d: %.0f steps/s", best.Clients, best.StepsSec)
	if best.Ceiling != nil {
		t.Measured += fmt.Sprintf(" (%.1f%% of Pebble's %.0f synced writes/s)", best.StepsPerCommit*100, best.Ceiling.CommitsPerSec)
	}
	t.Status = status(best.StepsSec >= embeddedStepsSec)
	return t
}

func notMeasured(t Target) Target {
	t.Measured, t.Status = "-", NotMeasured
	return t
}
