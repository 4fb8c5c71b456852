package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/bench"
	"github.com/weft-dev/weft/internal/redisconn"
)

// TestRun_TinyScaleReportHasEveryFigure runs the harness at tiny scale — a
// real weftd, real workers — on the embedded configuration, and on the
// cluster one too when PostgreSQL and Redis answer, and checks the report's
// shape. It asserts nothing about speed.
func TestRun_TinyScaleReportHasEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs weftd: skipped in -short")
	}
	configs := []string{bench.Embedded}
	if servicesUp(t) {
		configs = append(configs, bench.Cluster)
	}
	cfg := bench.Config{Workflows: 5, Steps: 2, Clients: []int{2}, Configs: configs, Warmup: -1,
		CeilingConns: []int{1, 4}, CeilingDuration: 50 * time.Millisecond, Workers: 2, WorkerSlots: 2,
		PostgresURL: postgresURL(), RedisURL: bench.DefaultRedisURL}
	r, err := bench.Run(t.Context(), cfg)
	require.NoError(t, err)

	require.Len(t, r.Ceilings, 2*len(configs), "two concurrencies per database")
	for _, c := range r.Ceilings {
		require.Positive(t, c.Commits, "%s/%d", c.Backend, c.Conns)
		require.Positive(t, c.Latency.P50, "%s/%d", c.Backend, c.Conns)
	}
	require.Len(t, r.Measurements, 2*len(configs), "each configuration, and again with flow control on every step")
	flow := 0
	for _, m := range r.Measurements {
		if m.FlowControl {
			flow++
		}
		require.Equal(t, 5, m.Workflows, m.Config)
		require.Equal(t, 2, m.Steps, m.Config)
		require.Positive(t, m.StepsSec, m.Config)
		require.InDelta(t, 2*m.WorkflowsSec, m.StepsSec, 1e-9, m.Config)
		require.Positive(t, m.Latency.P50, m.Config)
		require.LessOrEqual(t, m.Latency.P50, m.Latency.P99, m.Config)
		require.GreaterOrEqual(t, m.WeftdCPUSeconds, 0.0, m.Config)
		require.Positive(t, m.WeftdPeakRSSMB, m.Config)
		require.NotNil(t, m.Ceiling, m.Config)
		require.Equal(t, 4, m.Ceiling.Conns, "C=2 is compared with the 4-committer ceiling")
		require.Positive(t, m.StepsPerCommit, m.Config)
	}
	require.Equal(t, len(configs), flow, "one flow-controlled measurement per configuration")
	require.Len(t, r.FanOuts, 3*len(configs), "a sequence and two fan-outs per configuration")
	for _, f := range r.FanOuts {
		require.Equal(t, bench.FanOutItems, f.Items, f.Shape)
		require.Positive(t, f.ItemsSec, "%s %s %d", f.Config, f.Shape, f.MaxConcurrency)
	}
	require.Len(t, r.Targets, 5)
	for _, tg := range r.Targets {
		require.Contains(t, []string{bench.Pass, bench.Miss, bench.NotMeasured}, tg.Status, tg.Name)
	}

	var table bytes.Buffer
	require.NoError(t, r.RenderTable(&table))
	require.Contains(t, table.String(), "embedded")
	require.Contains(t, table.String(), "embedded throughput")
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back))
	require.Contains(t, back, "measurements")
	require.Contains(t, back, "ceilings")
	require.Contains(t, back, "targets")
	require.Contains(t, back, "fan_outs")
	require.Contains(t, table.String(), "Fan-out")
}

// TestRun_RefusesABadConfig: a configuration the harness does not know is
// refused before anything starts.
func TestRun_RefusesABadConfig(t *testing.T) {
	_, err := bench.Run(t.Context(), bench.Config{Configs: []string{"laptop"}})
	require.ErrorContains(t, err, `configuration must be "cluster" or "embedded", got "laptop"`)
}

func postgresURL() string {
	if u := os.Getenv("WEFT_TEST_POSTGRES_URL"); u != "" {
		return u
	}
	return bench.DefaultPostgresURL
}

// servicesUp reports whether PostgreSQL and Redis answer; without them the
// cluster configuration is left out, and the test says so.
func servicesUp(t *testing.T) bool {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, postgresURL())
	if err == nil {
		_ = conn.Close(ctx)
		rdb, _ := redisconn.Open(bench.DefaultRedisURL)
		defer rdb.Close()
		err = rdb.Ping(ctx).Err()
	}
	if err != nil {
		t.Logf("PostgreSQL or Redis not reachable (%v): measuring the embedded configuration only", err)
		return false
	}
	return true
}

// TestRun_TinyScaleModeMeasuresBothTargets runs the scale mode at tiny
// scale on the embedded configuration — a template run, two fills, a
// hundred active runs, real weftd processes — and checks the report's
// shape and the targets it judges. It asserts nothing about speed.
func TestRun_TinyScaleModeMeasuresBothTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs weftd: skipped in -short")
	}
	// 48 steps a measurement: weftd's CPU time is read in 10 ms ticks, and a
	// handful of steps can cost less than one, which leaves the cost per
	// step unmeasured.
	cfg := bench.Config{Workflows: 12, Steps: 4, Warmup: -1, Workers: 2, WorkerSlots: 2,
		Scale: &bench.ScaleConfig{Only: true, Stored: []int{100, 200}, Active: 100, Submitters: 8, Clients: 2, Rounds: 2,
			Settle: 500 * time.Millisecond}}
	r, err := bench.Run(t.Context(), cfg)
	require.NoError(t, err)
	require.Empty(t, r.Ceilings, "scale only")
	require.Empty(t, r.Measurements, "scale only")
	require.NotNil(t, r.Scale)

	require.Len(t, r.Scale.Stored, 2)
	for i, m := range r.Scale.Stored {
		require.Equal(t, bench.Embedded, m.Config)
		require.Equal(t, []int{100, 200}[i], m.StoredRuns)
		require.Positive(t, m.Filled)
		require.Positive(t, m.FillRecords)
		require.Positive(t, m.StoreMiB)
		require.Equal(t, 3, m.Verified, "three clones read back through weftd")
		require.Len(t, m.Rounds, 2)
		require.Contains(t, m.Rounds, m.Workload, "the median round stands for the size")
		require.Equal(t, 12, m.Workload.Workflows)
		require.Positive(t, m.Workload.StepsSec)
		require.Positive(t, m.Workload.WeftdPeakRSSMB)
	}
	require.Equal(t, 100, r.Scale.Stored[0].Filled)
	require.Equal(t, 76, r.Scale.Stored[1].Filled, "the first measurement's 2 x 12 workflows count as stored runs")

	require.Len(t, r.Scale.Active, 1)
	a := r.Scale.Active[0]
	require.Equal(t, 100, a.ActiveRuns)
	require.Equal(t, 100, a.Counted, "every active run is RUNNING in the status index")
	var names []string
	for _, p := range a.Phases {
		names = append(names, p.Name)
		require.Positive(t, p.RSSMiB, p.Name)
		require.GreaterOrEqual(t, p.PeakRSSMiB, p.RSSMiB, p.Name)
	}
	require.Equal(t, []string{bench.PhaseSubmitted, bench.PhaseSettled, bench.PhaseWorkload,
		bench.PhaseRestartedSettled, bench.PhaseRestartedWorkload}, names)
	require.NotNil(t, a.Phases[2].Workload)
	require.NotNil(t, a.Phases[4].Workload)

	require.Len(t, r.Targets, 5)
	byName := map[string]bench.Target{}
	for _, tg := range r.Targets {
		byName[tg.Name] = tg
	}
	cost := byName["cost per step, 10k vs 1M stored runs"]
	require.Contains(t, []string{bench.Pass, bench.Miss}, cost.Status)
	require.Contains(t, cost.Measured, "embedded: 100 ")
	require.Contains(t, cost.Measured, "(largest N 200, not 1M)")
	rss := byName["weftd RSS with 100k active runs"]
	require.Contains(t, []string{bench.Pass, bench.Miss}, rss.Status)
	require.Contains(t, rss.Measured, "(not 100k)")
	require.Equal(t, bench.NotMeasured, byName["embedded throughput"].Status)

	var table bytes.Buffer
	require.NoError(t, r.RenderTable(&table))
	require.Contains(t, table.String(), "Scale: W=12 workflows")
	require.Contains(t, table.String(), "with 100 active runs")
}
