package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

type progress struct {
	Page int `json:"page"`
}

func TestHeartbeatDetails_SurviveAHeartbeatTimeoutToTheNextAttempt(t *testing.T) {
	b := setup(t, worker.Options{ShutdownTimeout: 50 * time.Millisecond})
	beat := make(chan error, 1)
	release := make(chan struct{})
	defer close(release)
	resume := func(ctx context.Context, _ struct{}) (progress, error) {
		var p progress
		if ok, err := worker.HeartbeatDetails(ctx, &p); ok || err != nil {
			return p, err // a later attempt resumes from the details
		}
		beat <- worker.Heartbeat(ctx, progress{Page: 3})
		<-release // stuck: the worker is stopped under it and its heartbeats end
		return progress{}, errors.New("abandoned")
	}
	worker.Register(b.w, "resume", resume)
	stopFirst := b.start()
	runID := b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "resume", HeartbeatTimeoutMs: one(600),
		Retry: &weftv1.RetryPolicy{InitialBackoffMs: one(1)}}))
	require.NoError(t, <-beat)
	require.ErrorIs(t, stopFirst(), worker.ErrShutdownTimeout, "the first worker abandons the attempt")

	second := setupWorker(t, b, "second-worker")
	worker.Register(second.w, "resume", resume)
	second.start()
	run := b.await(runID)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	attempts := step(run, "a").GetAttempts()
	require.Len(t, attempts, 2)
	require.Equal(t, weftv1.AttemptOutcome_ATTEMPT_OUTCOME_TIMED_OUT, attempts[0].GetOutcome())
	require.Equal(t, float64(3), step(run, "a").GetOutput().GetStructValue().GetFields()["page"].GetNumberValue())
}

func TestHeartbeat_OutsideAnActivityIsAnError(t *testing.T) {
	require.ErrorIs(t, worker.Heartbeat(context.Background(), nil), worker.ErrNoActivity)
}

func TestRateLimited_RetryAfterIsTheNextAttemptsRecordedDueTime(t *testing.T) {
	b := setup(t, worker.Options{})
	failed := make(chan time.Time, 1)
	worker.Register(b.w, "limited", func(ctx context.Context, _ struct{}) (struct{}, error) {
		failed <- time.Now().Truncate(time.Millisecond) // the API answers milliseconds
		return struct{}{}, worker.RateLimited(errors.New("429 from the bank"), time.Hour)
	})
	b.start()
	runID := b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "limited", Retry: &weftv1.RetryPolicy{InitialBackoffMs: one(1)}}))
	before := <-failed
	run := b.eventually(runID, func(r *weftv1.Run) bool { return len(step(r, "a").GetAttempts()) == 1 })
	st := step(run, "a")
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_RATE_LIMIT, st.GetAttempts()[0].GetError().GetErrorClass())
	require.False(t, st.GetNextAttemptAt().AsTime().Before(before.Add(time.Hour)),
		"next attempt due %v, the failure was reported after %v", st.GetNextAttemptAt().AsTime(), before)
}

// setupWorker answers b with another, unstarted worker on the same server.
func setupWorker(t *testing.T, b *bundle, id string) *bundle {
	return &bundle{t: t, c: b.c, w: worker.New(b.c, worker.Options{WorkerID: id, PollWait: 200 * time.Millisecond}), polls: b.polls}
}
