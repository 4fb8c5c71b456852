package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// Correlation ids are random version-4 UUIDs, each request's its own, however
// many the read-ahead buffer serves.
func TestCorrelationID_IsADistinctVersion4UUIDEachTime(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 5 * len(idPool.buf) / 16 {
		id := newCorrelationID()
		u, err := uuid.Parse(id)
		require.NoError(t, err)
		require.Equal(t, uuid.Version(4), u.Version(), id)
		require.Equal(t, uuid.RFC4122, u.Variant(), id)
		require.False(t, seen[id], "correlation id %s answered twice", id)
		seen[id] = true
	}
}

// A request's state carries no caller until the auth interceptor has checked
// its token: a handler reached without it is unauthenticated, never a default.
func TestCallerOf_RequestStateWithoutAuthenticationHasNoCaller(t *testing.T) {
	t.Parallel()
	ctx, _ := withRequestState(context.Background(), "id-1")
	_, err := callerOf(ctx)
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
	_, err = callerOf(context.Background())
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))

	ctx, err = (&authInterceptor{}).authenticate(ctx, http.Header{})
	require.NoError(t, err)
	who, err := callerOf(ctx)
	require.NoError(t, err)
	require.Equal(t, caller{tenant: DefaultTenant, principal: AnonymousCaller, perms: allPerms, method: AuthNone}, who)
	require.Equal(t, "id-1", CorrelationID(ctx))
}

// A call that did not pass the edge (an interceptor chain used on its own)
// still gets a correlation id, which its answer must then carry.
func TestBegin_GivesACallWithoutTheEdgeItsOwnCorrelationID(t *testing.T) {
	t.Parallel()
	ctx, state, fresh := begin(context.Background())
	require.NotEmpty(t, fresh)
	require.Equal(t, fresh, state.id)
	require.Equal(t, fresh, CorrelationID(ctx))

	again, same, none := begin(ctx)
	require.Empty(t, none, "a call that has an id keeps it")
	require.Same(t, state, same)
	require.Equal(t, fresh, CorrelationID(again))
}

// Every procedure of every service is routed to its service's handler
// without the mux, and nothing else is.
func TestProcedureRoutes_NameEveryProcedureOfTheServicesAndNothingElse(t *testing.T) {
	t.Parallel()
	handlers := map[string]http.Handler{}
	for _, name := range ServiceNames {
		handlers["/"+name+"/"] = http.NotFoundHandler()
	}
	routes := procedureRoutes(handlers)
	want := procedures(ServiceNames)
	require.Len(t, routes, len(want))
	for p := range want {
		require.Contains(t, routes, "/"+p)
	}
	require.Contains(t, routes, weftv1connect.WorkerServiceCompleteTaskProcedure)
	require.Contains(t, routes, weftv1connect.WorkerServicePollTasksProcedure)
}

// A path the mux would clean or redirect is the mux's to answer, as it was
// before procedures were routed directly; a procedure's exact path reaches its
// handler.
func TestEdge_OnlyExactProcedurePathsSkipTheMux(t *testing.T) {
	t.Parallel()
	h, err := New(Config{Workers: cannedWorkers{}})
	require.NoError(t, err)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{weftv1connect.WorkerServiceCompleteTaskProcedure, http.StatusOK},
		{"/weft.v1.WorkerService/../weft.v1.WorkerService/CompleteTask", http.StatusTemporaryRedirect},
		{"//weft.v1.WorkerService/CompleteTask", http.StatusTemporaryRedirect},
	} {
		req := httptest.NewRequest(http.MethodPost, "http://weft.test/", strings.NewReader(`{"task_token":"t-1#x","worker_id":"w-1"}`))
		req.URL.Path = tc.path
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Body)
		require.Equal(t, tc.status, rec.Code, "%s: %s", tc.path, body)
		require.NotEmpty(t, rec.Header().Get(CorrelationHeader), tc.path)
	}
}

// blockingWorkers holds each PollTasks until release is closed, telling
// entered when it starts.
type blockingWorkers struct {
	weftv1connect.UnimplementedWorkerServiceHandler
	entered chan struct{}
	release chan struct{}
}

func (b blockingWorkers) PollTasks(context.Context, *connect.Request[weftv1.PollTasksRequest]) (*connect.Response[weftv1.PollTasksResponse], error) {
	b.entered <- struct{}{}
	<-b.release
	return connect.NewResponse(&weftv1.PollTasksResponse{}), nil
}

// weft_rpc_in_flight counts a call from its first interceptor to its answer:
// read at scrape time from the server's own count, it is 1 while a call is
// being served and 0 once it is answered, and the answered call is then in
// weft_rpc_requests_total.
func TestMetrics_InFlightCountsACallBeingServed(t *testing.T) {
	t.Parallel()
	w := blockingWorkers{entered: make(chan struct{}), release: make(chan struct{})}
	url := testServer(t, Config{Workers: w})
	c := apitest.NewClients(url, apitest.Protocols[0])
	done := make(chan error, 1)
	go func() {
		_, err := c.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
			WorkerId: "w-1", Queue: "default", MaxTasks: 1, Activities: []*weftv1.ActivityRegistration{{Name: "a"}}}))
		done <- err
	}()
	<-w.entered
	require.Contains(t, scrape(t, url), "weft_rpc_in_flight 1\n")
	close(w.release)
	require.NoError(t, <-done)
	text := scrape(t, url)
	require.Contains(t, text, "weft_rpc_in_flight 0\n")
	require.Contains(t, text, `weft_rpc_requests_total{code="ok",procedure="/weft.v1.WorkerService/PollTasks",protocol="connect"} 1`)
}

// ctxWorkers answers PollTasks once its context ends, telling seen the
// context it was given.
type ctxWorkers struct {
	weftv1connect.UnimplementedWorkerServiceHandler
	seen chan context.Context
}

type outerKey struct{}

func (c ctxWorkers) PollTasks(ctx context.Context, _ *connect.Request[weftv1.PollTasksRequest]) (*connect.Response[weftv1.PollTasksResponse], error) {
	c.seen <- ctx
	<-ctx.Done()
	return nil, ctx.Err()
}

// The context the edge gives a request (its state held in place, not a
// context layer of its own) is the caller's for everything else: the
// caller's values reach the handler, the caller's cancellation ends the
// handler's context, and the state answers the request's correlation id.
func TestEdge_RequestContextKeepsTheCallersValuesAndCancellation(t *testing.T) {
	t.Parallel()
	w := ctxWorkers{seen: make(chan context.Context, 1)}
	h, err := New(Config{Workers: w})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), outerKey{}, "outer"))
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, weftv1connect.WorkerServicePollTasksProcedure,
		strings.NewReader(`{"worker_id":"w-1","queue":"default","max_tasks":1,"wait_ms":60000}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); h.ServeHTTP(rec, req) }()
	got := <-w.seen
	require.Equal(t, "outer", got.Value(outerKey{}))
	require.NoError(t, got.Err())
	cancel()
	<-done
	require.ErrorIs(t, got.Err(), context.Canceled)
	require.Equal(t, rec.Header().Get(CorrelationHeader), CorrelationID(got))
}
