package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

var protocols = []client.Protocol{client.ProtocolConnectProto, client.ProtocolConnectJSON, client.ProtocolGRPC, client.ProtocolGRPCWeb}

func TestEveryProtocol_SubmitsReadsAndListsRuns(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := client.New(url, client.WithProtocol(p))
			run := submit(t, c, oneStep("greet"))
			got, err := c.GetRun(context.Background(), run.GetRunId())
			require.NoError(t, err)
			require.Equal(t, run.GetRunId(), got.GetRunId())
			list, err := c.ListRuns(context.Background(), &weftv1.ListRunsRequest{PlanId: "plan"})
			require.NoError(t, err)
			require.NotEmpty(t, list.GetRuns())
		})
	}
}

func TestFault_IsTypedErrorWithStableCodeAndCorrelationID(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	for _, p := range protocols {
		t.Run(p.String(), func(t *testing.T) {
			c := client.New(url, client.WithProtocol(p))
			_, err := c.GetRun(context.Background(), "no-such-run")
			require.True(t, client.IsCode(err, client.CodeNotFound), "got %v", err)
			var e *client.Error
			require.True(t, errors.As(err, &e))
			require.Equal(t, weftv1.FaultCode_FAULT_CODE_NOT_FOUND, e.Fault.GetCode())
			require.Equal(t, "no-such-run", e.Fault.GetRunId())
			require.NotEmpty(t, e.CorrelationID)
			require.Contains(t, e.Error(), e.CorrelationID)
		})
	}
}

func TestInvalidArgument_CarriesFieldViolations(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	_, err := c.GetRun(context.Background(), "")
	require.True(t, client.IsCode(err, client.CodeInvalidArgument), "got %v", err)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.NotEmpty(t, e.Violations)
	require.Equal(t, "run_id", e.Violations[0].Field)
	require.NotEmpty(t, e.Violations[0].Rule)
}

func TestIllegalTransition_IsItsOwnCode(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	run := submit(t, c, waitingForSignal())
	_, err := c.CancelRun(context.Background(), &weftv1.CancelRunRequest{RunId: run.GetRunId()})
	require.NoError(t, err)
	_, err = c.PauseRun(context.Background(), &weftv1.PauseRunRequest{RunId: run.GetRunId()})
	require.True(t, client.IsCode(err, client.CodeIllegalTransition), "got %v", err)
}

func TestSignalRun_ReusesOneGeneratedSignalIDAcrossItsRetries(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	var calls atomic.Int32
	// The first answer is lost after the server accepted the signal.
	flaky := proxy(t, url, func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		if r.URL.Path == "/weft.v1.SignalService/SignalRun" && calls.Add(1) == 1 {
			forward(discard{}, r)
			http.Error(w, "upstream connection reset", http.StatusServiceUnavailable)
			return
		}
		forward(w, r)
	})
	c := client.New(flaky)
	run := submit(t, c, waitingForSignal())
	req := &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: "go", Payload: structpb.NewStringValue("x")}
	res, err := c.SignalRun(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, int32(2), calls.Load())
	require.True(t, res.GetDuplicate(), "the retry must be recognised as the same signal")
	require.NotEmpty(t, res.GetResult().GetSignalId())
	require.Nil(t, req.SignalId, "the caller's request is not modified")
}

func TestSignalRun_KeepsTheCallersSignalID(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	run := submit(t, c, waitingForSignal())
	id := "sig-1"
	for range 2 {
		res, err := c.SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: "go", SignalId: &id})
		require.NoError(t, err)
		require.Equal(t, id, res.GetResult().GetSignalId())
	}
}

func TestClientErrors_AreNeverRetried(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	var calls atomic.Int32
	counting := proxy(t, url, func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		calls.Add(1)
		forward(w, r)
	})
	c := client.New(counting)
	_, err := c.SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: "missing", SignalName: "go"})
	require.True(t, client.IsCode(err, client.CodeNotFound), "got %v", err)
	require.Equal(t, int32(1), calls.Load())
}

func TestUnavailable_IsRetriedUpToMaxAttempts(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	down := proxy(t, "http://127.0.0.1:1", func(w http.ResponseWriter, r *http.Request, _ http.HandlerFunc) {
		calls.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	c := client.New(down, client.WithRetry(client.RetryPolicy{MaxAttempts: 3, InitialBackoff: 1}))
	_, err := c.GetRun(context.Background(), "r")
	require.True(t, client.IsCode(err, client.CodeUnavailable), "got %v", err)
	require.Equal(t, int32(3), calls.Load())
}

func TestBearerToken_IsSentOnUnaryAndStreamingCalls(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	var mu sync.Mutex
	seen := map[string]string{}
	recording := proxy(t, url, func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		mu.Lock()
		seen[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		forward(w, r)
	})
	c := client.New(recording, client.WithToken("s3cret"))
	run := submit(t, c, waitingForSignal())
	_, err := c.CancelRun(context.Background(), &weftv1.CancelRunRequest{RunId: run.GetRunId()})
	require.NoError(t, err)
	for _, err := range c.WatchEvents(context.Background(), run.GetRunId(), 0) {
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "Bearer s3cret", seen["/weft.v1.RunService/SubmitRun"])
	require.Equal(t, "Bearer s3cret", seen["/weft.v1.EventService/WatchEvents"])
}

func TestWatchEvents_YieldsEveryEventInRunSeqOrderUntilTerminal(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	run := submit(t, c, waitingForSignal())
	_, err := c.SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: "go"})
	require.NoError(t, err)
	var types []string
	var last uint64
	for ev, err := range c.WatchEvents(context.Background(), run.GetRunId(), 0) {
		require.NoError(t, err)
		require.Greater(t, ev.GetRunSeq(), last)
		last = ev.GetRunSeq()
		types = append(types, ev.GetEventType())
	}
	require.Equal(t, "RunSubmitted", types[0])
	require.Equal(t, "RunCompleted", types[len(types)-1])
	final, err := c.AwaitRun(context.Background(), run.GetRunId())
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, final.GetStatus())
}

func TestListEventsAndResync_AnswerTheLog(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	run := submit(t, c, waitingForSignal())
	page, err := c.ListEvents(context.Background(), &weftv1.ListEventsRequest{RunId: run.GetRunId()})
	require.NoError(t, err)
	require.NotEmpty(t, page.GetEvents())
	seq := page.GetEvents()[len(page.GetEvents())-1].GetRunSeq()
	re, err := c.ResyncRun(context.Background(), &weftv1.ResyncRunRequest{RunId: run.GetRunId(),
		Mode: weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT, SnapshotSeq: seq})
	require.NoError(t, err)
	require.Equal(t, run.GetRunId(), re.GetSnapshot().GetRunId())
	require.LessOrEqual(t, re.GetSnapshot().GetLastEventSeq(), seq)
}

// discard is a ResponseWriter that drops the answer (a lost response).
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}

func TestAwaitRun_LongPollsTheRPCUntilTheRunIsTerminal(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := map[string]int{}
	url := proxy(t, setupURL(t), func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		forward(w, r)
	})
	c := client.New(url)
	run := submit(t, c, waitingForSignal())
	go func() { // before or while AwaitRun waits: either way one call answers the terminal run
		_, _ = c.SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: "go"})
	}()
	final, err := c.AwaitRun(context.Background(), run.GetRunId())
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, final.GetStatus())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, calls["/weft.v1.RunService/AwaitRun"], "one long poll")
	require.Zero(t, calls["/weft.v1.EventService/WatchEvents"], "no event stream")
}

func TestAwaitRun_WatchesTheEventsOfAServerWithoutTheRPC(t *testing.T) {
	t.Parallel()
	url := proxy(t, setupURL(t), func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		if r.URL.Path == "/weft.v1.RunService/AwaitRun" {
			http.NotFound(w, r) // as a server that predates it answers
			return
		}
		forward(w, r)
	})
	c := client.New(url)
	run := submit(t, c, waitingForSignal())
	_, err := c.SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: "go"})
	require.NoError(t, err)
	final, err := c.AwaitRun(context.Background(), run.GetRunId())
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, final.GetStatus())
}

func TestAnswers_AreUncompressedUnlessWithGzip(t *testing.T) {
	t.Parallel()
	url := setupURL(t)
	var mu sync.Mutex
	var accepted []string
	recording := proxy(t, url, func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		if r.URL.Path == "/weft.v1.RunService/GetRun" {
			mu.Lock()
			accepted = append(accepted, r.Header.Get("Accept-Encoding"))
			mu.Unlock()
		}
		forward(w, r)
	})
	for _, c := range []*client.Client{client.New(recording), client.New(recording, client.WithGzip())} {
		run := submit(t, c, waitingForSignal())
		got, err := c.GetRun(context.Background(), run.GetRunId())
		require.NoError(t, err)
		require.Equal(t, run.GetRunId(), got.GetRunId())
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"identity", "gzip"}, accepted)
}

func TestSubmitAndAwait_AnswersTheTerminalRunInOneCall(t *testing.T) {
	t.Parallel()
	calls, url := countingProxy(t)
	c := client.New(url)
	go signalOnceSubmitted(t, c, 0)
	req := &weftv1.SubmitRunRequest{Definition: waitingForSignal(), RunRequestId: "one-call"}
	final, err := c.SubmitAndAwait(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, final.GetStatus())
	require.False(t, req.GetStart(), "the caller's request is not modified")
	require.Zero(t, req.GetAwaitMs())
	require.Equal(t, 1, calls("/weft.v1.RunService/SubmitRun"))
	require.Zero(t, calls("/weft.v1.RunService/AwaitRun"), "no second call")
}

func TestSubmitAndAwait_AwaitsARunStillGoingWhenTheSubmissionAnswers(t *testing.T) {
	t.Parallel()
	calls, url := countingProxy(t)
	c := client.New(url)
	go signalOnceSubmitted(t, c, 100*time.Millisecond)
	final, err := c.SubmitAndAwait(context.Background(), &weftv1.SubmitRunRequest{Definition: waitingForSignal(),
		RunRequestId: "short-wait", AwaitMs: 1})
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, final.GetStatus())
	require.Equal(t, 1, calls("/weft.v1.RunService/SubmitRun"))
	require.Positive(t, calls("/weft.v1.RunService/AwaitRun"), "awaited after the submission answered")
}

// countingProxy serves a fresh server behind a proxy that counts the calls
// of each procedure.
func countingProxy(t *testing.T) (calls func(path string) int, url string) {
	var mu sync.Mutex
	seen := map[string]int{}
	url = proxy(t, setupURL(t), func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		forward(w, r)
	})
	return func(path string) int { mu.Lock(); defer mu.Unlock(); return seen[path] }, url
}

// signalOnceSubmitted sends "go" to the first run it lists, after delay.
func signalOnceSubmitted(t *testing.T, c *client.Client, delay time.Duration) {
	for range 500 {
		list, err := c.ListRuns(context.Background(), &weftv1.ListRunsRequest{PlanId: "plan"})
		if err == nil && len(list.GetRuns()) > 0 {
			time.Sleep(delay)
			if _, err := c.SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: list.GetRuns()[0].GetRunId(), SignalName: "go"}); err != nil {
				t.Errorf("signal: %v", err)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("no run was submitted")
}

func TestViews_SaveListAndDeleteThroughTheGoClient(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	ctx := context.Background()
	saved, err := c.SaveView(ctx, &weftv1.View{Name: "failed", Query: `status = "FAILED"`})
	require.NoError(t, err)
	require.True(t, saved.GetCreated())
	again, err := c.SaveView(ctx, &weftv1.View{Name: "failed", Query: `status = "FAILED" AND plan = "p"`})
	require.NoError(t, err)
	require.False(t, again.GetCreated())
	list, err := c.ListViews(ctx, &weftv1.ListViewsRequest{})
	require.NoError(t, err)
	require.Len(t, list.GetViews(), 1)
	require.Equal(t, `status = "FAILED" AND plan = "p"`, list.GetViews()[0].GetQuery())
	require.NoError(t, c.DeleteView(ctx, "failed"))
	require.True(t, client.IsCode(c.DeleteView(ctx, "failed"), client.CodeNotFound))
}

func TestParseDefinition_AnswersTheDefinitionOrTheYAMLPathOfEachProblem(t *testing.T) {
	t.Parallel()
	c := client.New(setupURL(t))
	def, err := c.ParseDefinition(context.Background(), "planId: parsed\nsteps:\n  - name: a\n    activity: work\n")
	require.NoError(t, err)
	require.Equal(t, "parsed", def.GetPlanId())
	_, err = c.ParseDefinition(context.Background(), "planId: parsed\nsteps:\n  - name: a\n    timeout: soon\n")
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, client.CodeInvalidArgument, e.Code)
	require.Equal(t, "steps[0].timeout", e.Violations[0].Field)
}
