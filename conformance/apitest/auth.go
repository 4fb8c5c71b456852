package apitest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// WithBearer answers p sending "Authorization: Bearer token" on every call.
func WithBearer(p Protocol, token string) Protocol {
	opts := append(append([]connect.ClientOption{}, p.Options...), connect.WithInterceptors(bearer(token)))
	return Protocol{Name: p.Name, Options: opts}
}

// bearer adds a bearer token to every call, unary or streaming.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// ExerciseAuthentication runs the authentication rules against a server that
// requires bearer tokens; token is one it accepts.
func ExerciseAuthentication(t *testing.T, baseURL, token string) {
	t.Run("MissingOrUnknownToken_IsUnauthenticated401", func(t *testing.T) {
		testUnauthenticated(t, baseURL)
	})
	t.Run("ValidToken_IsServed", func(t *testing.T) {
		for _, p := range Protocols {
			t.Run(p.Name, func(t *testing.T) {
				c := NewClients(baseURL, WithBearer(p, token))
				_, err := c.Runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
				require.NoError(t, err)
			})
		}
	})
	t.Run("HealthAndHealthz_StayOpenWithoutAToken", func(t *testing.T) {
		testHealth(t, baseURL)
		res, err := HTTPClient().Get(baseURL + "/healthz")
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, http.StatusOK, res.StatusCode)
	})
}

func testUnauthenticated(t *testing.T, baseURL string) {
	for _, token := range []string{"", "not-a-configured-token-at-all"} {
		for _, p := range Protocols {
			t.Run(p.Name, func(t *testing.T) {
				if token != "" {
					p = WithBearer(p, token)
				}
				c := NewClients(baseURL, p)
				_, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: "run-1"}))
				require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "error: %v", err)
				RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_UNAUTHENTICATED)
			})
		}
	}
	t.Run("http-json", func(t *testing.T) {
		res, payload := postJSON(t, baseURL+"/weft.v1.RunService/GetRun", []byte(`{"run_id":"run-1"}`))
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, "body: %s", payload)
		require.Contains(t, string(payload), `"code":"unauthenticated"`)
	})
}

// ExerciseTenantIsolation proves that a token of one tenant can neither
// read, list, watch, signal, steer nor take the tasks of another tenant's
// runs: every such call answers as if the run did not exist. tokenA and
// tokenB must belong to different tenants.
func ExerciseTenantIsolation(t *testing.T, baseURL, tokenA, tokenB string) {
	for _, p := range []Protocol{Protocols[0], Protocols[2]} {
		t.Run(p.Name, func(t *testing.T) {
			testTenantIsolation(t, NewClients(baseURL, WithBearer(p, tokenA)), NewClients(baseURL, WithBearer(p, tokenB)))
		})
	}
}

func testTenantIsolation(t *testing.T, a, b Clients) {
	ctx := context.Background()
	signal := uniqueName("approve")
	waiting := submit(t, a, waitForSignal(signal))
	activity := uniqueName("apitest")
	working := submit(t, a, oneActivity(activity))
	id := waiting.GetRunId()

	notFound := func(t *testing.T, err error) {
		t.Helper()
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "another tenant's run must not be found: %v", err)
	}
	t.Run("Get", func(t *testing.T) {
		_, err := b.Runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: id}))
		notFound(t, err)
	})
	t.Run("List", func(t *testing.T) {
		res, err := b.Runs.ListRuns(ctx, connect.NewRequest(&weftv1.ListRunsRequest{PageSize: 1000}))
		require.NoError(t, err)
		for _, r := range res.Msg.GetRuns() {
			require.NotContains(t, []string{id, working.GetRunId()}, r.GetRunId())
		}
	})
	t.Run("WatchAndEvents", func(t *testing.T) {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		stream, err := b.Events.WatchEvents(wctx, connect.NewRequest(&weftv1.WatchEventsRequest{RunId: id}))
		require.NoError(t, err)
		for stream.Receive() {
			t.Fatalf("tenant B received tenant A's event %s", stream.Msg().GetEvent().GetEventType())
		}
		notFound(t, stream.Err())
		_, err = b.Events.ListEvents(ctx, connect.NewRequest(&weftv1.ListEventsRequest{RunId: id}))
		notFound(t, err)
	})
	t.Run("Signal", func(t *testing.T) {
		_, err := b.Signals.SignalRun(ctx, connect.NewRequest(&weftv1.SignalRunRequest{
			RunId: id, SignalName: signal, SignalId: proto.String("b-1"), Payload: structpb.NewStringValue("no")}))
		notFound(t, err)
	})
	t.Run("CancelAndPause", func(t *testing.T) {
		_, err := b.Runs.CancelRun(ctx, connect.NewRequest(&weftv1.CancelRunRequest{RunId: id}))
		notFound(t, err)
		_, err = b.Runs.PauseRun(ctx, connect.NewRequest(&weftv1.PauseRunRequest{RunId: id}))
		notFound(t, err)
	})
	t.Run("Queues", func(t *testing.T) {
		testQueuesTenantIsolation(t, a, b)
	})
	t.Run("PollAndReport", func(t *testing.T) {
		res, err := b.Workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{
			WorkerId: "tenant-b", Activities: []*weftv1.ActivityRegistration{{Name: activity}}, WaitMs: 300}))
		require.NoError(t, err)
		require.Empty(t, res.Msg.GetTasks(), "tenant B was handed tenant A's task")
		task := pollOne(t, a, activity)
		_, err = b.Workers.CompleteTask(ctx, connect.NewRequest(&weftv1.CompleteTaskRequest{
			TaskToken: task.GetTaskToken(), WorkerId: "tenant-b"}))
		require.Equal(t, connect.CodeAborted, connect.CodeOf(err), "error: %v", err)
		RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_TASK_CLAIM_LOST)
		complete(t, a, task, structpb.NewStringValue("done"))
	})
	t.Run("OwnerIsUnaffected", func(t *testing.T) {
		_, err := a.Signals.SignalRun(ctx, connect.NewRequest(&weftv1.SignalRunRequest{
			RunId: id, SignalName: signal, Payload: structpb.NewStringValue("yes")}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, getRun(t, a, id).GetStatus())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, getRun(t, a, working.GetRunId()).GetStatus())
	})
}
