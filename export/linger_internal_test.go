package export

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// After a pass that published, Run waits until about a page of entries is
// due at the rate they arrived, never less than Linger nor more than
// MaxLinger: a trickle of events costs a few passes a second, a flood one
// pass per Linger.
func TestLingerAfter_WaitsForAPageAtTheArrivalRateWithinLingerAndMaxLinger(t *testing.T) {
	t.Parallel()
	c := Config{BatchSize: 100, Linger: 50 * time.Millisecond, MaxLinger: 500 * time.Millisecond}.WithDefaults()
	ms := time.Millisecond
	for _, tc := range []struct {
		name           string
		arrived        int
		cycle, took    time.Duration
		want           time.Duration
		linger, maxLng time.Duration
	}{
		{name: "first pass: Linger", arrived: 10, want: 50 * ms},
		{name: "a page or more: Linger", arrived: 100, cycle: 60 * ms, took: 5 * ms, want: 50 * ms},
		{name: "half a page in 100ms: the other half's 100ms less the pass", arrived: 50, cycle: 100 * ms, took: 10 * ms, want: 190 * ms},
		{name: "a trickle: MaxLinger", arrived: 1, cycle: 200 * ms, took: time.Millisecond, want: 500 * ms},
		{name: "nearly a page: no less than Linger", arrived: 95, cycle: 60 * ms, took: 20 * ms, want: 50 * ms},
		{name: "none counted (all waited): MaxLinger", arrived: 0, cycle: 60 * ms, want: 500 * ms},
		{name: "negative Linger: at once", arrived: 1, cycle: 200 * ms, linger: -1, want: 0},
		{name: "MaxLinger below Linger is Linger", arrived: 1, cycle: 200 * ms, linger: 80 * ms, maxLng: 10 * ms, want: 80 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := c
			if tc.linger != 0 {
				cfg.Linger, cfg.MaxLinger = tc.linger, tc.maxLng
			}
			require.Equal(t, tc.want, cfg.lingerAfter(tc.arrived, tc.cycle, tc.took))
		})
	}
}
