package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/pebblestore"
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
