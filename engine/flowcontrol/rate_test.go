package flowcontrol

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRate_TheGrammarAndItsLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s      string
		count  int
		period time.Duration
		rule   string
	}{
		{s: "100/1m", count: 100, period: time.Minute},
		{s: "20/s", count: 20, period: time.Second},
		{s: "5/10s", count: 5, period: 10 * time.Second},
		{s: "1000/1d", count: 1000, period: 24 * time.Hour},
		{s: "3/2h", count: 3, period: 2 * time.Hour},
		{s: "1000000/1s", count: 1_000_000, period: time.Second},
		{s: "fast", rule: RuleRateFormat},
		{s: "", rule: RuleRateFormat},
		{s: "100", rule: RuleRateFormat},
		{s: "100/", rule: RuleRateFormat},
		{s: "100/1ms", rule: RuleRateFormat},
		{s: "100/1w", rule: RuleRateFormat},
		{s: "-1/1m", rule: RuleRateFormat},
		{s: "1.5/1m", rule: RuleRateFormat},
		{s: " 100/1m", rule: RuleRateFormat},
		{s: "0/1m", rule: RuleRateCount},
		{s: "1000001/1s", rule: RuleRateCount},
		{s: "100/0m", rule: RuleRatePeriod},
		{s: "100/25h", rule: RuleRatePeriod},
		{s: "100/2d", rule: RuleRatePeriod},
	}
	for _, c := range cases {
		r, err := ParseRate(c.s)
		if c.rule == "" {
			require.NoError(t, err, c.s)
			require.Equal(t, Rate{Count: c.count, Period: c.period}, r, c.s)
			back, err := ParseRate(r.String())
			require.NoError(t, err)
			require.Equal(t, r, back, "String reads back")
			continue
		}
		var e *Error
		require.True(t, errors.As(err, &e), c.s)
		require.Equal(t, c.rule, e.Rule, c.s)
		if c.s == "fast" || c.s == "1.5/1m" || c.s == "100/25h" {
			require.NotContains(t, e.Message, c.s, "the message does not quote the value")
		}
	}
}

func TestRate_IntervalRoundsUpSoTheRateHolds(t *testing.T) {
	t.Parallel()
	r := Rate{Count: 7, Period: time.Minute}
	require.Equal(t, time.Duration(8571428572), r.Interval())
	require.GreaterOrEqual(t, r.Interval()*7, time.Minute)
	require.Equal(t, 600*time.Millisecond, Rate{Count: 100, Period: time.Minute}.Interval())
}

func TestValidators_NameTheRule(t *testing.T) {
	t.Parallel()
	var e *Error
	for _, c := range []struct {
		err  error
		rule string
	}{
		{ValidPriority(0), RulePriority}, {ValidPriority(6), RulePriority},
		{ValidLimit(0), RuleLimit}, {ValidLimit(MaxLimit + 1), RuleLimit},
		{ValidWeight(-1), RuleWeight}, {ValidWeight(0), RuleWeight}, {ValidWeight(1001), RuleWeight},
	} {
		require.True(t, errors.As(c.err, &e))
		require.Equal(t, c.rule, e.Rule)
	}
	require.NoError(t, ValidPriority(1))
	require.NoError(t, ValidPriority(5))
	require.NoError(t, ValidLimit(1))
	require.NoError(t, ValidWeight(0.001))
	require.NoError(t, ValidWeight(1000))
	_, err := NewThrottle(Rate{Count: 1, Period: time.Second}, -1)
	require.True(t, errors.As(err, &e))
	require.Equal(t, RuleBurst, e.Rule)
	_, err = NewThrottle(Rate{Count: 0, Period: time.Second}, 1)
	require.Error(t, err)
}
