package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// TestSpec_NextFireTimesFollowTheCronInItsTimeZoneAndTheIntervalSinceTheEpoch
// is the table of nominal times: cron read in the schedule's time zone
// (daylight saving included), descriptors, and intervals aligned to the epoch.
func TestSpec_NextFireTimesFollowTheCronInItsTimeZoneAndTheIntervalSinceTheEpoch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		spec  Spec
		after string
		want  []string
	}{
		{"cron in UTC", Spec{Cron: "30 * * * *"}, "2026-11-02T09:00:00Z",
			[]string{"2026-11-02T09:30:00Z", "2026-11-02T10:30:00Z"}},
		{"cron in Berlin, winter time", Spec{Cron: "0 9 * * *", TimeZone: "Europe/Berlin"}, "2026-11-02T09:00:00Z",
			[]string{"2026-11-03T08:00:00Z", "2026-11-04T08:00:00Z"}},
		{"cron in Berlin across the spring change", Spec{Cron: "0 9 * * *", TimeZone: "Europe/Berlin"}, "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
		{"descriptor", Spec{Cron: "@daily", TimeZone: "America/New_York"}, "2026-11-02T09:00:00Z",
			[]string{"2026-11-03T05:00:00Z", "2026-11-04T05:00:00Z"}},
		{"weekdays only", Spec{Cron: "0 12 * * MON-FRI"}, "2026-11-06T13:00:00Z",
			[]string{"2026-11-09T12:00:00Z", "2026-11-10T12:00:00Z"}},
		{"interval since the epoch", Spec{Interval: 15 * time.Minute}, "2026-11-02T09:07:00Z",
			[]string{"2026-11-02T09:15:00Z", "2026-11-02T09:30:00Z"}},
		{"interval on a boundary is strictly after", Spec{Interval: time.Hour}, "2026-11-02T09:00:00Z",
			[]string{"2026-11-02T10:00:00Z", "2026-11-02T11:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk, vs := c.spec.compile()
			require.Empty(t, vs)
			at := utc(c.after)
			var got []string
			for range c.want {
				at = clk.next(at)
				got = append(got, at.Format(time.RFC3339))
			}
			require.Equal(t, c.want, got)
		})
	}
}

// TestSpec_AnInvalidSpecIsRefusedNamingTheFieldAndTheRule is the table of
// spec rules, each refused with the API's field name.
func TestSpec_AnInvalidSpecIsRefusedNamingTheFieldAndTheRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		spec        Spec
		field, rule string
	}{
		{"neither cron nor interval", Spec{}, "spec.trigger", "oneof.required"},
		{"both cron and interval", Spec{Cron: "* * * * *", Interval: time.Minute}, "spec.trigger", "oneof"},
		{"interval under a second", Spec{Interval: 500 * time.Millisecond}, "spec.interval_ms", "uint64.gte"},
		{"six fields", Spec{Cron: "0 * * * * *"}, "spec.cron", "cron.standard"},
		{"not cron at all", Spec{Cron: "every day"}, "spec.cron", "cron.standard"},
		{"@every", Spec{Cron: "@every 5m"}, "spec.cron", "cron.standard"},
		{"time zone inside the expression", Spec{Cron: "CRON_TZ=Asia/Tokyo 0 9 * * *"}, "spec.cron", "cron.standard"},
		{"unknown time zone", Spec{Cron: "0 9 * * *", TimeZone: "Mars/Olympus"}, "spec.time_zone", "time_zone.iana"},
		{"the host's local zone", Spec{Cron: "0 9 * * *", TimeZone: "Local"}, "spec.time_zone", "time_zone.iana"},
		{"unknown overlap policy", Spec{Interval: time.Minute, Overlap: "SOMETIMES"}, "spec.overlap_policy", "enum.defined_only"},
		{"negative catch-up window", Spec{Interval: time.Minute, CatchupWindow: -time.Second}, "spec.catchup_window_ms", "uint64.gte"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, vs := c.spec.compile()
			require.Len(t, vs, 1)
			require.Equal(t, c.field, vs[0].field)
			require.Equal(t, c.rule, vs[0].rule)
		})
	}
}
