package flowcontrol

import (
	"regexp"
	"strconv"
	"time"
)

// The bounds of a rate.
const (
	// MaxCount is the most tasks a rate may allow per period.
	MaxCount = 1_000_000
	// MinPeriod and MaxPeriod bound a rate's period.
	MinPeriod = time.Second
	// MaxPeriod is the longest period: one day.
	MaxPeriod = 24 * time.Hour
)

// Rate is a throttle's rate: Count tasks per Period.
type Rate struct {
	Count  int
	Period time.Duration
}

// units are a period's units.
var units = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}

// rateSyntax is "<count>/<period>", the period an optional whole number
// and a unit.
var rateSyntax = regexp.MustCompile(`^([0-9]{1,9})/([0-9]{0,9})([smhd])$`)

// ParseRate reads a rate as a definition writes it: "<count>/<period>",
// the period a whole number (1 when left out) and a unit s, m, h or d:
// "100/1m", "20/s", "5/10s", "1000/1d". The count is 1–1,000,000 and the
// period 1s–1d.
func ParseRate(s string) (Rate, error) {
	m := rateSyntax.FindStringSubmatch(s)
	if m == nil {
		return Rate{}, errorf(RuleRateFormat, `a rate is <count>/<period>, such as "100/1m" or "20/s" (period units s, m, h, d)`)
	}
	count, _ := strconv.Atoi(m[1])
	if count < 1 || count > MaxCount {
		return Rate{}, errorf(RuleRateCount, "a rate's count must be between 1 and %d", MaxCount)
	}
	n := 1
	if m[2] != "" {
		n, _ = strconv.Atoi(m[2])
	}
	period := time.Duration(n) * units[m[3]]
	if n < 1 || period < MinPeriod || period > MaxPeriod {
		return Rate{}, errorf(RuleRatePeriod, "a rate's period must be between 1s and 1d")
	}
	return Rate{Count: count, Period: period}, nil
}

// String writes the rate as ParseRate reads it, in the largest whole unit.
func (r Rate) String() string {
	for _, u := range []string{"d", "h", "m"} {
		if r.Period%units[u] == 0 {
			return strconv.Itoa(r.Count) + "/" + strconv.FormatInt(int64(r.Period/units[u]), 10) + u
		}
	}
	return strconv.Itoa(r.Count) + "/" + strconv.FormatInt(int64(r.Period/time.Second), 10) + "s"
}

// Interval is the time between two tasks at the rate, rounded up to a
// whole nanosecond so that the rate is never exceeded.
func (r Rate) Interval() time.Duration {
	return (r.Period + time.Duration(r.Count) - 1) / time.Duration(r.Count)
}
