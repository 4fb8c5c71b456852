package main

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// TestProcess_AttemptDeadlinesOfClaimsWithoutATaskRecordFireOnceAcrossAKill9AndARestart:
// eight runs' second steps are claimed by eager dispatch for a worker that
// never reports them, with deadlines spread over three seconds. Such a
// claim writes no task record: its run's checkpoint keeps it, and its run's
// deadline index entry (tmd:) indexes its deadline. weftd (Pebble) is
// killed with SIGKILL once the first has timed out; the store then holds no
// record of the claims not yet timed out. Restarted on the same data, every
// attempt times out once — none lost, none twice — and its retry, claimed
// by a live worker, completes the run.
func TestProcess_AttemptDeadlinesOfClaimsWithoutATaskRecordFireOnceAcrossAKill9AndARestart(t *testing.T) {
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
		res, err := a.Client.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, RunRequestId: fmt.Sprintf("eager-stall-%d", i),
			Definition: &weftv1.WorkflowDefinition{PlanId: "eager-stall", PlanVersion: "1", Actions: []*weftv1.Action{
				{Id: "go", Order: 1, Activity: "go"},
				{Id: "stall", Order: 2, Activity: "stall", TimeoutMs: proto.Uint32(uint32(1000 + 400*i)),
					Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(2), InitialBackoffMs: proto.Uint32(1)}},
			}}})
		require.NoError(t, err)
		ids = append(ids, res.GetRun().GetRunId())
	}
	var stalled []string // the task ids of the claims nobody reports
	require.Eventually(t, func() bool {
		res, err := a.Client.PollTasks(ctx, &weftv1.PollTasksRequest{WorkerId: "dead",
			Activities: []*weftv1.ActivityRegistration{{Name: "go"}}, MaxTasks: 1, WaitMs: 200})
		require.NoError(t, err)
		for _, task := range res.GetTasks() {
			done, err := a.Client.CompleteTask(ctx, &weftv1.CompleteTaskRequest{TaskToken: task.GetTaskToken(), WorkerId: "dead",
				Output: structpb.NewStringValue("ok"), NextTasks: &weftv1.PollTasksRequest{WorkerId: "dead",
					Activities: []*weftv1.ActivityRegistration{{Name: "stall"}}, MaxTasks: 1}})
			require.NoError(t, err)
			require.Len(t, done.GetTasks(), 1, "eager dispatch claims the run's next step")
			stalled = append(stalled, done.GetTasks()[0].GetTaskId())
		}
		return len(stalled) == runs
	}, 30*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { // the first claim timed out; the last is due two seconds later
		for _, id := range ids {
			if run, err := a.Client.GetRun(ctx, id); err == nil && len(run.GetSteps()[1].GetAttempts()) > 0 {
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, a.Cmd.Process.Signal(syscall.SIGKILL))
	_ = a.Wait()

	st, err := pebblestore.Open(dir, pebblestore.Config{})
	require.NoError(t, err)
	absent := 0
	for _, id := range stalled {
		_, err := st.Get(ctx, []byte("task:"+id))
		if errors.Is(err, store.ErrNotFound) {
			absent++
		} else {
			require.NoError(t, err)
		}
	}
	require.NoError(t, st.Close())
	require.NotZero(t, absent, "claims not yet timed out at the kill have no task record")

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
			if r := e.GetStepAttemptRecorded(); r != nil && e.GetStepId() == "stall" {
				outcomes[r.GetAttempt().GetOutcome()]++
			}
		}
		require.Equal(t, map[weftv1.AttemptOutcome]int{weftv1.AttemptOutcome_ATTEMPT_OUTCOME_TIMED_OUT: 1,
			weftv1.AttemptOutcome_ATTEMPT_OUTCOME_SUCCEEDED: 1}, outcomes, "run %s: one timeout, then its retry", id)
	}
}
