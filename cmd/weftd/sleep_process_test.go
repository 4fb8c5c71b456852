package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// sleepRuns submits n runs through c, each a single step that sleeps
// base + i×step, and answers their ids.
func sleepRuns(t *testing.T, c *client.Client, n int, base, step time.Duration) []string {
	t.Helper()
	var ids []string
	for i := range n {
		res, err := c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Start: true, RunRequestId: fmt.Sprintf("nap-%d", i),
			Definition: &weftv1.WorkflowDefinition{PlanId: "nap", PlanVersion: "1", Actions: []*weftv1.Action{
				{Id: "nap", Order: 1, SleepMs: proto.Uint32(uint32((base + time.Duration(i)*step).Milliseconds()))},
			}}})
		require.NoError(t, err)
		ids = append(ids, res.GetRun().GetRunId())
	}
	return ids
}

// waitFirstWoke waits until the first run's sleep has fired.
func waitFirstWoke(t *testing.T, c *client.Client, ids []string) {
	t.Helper()
	require.Eventually(t, func() bool {
		run, err := c.GetRun(context.Background(), ids[0])
		return err == nil && run.GetStatus() == weftv1.RunStatus_RUN_STATUS_COMPLETED
	}, 30*time.Second, 10*time.Millisecond)
}

// requireEachSleptOnce waits until every run completed, then requires that
// each slept once and woke once, never before its wake time.
func requireEachSleptOnce(t *testing.T, c *client.Client, ids []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		require.Eventually(t, func() bool {
			run, err := c.GetRun(ctx, id)
			return err == nil && run.GetStatus() == weftv1.RunStatus_RUN_STATUS_COMPLETED
		}, 60*time.Second, 50*time.Millisecond, "run %s completes", id)
		run, err := c.GetRun(ctx, id)
		require.NoError(t, err)
		nap := run.GetSteps()[0]
		require.False(t, nap.GetCompletedAt().AsTime().Before(nap.GetWakeAt().AsTime()), "run %s woke before its wake time", id)
		events, err := c.ListEvents(ctx, &weftv1.ListEventsRequest{RunId: id, PageSize: 1000})
		require.NoError(t, err)
		slept, woke := 0, 0
		for _, e := range events.GetEvents() {
			switch {
			case e.GetStepSleeping() != nil:
				slept++
			case e.GetStepCompleted() != nil:
				woke++
				require.Equal(t, "sleep", e.GetStepCompleted().GetSource())
			}
		}
		require.Equal(t, 1, slept, "run %s slept once", id)
		require.Equal(t, 1, woke, "run %s's sleep fired once", id)
	}
}

// TestProcess_SleepsFireOnceAcrossAKill9AndARestart: weftd (Pebble) is
// killed with SIGKILL while runs' sleeps come due — some fired, some not —
// and restarted on the same data: every sleep fires once, none before its
// wake time, none lost (docs/semantics.md#sleep).
func TestProcess_SleepsFireOnceAcrossAKill9AndARestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("weftd processes: skipped in -short")
	}
	dir := t.TempDir()
	a := startWeftdIn(t, dir)
	ids := sleepRuns(t, a.Client, 12, time.Second, 100*time.Millisecond)
	waitFirstWoke(t, a.Client, ids) // the first sleep fired; the last is due a second later
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()
	b := startWeftdIn(t, dir)
	requireEachSleptOnce(t, b.Client, ids)
}

// TestCluster_SleepsFireOnceWhenTheirWeftdIsKilledAndAnotherTakesOver: two
// weftds on one PostgreSQL (with Redis); the one that started the runs is
// killed with SIGKILL while their sleeps come due; the other fires every
// sleep once, none before its time, none lost.
func TestCluster_SleepsFireOnceWhenTheirWeftdIsKilledAndAnotherTakesOver(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("cluster processes: skipped in -short")
	}
	db := sqltest.Require(t)
	flags := testkit.ClusterFlags(t, db)
	a := startWeftdIn(t, t.TempDir(), flags...)
	b := startWeftdIn(t, t.TempDir(), flags...)
	ids := sleepRuns(t, a.Client, 12, time.Second, 100*time.Millisecond)
	waitFirstWoke(t, a.Client, ids)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()
	requireEachSleptOnce(t, b.Client, ids)
}
