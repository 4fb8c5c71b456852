package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestOptions_OwnershipAndLeaseTTLAreValidated(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	_, err := parseOptions([]string{"--ownership", "many"}, none, io.Discard)
	require.ErrorContains(t, err, `ownership must be single-owner or cas-required, got "many"`)
	_, err = parseOptions([]string{"--lease-ttl", "5ms"}, none, io.Discard)
	require.ErrorContains(t, err, `lease TTL must be a duration of at least 100ms, got "5ms"`)
	opts, err := parseOptions(nil, func(k string) string {
		return map[string]string{"WEFT_LEASE_TTL": "3s", "WEFT_OWNERSHIP": "cas-required"}[k]
	}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "3s", opts.cluster.leaseTTL.String())
	require.Equal(t, "cas-required", opts.cluster.ownership)
}

func TestOptions_LimitsAndBackpressureAreValidated(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	_, err := parseOptions([]string{"--backpressure", "drop"}, none, io.Discard)
	require.ErrorContains(t, err, `backpressure must be reject, queue or delay, got "drop"`)
	_, err = parseOptions(nil, func(k string) string { return map[string]string{"WEFT_MAX_RUNS_PER_TENANT": "lots"}[k] }, io.Discard)
	require.ErrorContains(t, err, `max runs per tenant must be a whole number, 0 for no limit, got "lots"`)
	opts, err := parseOptions([]string{"--max-runs-per-plan", "4", "--backpressure", "reject"}, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 4, opts.limits.PerDefinition)
	require.Equal(t, "reject", string(opts.backpressure))
}

func TestOptions_ScheduleToStartTimeoutDefaultsToFiveMinutesAndZeroMeansNone(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	opts, err := parseOptions(nil, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, opts.scheduleToStart)
	opts, err = parseOptions([]string{"--schedule-to-start-timeout", "0"}, none, io.Discard)
	require.NoError(t, err)
	require.Zero(t, opts.scheduleToStart)
	opts, err = parseOptions(nil, func(k string) string { return map[string]string{"WEFT_SCHEDULE_TO_START_TIMEOUT": "90s"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, opts.scheduleToStart)
	for _, bad := range []string{"-1s", "soon", "721h"} {
		_, err = parseOptions([]string{"--schedule-to-start-timeout", bad}, none, io.Discard)
		require.ErrorContains(t, err, "schedule-to-start timeout must be 0 (no bound) or a duration from 1ms to 720h, got "+`"`+bad+`"`)
	}
}

func TestOptions_MaxFanOutDefaultsToAThousandAndIsBounded(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	opts, err := parseOptions(nil, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1000, opts.maxFanOut)
	opts, err = parseOptions(nil, func(k string) string { return map[string]string{"WEFT_MAX_FAN_OUT": "5000"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 5000, opts.maxFanOut)
	opts, err = parseOptions([]string{"--max-fan-out", "100000"}, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 100000, opts.maxFanOut)
	for _, bad := range []string{"0", "100001", "many"} {
		_, err = parseOptions([]string{"--max-fan-out", bad}, none, io.Discard)
		require.ErrorContains(t, err, `max fan-out must be a whole number from 1 to 100000, got "`+bad+`"`)
	}
}

func TestOptions_MaxWorkflowDepthDefaultsToEightAndIsBounded(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	opts, err := parseOptions(nil, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 8, opts.maxWorkflowDepth)
	opts, err = parseOptions(nil, func(k string) string { return map[string]string{"WEFT_MAX_WORKFLOW_DEPTH": "3"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 3, opts.maxWorkflowDepth)
	for _, bad := range []string{"0", "65", "deep"} {
		_, err = parseOptions([]string{"--max-workflow-depth", bad}, none, io.Discard)
		require.ErrorContains(t, err, `max workflow depth must be a whole number from 1 to 64, got "`+bad+`"`)
	}
}
