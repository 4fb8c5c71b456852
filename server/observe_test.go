package server

import (
	"context"
	"fmt"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/telemetry"
)

// TestBoundedLabels_ValuesPastTheBoundAreOther: the first max distinct
// values of a label keep their own series; every later one is OtherLabel,
// while the admitted ones stay themselves (docs/observability.md#cardinality).
func TestBoundedLabels_ValuesPastTheBoundAreOther(t *testing.T) {
	t.Parallel()
	b := newBoundedLabels(MaxPlanLabels)
	for i := range MaxPlanLabels {
		require.Equal(t, fmt.Sprint("plan-", i), b.of(fmt.Sprint("plan-", i)))
	}
	require.Equal(t, OtherLabel, b.of("one-too-many"))
	require.Equal(t, OtherLabel, b.of("another"))
	require.Equal(t, "plan-7", b.of("plan-7"), "an admitted value keeps its series")
}

// TestNewObserver_NothingToObserveIsNil: with tracing and metrics both off
// there is no observer, so the engine calls nothing.
func TestNewObserver_NothingToObserveIsNil(t *testing.T) {
	t.Parallel()
	o, err := NewObserver(nil, nil)
	require.NoError(t, err)
	require.Nil(t, o)
}

// TestRunMetrics_PerPlanAndQueueSeriesAreServedWithTheirLabels: a run whose
// first step succeeds and whose second fails for good is served as
// weft_run_duration_seconds{plan,status}, weft_step_duration_seconds{outcome,plan,queue},
// weft_step_failures_total{error_class,plan} and weft_queue_wait_seconds{plan,queue},
// with the values the run gave them.
func TestRunMetrics_PerPlanAndQueueSeriesAreServedWithTheirLabels(t *testing.T) {
	t.Parallel()
	metrics, err := telemetry.NewMetrics()
	require.NoError(t, err)
	observer, err := NewObserver(nil, metrics)
	require.NoError(t, err)
	st := memstore.New(memstore.Config{})
	t.Cleanup(func() { _ = st.Close() })
	eng, err := engine.New(engine.Config{Store: st, Observer: observer})
	require.NoError(t, err)
	url := testServer(t, Config{Metrics: metrics}.WithEngine(eng))
	b := &bundle{t: t, c: apitest.NewClients(url, apitest.Protocols[0])}
	one := uint32(1)
	b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"},
		&weftv1.Action{Id: "b", Order: 2, Activity: "y", Retry: &weftv1.RetryPolicy{MaxAttempts: &one}, OnFailure: weftv1.OnFailure_ON_FAILURE_ABORT}))
	b.complete(b.poll("x"))
	_, err = b.c.Workers.FailTask(context.Background(), connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: b.poll("y").GetTaskToken(),
		WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_VALIDATION, Message: "bad"}))
	require.NoError(t, err)

	text := scrape(t, url)
	families := parseExposition(t, text)
	for name, want := range map[string]family{
		"weft_run_duration_seconds":  {typ: "histogram", labels: map[string]bool{"plan,status": true}},
		"weft_step_duration_seconds": {typ: "histogram", labels: map[string]bool{"outcome,plan,queue": true}},
		"weft_step_failures_total":   {typ: "counter", labels: map[string]bool{"error_class,plan": true}},
		"weft_queue_wait_seconds":    {typ: "histogram", labels: map[string]bool{"plan,queue": true}},
	} {
		got := families[name]
		require.NotNil(t, got, "%s is served", name)
		require.Equal(t, want.typ, got.typ, name)
		require.Equal(t, want.labels, got.labels, name)
	}
	require.Contains(t, text, `weft_run_duration_seconds_count{plan="plan",status="failed"} 1`)
	require.Contains(t, text, `weft_step_duration_seconds_count{outcome="completed",plan="plan",queue="default"} 1`)
	require.Contains(t, text, `weft_step_duration_seconds_count{outcome="failed",plan="plan",queue="default"} 1`)
	require.Contains(t, text, `weft_step_failures_total{error_class="validation",plan="plan"} 1`)
	require.Contains(t, text, `weft_queue_wait_seconds_count{plan="plan",queue="default"} 2`)
}
