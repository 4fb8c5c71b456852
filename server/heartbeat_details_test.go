package server

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

func TestHeartbeatDetails_TheRetriedTaskCarriesTheLastDetailsSent(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x", Retry: &weftv1.RetryPolicy{InitialBackoffMs: proto.Uint32(1)}}))
		first := b.poll("x")
		require.Nil(t, first.GetHeartbeatDetails())
		details, err := structpb.NewValue(map[string]any{"page": 3})
		require.NoError(t, err)
		_, err = b.c.Workers.HeartbeatTask(ctx, connect.NewRequest(&weftv1.HeartbeatTaskRequest{
			TaskToken: first.GetTaskToken(), WorkerId: "w1", Details: details}))
		require.NoError(t, err)
		_, err = b.c.Workers.FailTask(ctx, connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: first.GetTaskToken(),
			WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_TRANSIENT}))
		require.NoError(t, err)
		second := b.poll("x")
		require.Equal(t, uint32(2), second.GetEngineAttemptId())
		require.True(t, proto.Equal(details, second.GetHeartbeatDetails()), "got %v", second.GetHeartbeatDetails())
	})
}

func TestFailTask_RetryAfterPutsTheNextAttemptAfterItWhenLongerThanTheBackoff(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x", Retry: &weftv1.RetryPolicy{InitialBackoffMs: proto.Uint32(1)}}))
		task := b.poll("x")
		before := time.Now().Truncate(time.Millisecond) // the API answers milliseconds
		res, err := b.c.Workers.FailTask(ctx, connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: task.GetTaskToken(),
			WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_RATE_LIMIT, RetryAfterMs: 3_600_000}))
		require.NoError(t, err)
		require.True(t, res.Msg.GetWillRetry())
		due := b.getRun(run.GetRunId()).GetSteps()[0].GetNextAttemptAt().AsTime()
		require.False(t, due.Before(before.Add(time.Hour)), "due %v, failed after %v", due, before)
	})
}

func TestFailTask_RetryAfterOverADayIsRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		task := b.poll("x")
		_, err := b.c.Workers.FailTask(context.Background(), connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: task.GetTaskToken(),
			WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_RATE_LIMIT, RetryAfterMs: 86_400_001}))
		require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err))
		require.Contains(t, err.Error(), "retry_after_ms")
	})
}
