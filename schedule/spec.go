package schedule

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones resolve without the host's zoneinfo

	"github.com/robfig/cron/v3"
)

// OverlapPolicy says what a fire does while the previous run is not terminal.
type OverlapPolicy string

// The overlap policies (docs/semantics.md#schedules).
const (
	// OverlapSkip skips and counts the fire.
	OverlapSkip OverlapPolicy = "SKIP"
	// OverlapBufferOne keeps the latest overlapping fire and starts it when
	// the previous run ends.
	OverlapBufferOne OverlapPolicy = "BUFFER_ONE"
	// OverlapAllowAll starts every fire.
	OverlapAllowAll OverlapPolicy = "ALLOW_ALL"
)

// DefaultCatchupWindow is how old a missed nominal time may be and still fire
// when a Spec leaves CatchupWindow zero.
const DefaultCatchupWindow = time.Minute

// MinInterval is the shortest interval a schedule may fire on.
const MinInterval = time.Second

// Spec is when a schedule fires: exactly one of Cron and Interval.
type Spec struct {
	// Cron is a five-field cron expression or a descriptor (@hourly, …),
	// read in TimeZone.
	Cron string `json:"cron,omitempty"`
	// Interval fires at every multiple of it since the Unix epoch.
	Interval time.Duration `json:"interval,omitempty"`
	// TimeZone is an IANA name; empty is UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Overlap is empty for OverlapSkip.
	Overlap OverlapPolicy `json:"overlap,omitempty"`
	// CatchupWindow is zero for DefaultCatchupWindow.
	CatchupWindow time.Duration `json:"catchup_window,omitempty"`
}

// WithDefaults answers the spec with its defaults filled in.
func (s Spec) WithDefaults() Spec {
	if s.Overlap == "" {
		s.Overlap = OverlapSkip
	}
	if s.CatchupWindow == 0 {
		s.CatchupWindow = DefaultCatchupWindow
	}
	return s
}

// cronParser reads standard five-field expressions and descriptors. @every is
// refused (an interval is its own field), and so is a TZ= prefix (the time
// zone is its own field).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// clock is a compiled Spec: it answers nominal fire times.
type clock interface {
	// next answers the first nominal time strictly after t.
	next(t time.Time) time.Time
}

type cronClock struct{ s *cron.SpecSchedule }

func (c cronClock) next(t time.Time) time.Time { return c.s.Next(t).UTC() }

type intervalClock struct{ d time.Duration }

func (c intervalClock) next(t time.Time) time.Time {
	n := t.UnixNano()
	d := c.d.Nanoseconds()
	return time.Unix(0, (n/d+1)*d).UTC()
}

// compile checks the spec and answers its clock. Field names in violations
// are the API's (spec.cron, spec.interval_ms, spec.time_zone, …).
func (s Spec) compile() (clock, []violation) {
	var vs []violation
	loc, err := time.LoadLocation(s.TimeZone)
	if err != nil || strings.EqualFold(s.TimeZone, "local") {
		vs = append(vs, violation{"spec.time_zone", "time_zone.iana", fmt.Sprintf("time_zone must be an IANA time zone name such as Europe/Berlin, got %q", s.TimeZone)})
		loc = time.UTC
	}
	switch s.Overlap {
	case "", OverlapSkip, OverlapBufferOne, OverlapAllowAll:
	default:
		vs = append(vs, violation{"spec.overlap_policy", "enum.defined_only", "overlap_policy must be SKIP, BUFFER_ONE or ALLOW_ALL"})
	}
	if s.CatchupWindow < 0 {
		vs = append(vs, violation{"spec.catchup_window_ms", "uint64.gte", "catchup_window_ms must not be negative"})
	}
	c, cv := s.trigger(loc)
	return c, append(vs, cv...)
}

// trigger compiles the cron expression or the interval.
func (s Spec) trigger(loc *time.Location) (clock, []violation) {
	switch {
	case s.Cron != "" && s.Interval != 0:
		return nil, []violation{{"spec.trigger", "oneof", "give either cron or interval_ms, not both"}}
	case s.Interval != 0:
		if s.Interval < MinInterval {
			return nil, []violation{{"spec.interval_ms", "uint64.gte", "interval_ms must be at least 1000"}}
		}
		return intervalClock{s.Interval}, nil
	case s.Cron == "":
		return nil, []violation{{"spec.trigger", "oneof.required", "give cron or interval_ms"}}
	}
	expr := strings.TrimSpace(s.Cron)
	if strings.HasPrefix(expr, "@every") || strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, []violation{{"spec.cron", "cron.standard", "cron must be five fields or a descriptor such as @daily; use interval_ms for @every and time_zone for a time zone"}}
	}
	parsed, err := cronParser.Parse(expr)
	if err != nil {
		return nil, []violation{{"spec.cron", "cron.standard", "cron is not a valid five-field expression: " + err.Error()}}
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, []violation{{"spec.cron", "cron.standard", "cron must be five fields or a descriptor such as @daily"}}
	}
	spec.Location = loc
	return cronClock{spec}, nil
}

// violation is one broken rule, turned into an engine field violation at the API.
type violation struct{ field, rule, message string }
