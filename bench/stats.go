package bench

import (
	"slices"
	"time"
)

// Latency summarises a sample of durations, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// summarise answers the percentiles of sample (nearest rank); it sorts sample.
func summarise(sample []time.Duration) Latency {
	if len(sample) == 0 {
		return Latency{}
	}
	slices.Sort(sample)
	return Latency{P50: ms(rank(sample, 0.50)), P95: ms(rank(sample, 0.95)), P99: ms(rank(sample, 0.99)),
		Max: ms(sample[len(sample)-1])}
}

func rank(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// perSecond answers n per second of elapsed.
func perSecond(n int, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(n) / elapsed.Seconds()
}
