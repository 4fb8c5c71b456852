package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/redistest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

func TestOptions_RetentionIsADurationOrDaysAndZeroKeepsForever(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	for text, want := range map[string]time.Duration{
		"": 30 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "720h": 720 * time.Hour, "90s": 90 * time.Second,
		"0": engine.RetainForever, "0d": engine.RetainForever,
	} {
		args := []string{}
		if text != "" {
			args = []string{"--retention", text}
		}
		opts, err := parseOptions(args, none, io.Discard)
		require.NoError(t, err, text)
		require.Equal(t, want, opts.retention, text)
	}
	opts, err := parseOptions(nil, func(k string) string { return map[string]string{"WEFT_RETENTION": "7d"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 7*24*time.Hour, opts.retention)
	for _, bad := range []string{"soon", "-1h", "1.5d", "5000d", "10ms"} {
		_, err := parseOptions([]string{"--retention", bad}, none, io.Discard)
		require.ErrorContains(t, err, "retention must be", bad)
		require.ErrorContains(t, err, bad)
	}
}

// TestWeftd_RetentionRemovesFinishedRunsAndNothingElse runs weftd
// processes (embedded, and on PostgreSQL with Redis) with --retention 1s: a
// finished run is removed soon after it ends, and a waiting run stays.
func TestWeftd_RetentionRemovesFinishedRunsAndNothingElse(t *testing.T) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) {
		checkRetention(t, startWeftdIn(t, t.TempDir(), "--retention", "1s"))
	})
	t.Run("postgresql+redis", func(t *testing.T) {
		db := sqltest.Require(t)
		redistest.Require(t)
		checkRetention(t, startWeftdIn(t, t.TempDir(), with(testkit.ClusterFlags(t, db), "--retention", "1s")...))
	})
}

func checkRetention(t *testing.T, d *daemon) {
	ctx := context.Background()
	c := apitest.NewClients(d.URL, apitest.Protocols[0])
	submit := func(action *weftv1.Action) string {
		res, err := c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
			Definition: &weftv1.WorkflowDefinition{PlanId: "retention", PlanVersion: "1", Actions: []*weftv1.Action{action}}}))
		require.NoError(t, err)
		return res.Msg.GetRun().GetRunId()
	}
	waiting := submit(&weftv1.Action{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "never"}})
	finished := submit(&weftv1.Action{Id: "work", Order: 1, Activity: "retention-work"})
	polled, err := c.Workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: "w",
		Activities: []*weftv1.ActivityRegistration{{Name: "retention-work"}}, WaitMs: 5000}))
	require.NoError(t, err)
	require.Len(t, polled.Msg.GetTasks(), 1)
	_, err = c.Workers.CompleteTask(ctx, connect.NewRequest(&weftv1.CompleteTaskRequest{WorkerId: "w",
		TaskToken: polled.Msg.GetTasks()[0].GetTaskToken(), Output: structpb.NewBoolValue(true)}))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.Runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: finished}))
		return connect.CodeOf(err) == connect.CodeNotFound
	}, 20*time.Second, 50*time.Millisecond, "the finished run was never removed:\n%s", d.Logs())
	// The run is hidden by the removal's first batch; the line is logged after
	// its last, and reaches us through the child's output pipe.
	require.Eventually(t, func() bool { return strings.Contains(d.Logs(), `"msg":"retention removed a run"`) },
		20*time.Second, 50*time.Millisecond, "the removal never finished:\n%s", d.Logs())
	res, err := c.Runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: waiting}))
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, res.Msg.GetRun().GetStatus())
}
