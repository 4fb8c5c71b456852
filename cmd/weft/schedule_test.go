package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// scheduleFile writes a one-step workflow that waits for a signal.
func scheduleFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nightly.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"plan_id":"nightly","plan_version":"1",
		"actions":[{"id":"wait","order":1,"wait_for_signal":{"signal_name":"go"}}]}`), 0o600))
	return path
}

// TestScheduleCommands_EverySubcommandAnswersJSONForScripts drives create,
// describe, list, pause, trigger, resume, backfill and delete with
// --output json and reads each answer back.
func TestScheduleCommands_EverySubcommandAnswersJSONForScripts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	file := scheduleFile(t)
	var created struct {
		Schedule struct {
			ScheduleID    string   `json:"schedule_id"`
			NextFireTimes []string `json:"next_fire_times"`
			Spec          struct {
				Cron          string `json:"cron"`
				TimeZone      string `json:"time_zone"`
				OverlapPolicy string `json:"overlap_policy"`
			} `json:"spec"`
		} `json:"schedule"`
	}
	out := b.ok("schedule", "create", "nightly", file, "--cron", "0 2 * * *", "--tz", "Asia/Tokyo",
		"--overlap", "buffer-one", "--output", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	require.Equal(t, "nightly", created.Schedule.ScheduleID)
	require.Equal(t, "Asia/Tokyo", created.Schedule.Spec.TimeZone)
	require.Equal(t, "OVERLAP_POLICY_BUFFER_ONE", created.Schedule.Spec.OverlapPolicy)
	require.Len(t, created.Schedule.NextFireTimes, 5)
	require.Contains(t, created.Schedule.NextFireTimes[0], "T17:00:00Z", "02:00 in Tokyo is 17:00 UTC")

	out = b.ok("schedule", "describe", "nightly", "--next", "8", "-o", "json")
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	require.Len(t, created.Schedule.NextFireTimes, 8)
	require.Contains(t, b.ok("schedule", "describe", "nightly"), "cron 0 2 * * * (Asia/Tokyo)")
	require.Contains(t, b.ok("schedule", "list"), "nightly")
	require.Contains(t, b.ok("schedule", "pause", "nightly", "-o", "json"), `"paused": true`)

	var trig struct {
		Run struct {
			RunID         string `json:"run_id"`
			TriggerSource string `json:"trigger_source"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.ok("schedule", "trigger", "nightly", "-o", "json")), &trig))
	require.Equal(t, "manual", trig.Run.TriggerSource)
	require.NotContains(t, b.ok("schedule", "resume", "nightly", "-o", "json"), `"paused"`)

	var bf struct {
		FireTimes []string `json:"fire_times"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.ok("schedule", "backfill", "nightly",
		"--from", "2026-01-01T00:00:00Z", "--to", "2026-01-03T00:00:00Z", "-o", "json")), &bf))
	require.Equal(t, []string{"2026-01-01T17:00:00Z", "2026-01-02T17:00:00Z"}, bf.FireTimes)

	require.Equal(t, "{}\n", b.ok("schedule", "delete", "nightly", "-o", "json"))
	r := b.weft("schedule", "describe", "nightly")
	require.Equal(t, 1, r.code, "a deleted schedule is an API error: %s", r.stderr)
}

// TestScheduleCommands_BadFlagsAreUsageErrorsAndBadSpecsAPIErrors: exit 2
// for what the CLI can check, exit 1 naming the field for what weftd refuses.
func TestScheduleCommands_BadFlagsAreUsageErrorsAndBadSpecsAPIErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	file := scheduleFile(t)
	for _, args := range [][]string{
		{"schedule"},
		{"schedule", "explode"},
		{"schedule", "create", "s", file},
		{"schedule", "create", "s", file, "--cron", "* * * * *", "--every", "1m"},
		{"schedule", "create", "s", file, "--every", "1m", "--overlap", "sometimes"},
		{"schedule", "backfill", "s", "--from", "yesterday", "--to", "2026-01-01T00:00:00Z"},
	} {
		r := b.weft(args...)
		require.Equal(t, 2, r.code, "weft %v: %v", args, r.err)
	}
	r := b.weft("schedule", "create", "s", file, "--cron", "0 25 * * *")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr+r.err.Error(), "--cron: cron is not a valid five-field expression", "a refused flag is named as the flag")
	require.NotContains(t, r.err.Error(), "workflow file", "the file was fine: the flag was wrong")
}

// TestScheduleCommands_UpdateChangesOnlyWhatItsFlagsNameAndTriggerRequestIDsAreIdempotent:
// update with --tz keeps the cron and the overlap policy, with --every
// replaces the cron, with a FILE replaces the definition; two triggers with
// one --request-id answer one run.
func TestScheduleCommands_UpdateChangesOnlyWhatItsFlagsNameAndTriggerRequestIDsAreIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	file := scheduleFile(t)
	b.ok("schedule", "create", "nightly", file, "--cron", "0 2 * * *", "--overlap", "buffer-one", "--paused")
	var updated struct {
		Schedule struct {
			Spec struct {
				Cron          string `json:"cron"`
				IntervalMs    string `json:"interval_ms"`
				TimeZone      string `json:"time_zone"`
				OverlapPolicy string `json:"overlap_policy"`
			} `json:"spec"`
			Definition struct {
				PlanVersion string `json:"plan_version"`
			} `json:"definition"`
			Input         any      `json:"input"`
			NextFireTimes []string `json:"next_fire_times"`
		} `json:"schedule"`
	}
	require.NoError(t, json.Unmarshal([]byte(b.ok("schedule", "update", "nightly", "--tz", "Asia/Tokyo", "-o", "json")), &updated))
	require.Equal(t, "0 2 * * *", updated.Schedule.Spec.Cron)
	require.Equal(t, "Asia/Tokyo", updated.Schedule.Spec.TimeZone)
	require.Equal(t, "OVERLAP_POLICY_BUFFER_ONE", updated.Schedule.Spec.OverlapPolicy)
	require.Contains(t, updated.Schedule.NextFireTimes[0], "T17:00:00Z", "02:00 in Tokyo is 17:00 UTC")

	v2 := filepath.Join(t.TempDir(), "nightly-v2.json")
	require.NoError(t, os.WriteFile(v2, []byte(`{"plan_id":"nightly","plan_version":"2",
		"actions":[{"id":"wait","order":1,"wait_for_signal":{"signal_name":"go"}}]}`), 0o600))
	updated.Schedule.Spec.Cron = ""
	require.NoError(t, json.Unmarshal([]byte(b.ok("schedule", "update", "nightly", v2, "--every", "15m",
		"--input", `{"region": "eu"}`, "-o", "json")), &updated))
	require.Empty(t, updated.Schedule.Spec.Cron)
	require.Equal(t, "900000", updated.Schedule.Spec.IntervalMs)
	require.Equal(t, "2", updated.Schedule.Definition.PlanVersion)
	require.Equal(t, map[string]any{"region": "eu"}, updated.Schedule.Input)
	require.Contains(t, b.ok("schedule", "update", "nightly", "--overlap", "skip"), "every 15m0s")

	var trig struct {
		Run struct {
			RunID        string `json:"run_id"`
			RunRequestID string `json:"run_request_id"`
		} `json:"run"`
	}
	var runIDs []string
	for range 2 {
		require.NoError(t, json.Unmarshal([]byte(b.ok("schedule", "trigger", "nightly", "--request-id", "deploy-42", "-o", "json")), &trig))
		require.Equal(t, "schedule:nightly:manual:deploy-42", trig.Run.RunRequestID)
		runIDs = append(runIDs, trig.Run.RunID)
	}
	require.Equal(t, runIDs[0], runIDs[1], "a retried trigger starts one run")

	for _, args := range [][]string{
		{"schedule", "update", "nightly"},
		{"schedule", "update"},
		{"schedule", "update", "nightly", "--cron", "@daily", "--every", "1h"},
		{"schedule", "update", "nightly", "--overlap", "sometimes"},
		{"schedule", "update", "nightly", "--input", "{"},
	} {
		r := b.weft(args...)
		require.Equal(t, 2, r.code, "weft %v: %v", args, r.err)
	}
	r := b.weft("schedule", "update", "nightly", "--tz", "Mars/Olympus")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr+r.err.Error(), "--tz: ")
}

// TestScheduleTable_ShowsTheLatestFiresLagOnlyOnceThereIsOne.
func TestScheduleTable_ShowsTheLatestFiresLagOnlyOnceThereIsOne(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	s := &weftv1.Schedule{ScheduleId: "s", Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_IntervalMs{IntervalMs: 60000}}}
	printScheduleTable(&out, s)
	require.NotContains(t, out.String(), "fire lag")
	s.LastRunId, s.LastFireLagMs = "run-1", 1500
	out.Reset()
	printScheduleTable(&out, s)
	require.Regexp(t, `fire lag\s+1.5s\n`, out.String())
}
