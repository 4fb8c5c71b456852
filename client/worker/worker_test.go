package worker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

type order struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

type reservation struct {
	ReservationID string `json:"reservation_id"`
}

func jsonValue(t *testing.T, v map[string]any) *structpb.Value {
	t.Helper()
	out, err := structpb.NewValue(v)
	require.NoError(t, err)
	return out
}

func TestActivity_GetsTypedInputAndItsOutputIsTheStepOutput(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	var seen worker.ActivityInfo
	worker.Register(b.w, "reserve", func(ctx context.Context, in order) (reservation, error) {
		return reservation{ReservationID: fmt.Sprintf("%s-%d", in.SKU, in.Quantity)}, nil
	})
	worker.Register(b.w, "ship", func(ctx context.Context, in struct{}) (string, error) {
		seen = worker.Info(ctx)
		r, ok, err := worker.Upstream[reservation](ctx, "reserve")
		if !ok || err != nil {
			return "", errors.New("no reservation upstream")
		}
		return "shipped " + r.ReservationID, nil
	})
	b.start()
	res, err := b.c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Start: true,
		Input: jsonValue(t, map[string]any{"customer": "c-1"}),
		Definition: plan(
			&weftv1.Action{Id: "reserve", Order: 1, Activity: "reserve", Input: jsonValue(t, map[string]any{"sku": "W1", "quantity": 2})},
			&weftv1.Action{Id: "ship", Order: 2, Activity: "ship"})})
	require.NoError(t, err)
	run := b.await(res.GetRun().GetRunId())
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	require.Equal(t, "W1-2", step(run, "reserve").GetOutput().GetStructValue().GetFields()["reservation_id"].GetStringValue())
	require.Equal(t, "shipped W1-2", step(run, "ship").GetOutput().GetStringValue())
	require.JSONEq(t, `{"customer":"c-1"}`, string(seen.RunInput))
	require.Equal(t, run.GetRunId(), seen.RunID)
	require.Equal(t, "ship", seen.ActionID)
	require.Equal(t, uint32(1), seen.LogicalAttempt)
	require.Equal(t, uint32(1), seen.EngineAttempt)
	require.NotEmpty(t, seen.IdempotencyKey)
	require.Equal(t, "test-worker", seen.WorkerID)
	require.False(t, seen.Deadline.IsZero())
}

func TestFail_ClassDecidesTheRetry(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	var calls atomic.Int32
	worker.Register(b.w, "charge", func(ctx context.Context, in struct{}) (struct{}, error) {
		calls.Add(1)
		return struct{}{}, worker.Fail(worker.ClassValidation, "card_declined", errors.New("declined"))
	})
	b.start()
	run := b.await(b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "charge"})))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, run.GetStatus())
	e := step(run, "a").GetError()
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_VALIDATION, e.GetErrorClass())
	require.Equal(t, "card_declined", e.GetCode())
	require.Equal(t, int32(1), calls.Load(), "validation is not retried")
}

func TestUnclassifiedError_IsUnknownAndRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	var calls atomic.Int32
	worker.Register(b.w, "flaky", func(ctx context.Context, in struct{}) (string, error) {
		if calls.Add(1) == 1 {
			return "", errors.New("boom")
		}
		return "ok", nil
	})
	b.start()
	run := b.await(b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "flaky",
		Retry: &weftv1.RetryPolicy{InitialBackoffMs: one(1)}})))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	attempts := step(run, "a").GetAttempts()
	require.Len(t, attempts, 2)
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_UNKNOWN, attempts[0].GetError().GetErrorClass())
}

func TestPanic_FailsTheTaskAsAgentErrorAndTheWorkerKeepsRunning(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	worker.Register(b.w, "explode", func(ctx context.Context, in struct{}) (string, error) { panic("kaboom") })
	worker.Register(b.w, "fine", func(ctx context.Context, in struct{}) (string, error) { return "ok", nil })
	b.start()
	run := b.await(b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "explode", OnFailure: weftv1.OnFailure_ON_FAILURE_ABORT,
		Retry: &weftv1.RetryPolicy{MaxAttempts: one(1)}})))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, run.GetStatus())
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_AGENT_ERROR, step(run, "a").GetError().GetErrorClass())
	require.Equal(t, "panic", step(run, "a").GetError().GetCode())
	next := b.await(b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "fine"})))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, next.GetStatus())
}

func TestInvalidInput_FailsAsValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	worker.Register(b.w, "reserve", func(ctx context.Context, in order) (string, error) { return "never", nil })
	b.start()
	run := b.await(b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "reserve",
		Input: jsonValue(t, map[string]any{"quantity": "two"})})))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, run.GetStatus())
	require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_VALIDATION, step(run, "a").GetError().GetErrorClass())
	require.Equal(t, "invalid_input", step(run, "a").GetError().GetCode())
}

func TestConcurrency_NeverRunsMoreThanTheLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{Concurrency: 2})
	var now, peak atomic.Int32
	worker.Register(b.w, "slow", func(ctx context.Context, in struct{}) (struct{}, error) {
		n := now.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		now.Add(-1)
		return struct{}{}, nil
	})
	b.start()
	def := plan()
	def.Dag = true
	for i := range 6 {
		def.Actions = append(def.Actions, &weftv1.Action{Id: fmt.Sprintf("s%d", i), Order: 1, Activity: "slow"})
	}
	run := b.await(b.submit(def))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	require.Equal(t, int32(2), peak.Load())
}

func TestHeartbeatCancelRequested_CancelsTheActivityContext(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	started := make(chan string, 1)
	stopped := make(chan error, 1)
	worker.Register(b.w, "long", func(ctx context.Context, in struct{}) (struct{}, error) {
		started <- worker.Info(ctx).RunID
		<-ctx.Done()
		stopped <- ctx.Err()
		return struct{}{}, ctx.Err()
	})
	b.start()
	runID := b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "long", HeartbeatTimeoutMs: one(300)}))
	require.Equal(t, runID, <-started)
	_, err := b.c.CancelRun(context.Background(), &weftv1.CancelRunRequest{RunId: runID, Reason: "test"})
	require.NoError(t, err)
	select {
	case err := <-stopped:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the activity's context was not cancelled after the heartbeat answered cancel_requested")
	}
}

func TestGracefulShutdown_LetsInFlightTasksFinishAndReport(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{ShutdownTimeout: 5 * time.Second})
	started := make(chan struct{})
	worker.Register(b.w, "slow", func(ctx context.Context, in struct{}) (string, error) {
		close(started)
		time.Sleep(200 * time.Millisecond)
		return "done", ctx.Err()
	})
	stop := b.start()
	runID := b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "slow"}))
	<-started
	require.NoError(t, stop())
	run := b.await(runID)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
}

func TestShutdownTimeout_AbandonsTasksWithoutReportingThem(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{ShutdownTimeout: 100 * time.Millisecond, HeartbeatInterval: -1})
	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	var sawCancel atomic.Bool
	worker.Register(b.w, "stuck", func(ctx context.Context, in struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		<-release
		return "", ctx.Err()
	})
	stop := b.start()
	runID := b.submit(plan(&weftv1.Action{Id: "a", Order: 1, Activity: "stuck"}))
	<-started
	require.ErrorIs(t, stop(), worker.ErrShutdownTimeout)
	require.Eventually(t, sawCancel.Load, 2*time.Second, 5*time.Millisecond, "the abandoned activity's context is cancelled")
	run, err := b.c.GetRun(context.Background(), runID)
	require.NoError(t, err)
	require.Equal(t, weftv1.StepStatus_STEP_STATUS_RUNNING, step(run, "a").GetStatus(), "an abandoned task is not reported")
}

func TestCompensation_RunsWithTheHookInputAfterALaterFailure(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	var mu sync.Mutex
	var released []string
	worker.Register(b.w, "reserve", func(ctx context.Context, in order) (string, error) { return "r-1", nil })
	worker.Register(b.w, "charge", func(ctx context.Context, in struct{}) (string, error) {
		return "", worker.Fail(worker.ClassBusinessConflict, "insufficient_funds", errors.New("no money"))
	})
	worker.RegisterCompensation(b.w, "release", func(ctx context.Context, in order) error {
		mu.Lock()
		defer mu.Unlock()
		released = append(released, fmt.Sprintf("%s:%s", worker.Info(ctx).ActionID, in.SKU))
		return nil
	})
	b.start()
	run := b.await(b.submit(plan(
		&weftv1.Action{Id: "reserve", Order: 1, Activity: "reserve",
			Compensation: &weftv1.CompensationHook{Operation: "release", Input: jsonValue(t, map[string]any{"sku": "W1"})}},
		&weftv1.Action{Id: "charge", Order: 2, Activity: "charge"})))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, run.GetStatus())
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK, run.GetCompensationOutcome())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"reserve:W1"}, released)
}

func TestRegister_RejectsDuplicatesAndVerifyWithoutKey(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	fn := func(ctx context.Context, in order) (string, error) { return "", nil }
	worker.Register(b.w, "a", fn)
	require.Panics(t, func() { worker.Register(b.w, "a", fn) })
	require.Panics(t, func() { worker.Register(b.w, "", fn) })
	require.Panics(t, func() {
		worker.Register(b.w, "b", fn, worker.WithVerify(func(context.Context, string) (worker.VerifyResult, error) {
			return worker.VerifyResult{}, nil
		}))
	})
	require.Panics(t, func() {
		worker.Register(b.w, "c", fn, worker.WithIdempotencyKey(func(in reservation) string { return in.ReservationID }))
	})
}

func TestRun_WithNothingRegisteredIsAnError(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{})
	require.Error(t, b.w.Run(context.Background()))
}

func TestEagerDispatch_ASequenceTakesEachNextStepWithTheCompletionNotAPoll(t *testing.T) {
	t.Parallel()
	b := setup(t, worker.Options{Concurrency: 1, PollWait: 30 * time.Second})
	var ran atomic.Int64
	worker.Register(b.w, "step", func(ctx context.Context, in struct{}) (int64, error) {
		return ran.Add(1), nil
	})
	b.start()
	var actions []*weftv1.Action
	for i := range 5 {
		actions = append(actions, &weftv1.Action{Id: fmt.Sprintf("s%d", i+1), Order: uint32(i + 1), Activity: "step"})
	}
	run := b.await(b.submit(plan(actions...)))
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, run.GetStatus())
	require.Equal(t, int64(5), ran.Load())
	// One poll took the first step; each completion brought the next one; the
	// last completion brought none, so the worker polls once more.
	require.LessOrEqual(t, b.polls.Load(), int64(2), "polls for a five-step sequence")
}
