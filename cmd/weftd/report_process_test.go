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

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// TestProcess_ReportsTheCheckpointEndedStayDuplicatesAcrossAKill9AndARestart:
// a completion writes no task record — the checkpoint it rewrites ends the
// claim (docs/persisted-format.md, task:). weftd (Pebble) is
// killed with SIGKILL right after its worker's completions, and restarted
// on the same data: the same completions sent again are duplicates, a
// heartbeat with their tokens asks to stop, and neither the attempt
// deadlines nor the heartbeat timeouts of the ended claims, long passed,
// time anything out; each run's next step completes, one attempt a step.
func TestProcess_ReportsTheCheckpointEndedStayDuplicatesAcrossAKill9AndARestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("weftd processes: skipped in -short")
	}
	const runs = 4
	dir := t.TempDir()
	a := startWeftdIn(t, dir)
	ctx := context.Background()
	var ids []string
	for i := range runs {
		res, err := a.Client.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, RunRequestId: fmt.Sprintf("report-%d", i),
			Definition: &weftv1.WorkflowDefinition{PlanId: "report", PlanVersion: "1", Actions: []*weftv1.Action{
				{Id: "first", Order: 1, Activity: "first", TimeoutMs: proto.Uint32(1000), HeartbeatTimeoutMs: proto.Uint32(500)},
				{Id: "second", Order: 2, Activity: "second", DependsOn: []string{"first"}},
			}}})
		require.NoError(t, err)
		ids = append(ids, res.GetRun().GetRunId())
	}
	var tokens []string
	require.Eventually(t, func() bool {
		res, err := a.Client.PollTasks(ctx, &weftv1.PollTasksRequest{WorkerId: "w",
			Activities: []*weftv1.ActivityRegistration{{Name: "first"}}, MaxTasks: uint32(runs - len(tokens)), WaitMs: 200})
		require.NoError(t, err)
		for _, task := range res.GetTasks() {
			done, err := a.Client.CompleteTask(ctx, &weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(), WorkerId: "w",
				Output: structpb.NewStringValue("ok")})
			require.NoError(t, err)
			require.False(t, done.GetDuplicate())
			tokens = append(tokens, task.GetTaskToken())
		}
		return len(tokens) == runs
	}, 30*time.Second, time.Millisecond)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()

	time.Sleep(1500 * time.Millisecond) // past every ended claim's deadline and heartbeat timeout
	b := startWeftdIn(t, dir)
	for _, token := range tokens {
		again, err := b.Client.CompleteTask(ctx, &weftv1.CompleteTaskRequest{TaskToken: token, WorkerId: "w",
			Output: structpb.NewStringValue("ok")})
		require.NoError(t, err)
		require.True(t, again.GetDuplicate(), "a completion sent again after the restart")
		hb, err := b.Client.HeartbeatTask(ctx, &weftv1.HeartbeatTaskRequest{TaskToken: token, WorkerId: "w"})
		require.NoError(t, err)
		require.True(t, hb.GetCancelRequested(), "a heartbeat of an ended claim asks to stop")
	}
	done := 0
	require.Eventually(t, func() bool {
		res, err := b.Client.PollTasks(ctx, &weftv1.PollTasksRequest{WorkerId: "w",
			Activities: []*weftv1.ActivityRegistration{{Name: "second"}, {Name: "first"}}, MaxTasks: runs, WaitMs: 200})
		require.NoError(t, err)
		for _, task := range res.GetTasks() {
			require.Equal(t, "second", task.GetActivity(), "no attempt of first runs again")
			_, err := b.Client.CompleteTask(ctx, &weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(), WorkerId: "w",
				Output: structpb.NewStringValue("ok")})
			require.NoError(t, err)
			done++
		}
		return done == runs
	}, 60*time.Second, time.Millisecond)
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
		require.Equal(t, map[weftv1.AttemptOutcome]int{weftv1.AttemptOutcome_ATTEMPT_OUTCOME_SUCCEEDED: 2}, outcomes,
			"run %s: one attempt a step, none timed out", id)
	}
}
