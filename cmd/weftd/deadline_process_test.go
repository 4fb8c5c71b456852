package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// claimAll polls activity "stall" as worker until it holds n tasks, and
// never reports them: a worker that died with its claims.
func claimAll(t *testing.T, c *client.Client, worker string, n int) {
	t.Helper()
	got := 0
	require.Eventually(t, func() bool {
		res, err := c.PollTasks(context.Background(), &weftv1.PollTasksRequest{WorkerId: worker,
			Activities: []*weftv1.ActivityRegistration{{Name: "stall"}}, MaxTasks: uint32(n - got), WaitMs: 200})
		require.NoError(t, err)
		got += len(res.GetTasks())
		return got == n
	}, 30*time.Second, time.Millisecond)
}

// TestProcess_AttemptDeadlinesFireOnceAcrossAKill9AndARestart: the claims
// of eight runs, whose worker never reports, have deadlines spread over
// three seconds, kept in their task records and indexed by their runs'
// deadline index entries (docs/persisted-format.md, tmd:). weftd (Pebble)
// is killed with SIGKILL once the first has timed out, and restarted on the
// same data: every attempt times out once — none lost, none twice — and
// its retry, claimed by a live worker, completes the run.
func TestProcess_AttemptDeadlinesFireOnceAcrossAKill9AndARestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("weftd processes: skipped in -short")
	}
	const runs = 8
	dir := t.TempDir()
	a := startWeftdIn(t, dir)
	ctx := context.Background()
	var ids []string
	for i := range runs {
		res, err := a.Client.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, RunRequestId: fmt.Sprintf("stall-%d", i),
			Definition: &weftv1.WorkflowDefinition{PlanId: "stall", PlanVersion: "1", Actions: []*weftv1.Action{{
				Id: "stall", Order: 1, Activity: "stall", TimeoutMs: proto.Uint32(uint32(1000 + 400*i)),
				Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(2), InitialBackoffMs: proto.Uint32(1)},
			}}}})
		require.NoError(t, err)
		ids = append(ids, res.GetRun().GetRunId())
	}
	claimAll(t, a.Client, "dead", runs)
	require.Eventually(t, func() bool { // the first claim timed out; the last is due two seconds later
		run, err := a.Client.GetRun(ctx, ids[0])
		return err == nil && len(run.GetSteps()[0].GetAttempts()) > 0
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()

	b := startWeftdIn(t, dir)
	done := 0
	require.Eventually(t, func() bool {
		res, err := b.Client.PollTasks(ctx, &weftv1.PollTasksRequest{WorkerId: "alive",
			Activities: []*weftv1.ActivityRegistration{{Name: "stall"}}, MaxTasks: runs, WaitMs: 200})
		require.NoError(t, err)
		for _, task := range res.GetTasks() {
			_, err := b.Client.CompleteTask(ctx, &weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(), WorkerId: "alive",
				Output: structpb.NewStringValue("ok")})
			require.NoError(t, err)
			done++
		}
		return done == runs
	}, 60*time.Second, time.Millisecond, "every run's retry is claimed once")
	for _, id := range ids {
		require.Eventually(t, func() bool {
			run, err := b.Client.GetRun(ctx, id)
			return err == nil && run.GetStatus() == weftv1.RunStatus_RUN_STATUS_COMPLETED
		}, 30*time.Second, 10*time.Millisecond, "run %s completes", id)
		events, err := b.Client.ListEvents(ctx, &weftv1.ListEventsRequest{RunId: id, PageSize: 1000})
		require.NoError(t, err)
		outcomes := map[weftv1.AttemptOutcome]int{}
		for _, e := range events.GetEvents() {
			if r := e.GetStepAttemptRecorded(); r != nil {
				outcomes[r.GetAttempt().GetOutcome()]++
			}
		}
		require.Equal(t, map[weftv1.AttemptOutcome]int{weftv1.AttemptOutcome_ATTEMPT_OUTCOME_TIMED_OUT: 1,
			weftv1.AttemptOutcome_ATTEMPT_OUTCOME_SUCCEEDED: 1}, outcomes, "run %s: one timeout, then its retry", id)
	}
}
