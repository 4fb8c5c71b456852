package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	timesource "github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
	"github.com/weft-dev/weft/telemetry"
)

// scrapePipeline answers what /metrics serves for pipeline.
func scrapePipeline(t *testing.T, pipeline *telemetry.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	pipeline.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	return string(body)
}

// TestEngineMetrics_RunsQueueDepthStaleCommitsAndAlertsThenNoZerosWhenTheStoreFails:
// the engine's counts are OpenTelemetry observations served under their
// Prometheus names at scrape time, the alerts are counters present at 0 from
// start-up; when the counts cannot be read the scrape still answers, without
// weft_runs and weft_queue_depth (no bogus zeros), and a warning is logged.
func TestEngineMetrics_RunsQueueDepthStaleCommitsAndAlertsThenNoZerosWhenTheStoreFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	eng, err := engine.New(engine.Config{Store: st})
	require.NoError(t, err)
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	require.NoError(t, observeEngine(pipeline.Provider.Meter(meterName), eng, logger))
	alert, err := engineAlerts(pipeline.Provider.Meter(meterName), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	def := definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{{ID: "a", Order: 1, Activity: "x"}}}
	_, err = eng.SubmitRun(ctx, engine.SubmitParams{TenantID: "t", Definition: def, Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	alert(ctx, engine.AlertPauseDrainTimeout)

	stats, err := eng.Stats(ctx)
	require.NoError(t, err)
	text := scrapePipeline(t, pipeline)
	runs := 0
	for _, s := range engine.AllRunStatuses {
		require.Contains(t, text, fmt.Sprintf("weft_runs{status=%q} %d\n", s, stats.RunsByStatus[s]))
		runs += stats.RunsByStatus[s]
	}
	require.Equal(t, 1, runs)
	for _, line := range []string{
		"# TYPE weft_runs gauge\n",
		"# TYPE weft_queue_depth gauge\n",
		fmt.Sprintf("weft_queue_depth{kind=\"tasks\"} %d\n", stats.ReadyTasks),
		fmt.Sprintf("weft_queue_depth{kind=\"runs\"} %d\n", stats.QueuedRuns),
		"# TYPE weft_stale_owner_commits_rejected_total counter\n",
		"weft_stale_owner_commits_rejected_total 0\n",
		"# TYPE weft_runs_removed_total counter\n",
		"weft_runs_removed_total 0\n",
		"# TYPE weft_alerts_total counter\n",
		`weft_alerts_total{alert="PROJECTOR_LAG_HIGH"} 0` + "\n",
		`weft_alerts_total{alert="PROJECTOR_NON_CONTIGUOUS_FETCH_DETECTED"} 0` + "\n",
		`weft_alerts_total{alert="PROJECTOR_CAUSAL_VIOLATION"} 0` + "\n",
		`weft_alerts_total{alert="PAUSE_DRAIN_TIMEOUT"} 1` + "\n",
	} {
		require.Contains(t, text, line)
	}
	require.Empty(t, logs.String())

	require.NoError(t, st.Close())
	text = scrapePipeline(t, pipeline)
	require.NotContains(t, text, "weft_runs{")
	require.NotContains(t, text, "weft_queue_depth{")
	require.Contains(t, text, "weft_stale_owner_commits_rejected_total 0\n")
	require.Contains(t, text, `weft_alerts_total{alert="PAUSE_DRAIN_TIMEOUT"} 1`)
	require.Contains(t, logs.String(), "engine counts unavailable")
}

// TestStoreMetrics_GroupCommitCountsAreServedAndNothingForAStoreWithoutGroups:
// a group-committing store's groups, batches and retries are counters read at
// scrape time; a store that does not commit in groups serves none of them.
func TestStoreMetrics_GroupCommitCountsAreServedAndNothingForAStoreWithoutGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeStore(pipeline.Provider.Meter(meterName), st))
	for i := range 3 {
		_, err := st.Commit(ctx, &store.Batch{Ops: []store.Op{store.Put(store.Key("k", fmt.Sprint(i)), []byte("v"))}})
		require.NoError(t, err)
	}
	s := st.GroupStats()
	require.EqualValues(t, 3, s.Batches)
	text := scrapePipeline(t, pipeline)
	for _, want := range []string{
		"# TYPE weft_store_commit_groups_total counter\n",
		fmt.Sprintf("weft_store_commit_groups_total %d\n", s.Groups),
		"# TYPE weft_store_commit_batches_total counter\n",
		"weft_store_commit_batches_total 3\n",
		"# TYPE weft_store_commit_retries_total counter\n",
		"weft_store_commit_retries_total 0\n",
	} {
		require.Contains(t, text, want)
	}

	plain, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeStore(plain.Provider.Meter(meterName), memstore.New(memstore.Config{})))
	require.NotContains(t, scrapePipeline(t, plain), "weft_store_commit")
}

// TestScheduleMetrics_FiresSkipsMissesFailuresAndTheLagAreServedByTenantAndSchedule:
// a schedule's counters and the lag of its latest fire are served under
// their Prometheus names with tenant and schedule labels, from the scheduler
// at scrape time.
func TestScheduleMetrics_FiresSkipsMissesFailuresAndTheLagAreServedByTenantAndSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	clk := timesource.NewManual(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	eng, err := engine.New(engine.Config{Store: st, Clock: clk})
	require.NoError(t, err)
	sch, err := schedule.New(schedule.Config{Store: st, Runs: eng, Clock: clk})
	require.NoError(t, err)
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeSchedules(pipeline.Provider.Meter(meterName), sch))
	def := definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{
		{ID: "wait", Order: 1, WaitForSignal: &definition.SignalWait{SignalName: "go"}}}}
	_, err = sch.Create(ctx, schedule.CreateParams{TenantID: "acme", ScheduleID: "nightly", Definition: def,
		Spec: schedule.Spec{Interval: time.Minute, Overlap: schedule.OverlapSkip}})
	require.NoError(t, err)
	require.NotContains(t, scrapePipeline(t, pipeline), "weft_schedule_fire_lag_seconds{", "no lag before a fire")
	clk.Advance(time.Minute + 2500*time.Millisecond) // 09:01 fires 2.5 s late
	require.NoError(t, sch.Tick(ctx))
	clk.Advance(time.Minute) // 09:02 is skipped: 09:01's run waits for its signal
	require.NoError(t, sch.Tick(ctx))
	clk.Advance(5 * time.Minute) // 09:03 .. 09:06 missed, 09:07 skipped
	require.NoError(t, sch.Tick(ctx))
	text := scrapePipeline(t, pipeline)
	for _, line := range []string{
		"# TYPE weft_schedule_fires_total counter\n",
		`weft_schedule_fires_total{schedule="nightly",tenant="acme"} 1` + "\n",
		`weft_schedule_skipped_total{schedule="nightly",tenant="acme"} 2` + "\n",
		`weft_schedule_missed_total{schedule="nightly",tenant="acme"} 4` + "\n",
		`weft_schedule_failed_total{schedule="nightly",tenant="acme"} 0` + "\n",
		"# TYPE weft_schedule_fire_lag_seconds gauge\n",
		`weft_schedule_fire_lag_seconds{schedule="nightly",tenant="acme"} 2.5` + "\n",
	} {
		require.Contains(t, text, line)
	}
}

// TestEngineMetrics_PerQueueBacklogOldestAgeAndPollersByTenantAndQueue: each
// queue's backlog, the age of its oldest ready task and its pollers are
// gauges labelled by tenant and queue, so a queue whose tasks nobody takes
// shows backlog and a growing age beside zero pollers.
func TestEngineMetrics_PerQueueBacklogOldestAgeAndPollersByTenantAndQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	manual := timesource.NewManual(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	eng, err := engine.New(engine.Config{Store: memstore.New(memstore.Config{}), Clock: manual})
	require.NoError(t, err)
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeEngine(pipeline.Provider.Meter(meterName), eng, slog.New(slog.DiscardHandler)))
	def := definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{{ID: "a", Order: 1, Activity: "x"}}}
	_, err = eng.SubmitRun(ctx, engine.SubmitParams{TenantID: "t", Definition: def, Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	manual.Advance(90 * time.Second)
	text := scrapePipeline(t, pipeline)
	for _, line := range []string{
		"# TYPE weft_queue_backlog gauge\n",
		`weft_queue_backlog{queue="default",tenant="t"} 1` + "\n",
		`weft_queue_oldest_ready_age_seconds{queue="default",tenant="t"} 90` + "\n",
		`weft_queue_pollers{queue="default",tenant="t"} 0` + "\n",
	} {
		require.Contains(t, text, line)
	}

	_, err = eng.PollTasks(ctx, engine.PollParams{TenantID: "t", WorkerID: "w1", Activities: []string{"y"}})
	require.NoError(t, err)
	_, err = eng.PollTasks(ctx, engine.PollParams{TenantID: "u", WorkerID: "w2", Queue: "q2", Activities: []string{"y"}})
	require.NoError(t, err)
	text = scrapePipeline(t, pipeline)
	for _, line := range []string{
		`weft_queue_backlog{queue="default",tenant="t"} 1` + "\n",
		`weft_queue_pollers{queue="default",tenant="t"} 1` + "\n",
		`weft_queue_backlog{queue="q2",tenant="u"} 0` + "\n",
		`weft_queue_oldest_ready_age_seconds{queue="q2",tenant="u"} 0` + "\n",
		`weft_queue_pollers{queue="q2",tenant="u"} 1` + "\n",
	} {
		require.Contains(t, text, line)
	}
}

func TestMetrics_ASQLStoreServesItsReadRetries(t *testing.T) {
	t.Parallel()
	db := sqltest.Require(t)
	st := db.Open(t, db.NewSchema(t))
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeStore(pipeline.Provider.Meter(meterName), st))
	text := scrapePipeline(t, pipeline)
	require.Contains(t, text, "# TYPE weft_store_read_retries_total counter\n")
	require.Contains(t, text, "weft_store_read_retries_total 0\n")
	require.Contains(t, text, "weft_store_commit_retries_total 0\n")
}

// TestFlowMetrics_KeysSlotsAndThrottleBacklogAreBoundedToTheTopKeysAndOther:
// 25 concurrency keys each holding a slot (one holding two) serve the top 20
// by name and the other 5 summed as key "other"; a throttle key's backlog is
// how far its bucket runs ahead; the claims held back are counted by kind.
func TestFlowMetrics_KeysSlotsAndThrottleBacklogAreBoundedToTheTopKeysAndOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	manual := timesource.NewManual(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	eng, err := engine.New(engine.Config{Store: memstore.New(memstore.Config{}), Clock: manual})
	require.NoError(t, err)
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeEngine(pipeline.Provider.Meter(meterName), eng, slog.New(slog.DiscardHandler)))
	def := definition.Definition{PlanID: "p", PlanVersion: "1", Actions: []definition.Action{{ID: "a", Order: 1, Activity: "x",
		Concurrency: &definition.StepConcurrency{Key: "input.k", Limit: 2}}}}
	submit := func(d definition.Definition, key string) {
		_, err := eng.SubmitRun(ctx, engine.SubmitParams{TenantID: "t", Definition: d, Start: true, Input: []byte(`{"k":"` + key + `"}`)})
		require.NoError(t, err)
	}
	for i := range 25 {
		submit(def, fmt.Sprintf("key-%02d", i))
	}
	submit(def, "key-00") // key-00 holds two: the top key
	thr := definition.Definition{PlanID: "q", PlanVersion: "1", Actions: []definition.Action{{ID: "b", Order: 1, Activity: "y",
		Throttle: &definition.StepThrottle{Key: "'psp'", Rate: "1/1m", Scope: definition.ScopeTenant}}}}
	submit(thr, "")
	submit(thr, "")
	tasks, err := eng.PollTasks(ctx, engine.PollParams{TenantID: "t", WorkerID: "w", Activities: []string{"x", "y"}, MaxTasks: 100})
	require.NoError(t, err)
	require.Len(t, tasks, 27, "every concurrency task and one throttled one")
	text := scrapePipeline(t, pipeline)
	for _, line := range []string{
		"# TYPE weft_flow_slots_in_use gauge\n",
		`weft_flow_slots_in_use{key="key-00",scope="plan:p",tenant="t"} 2` + "\n",
		`weft_flow_slots_in_use{key="other",scope="other",tenant="t"} 5` + "\n",
		`weft_flow_throttle_backlog_seconds{key="psp",scope="tenant",tenant="t"} 60` + "\n",
		`weft_flow_claims_held_total{kind="throttle"} 1` + "\n",
	} {
		require.Contains(t, text, line)
	}
	require.Equal(t, 21, strings.Count(text, "weft_flow_slots_in_use{"), "the top 20 keys and other")
}

// TestRunConcurrencyMetrics_KeysInUseAndWaitingAreBoundedToTheTopKeysAndOther:
// 25 run concurrency keys each with a started run, one of them with two
// more waiting, serve the top 20 by name (the busiest first) and the other
// 5 summed as key "other", per tenant.
func TestRunConcurrencyMetrics_KeysInUseAndWaitingAreBoundedToTheTopKeysAndOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eng, err := engine.New(engine.Config{Store: memstore.New(memstore.Config{})})
	require.NoError(t, err)
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	require.NoError(t, observeEngine(pipeline.Provider.Meter(meterName), eng, slog.New(slog.DiscardHandler)))
	def := definition.Definition{PlanID: "p", PlanVersion: "1", Concurrency: &definition.RunConcurrency{Key: "input.k", Limit: 1},
		Actions: []definition.Action{{ID: "a", Order: 1, Activity: "x"}}}
	submit := func(key string) {
		_, err := eng.SubmitRun(ctx, engine.SubmitParams{TenantID: "t", Definition: def, Start: true, Input: []byte(`{"k":"` + key + `"}`)})
		require.NoError(t, err)
	}
	for i := range 25 {
		submit(fmt.Sprintf("key-%02d", i))
	}
	submit("key-07")
	submit("key-07")
	text := scrapePipeline(t, pipeline)
	for _, line := range []string{
		"# TYPE weft_run_concurrency_in_use gauge\n",
		`weft_run_concurrency_in_use{key="key-07",plan="p",tenant="t"} 1` + "\n",
		`weft_run_concurrency_waiting{key="key-07",plan="p",tenant="t"} 2` + "\n",
		`weft_run_concurrency_in_use{key="other",plan="other",tenant="t"} 5` + "\n",
		`weft_run_concurrency_waiting{key="other",plan="other",tenant="t"} 0` + "\n",
	} {
		require.Contains(t, text, line)
	}
	require.Equal(t, 21, strings.Count(text, "weft_run_concurrency_in_use{"), "the top 20 keys and other")
}
