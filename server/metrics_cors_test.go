package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := apitest.HTTPClient().Get(url + MetricsPath)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/plain")
	return string(body)
}

// TestMetrics_CountRequestsLatenciesAndOutcomesInPrometheusText: /metrics
// serves, without a token, requests by procedure, protocol and code, a
// latency histogram by procedure, and the server's counts of submissions,
// signals, task reports and JSON-RPC refusals.
func TestMetrics_CountRequestsLatenciesAndOutcomesInPrometheusText(t *testing.T) {
	url := testServer(t, authConfig(t))
	c := apitest.NewClients(url, apitest.WithBearer(apitest.Protocols[0], tokenAcme))
	ctx := context.Background()
	run, err := c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
		Definition: def(&weftv1.Action{Id: "w", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}})}))
	require.NoError(t, err)
	for range 2 {
		_, err = c.Signals.SignalRun(ctx, connect.NewRequest(&weftv1.SignalRunRequest{RunId: run.Msg.GetRun().GetRunId(),
			SignalName: "go", SignalId: proto.String("s-1"), Payload: structpb.NewBoolValue(true)}))
		require.NoError(t, err)
	}
	_, err = apitest.NewClients(url, apitest.Protocols[2]).Runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: "r"}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
	apitest.CallJSONRPC(t, url, 1, "weft.v1.RunService/ListRuns", map[string]any{}, http.Header{"Authorization": {"Bearer " + tokenAcme}})
	status, _ := apitest.PostJSONRPC(t, url, []byte(`{`), nil)
	require.Equal(t, http.StatusOK, status)

	text := scrape(t, url)
	for _, line := range []string{
		`weft_rpc_requests_total{code="ok",procedure="/weft.v1.RunService/SubmitRun",protocol="connect"} 1`,
		`weft_rpc_requests_total{code="ok",procedure="/weft.v1.SignalService/SignalRun",protocol="connect"} 2`,
		`weft_rpc_requests_total{code="unauthenticated",procedure="/weft.v1.RunService/GetRun",protocol="grpc"} 1`,
		`weft_rpc_requests_total{code="ok",procedure="/weft.v1.RunService/ListRuns",protocol="jsonrpc"} 1`,
		`weft_rpc_duration_seconds_bucket{procedure="/weft.v1.RunService/SubmitRun",le="+Inf"} 1`,
		`weft_rpc_duration_seconds_count{procedure="/weft.v1.SignalService/SignalRun"} 2`,
		`weft_rpc_in_flight 0`,
		`weft_runs_submitted_total{result="created"} 1`,
		`weft_signals_total{result="accepted"} 1`,
		`weft_signals_total{result="duplicate"} 1`,
		`weft_jsonrpc_rejected_total{reason="parse_error"} 1`,
		`# TYPE weft_rpc_duration_seconds histogram`,
		`go_goroutines `,
	} {
		require.Contains(t, text, line)
	}
	require.NotContains(t, text, "acme", "metrics carry no tenant")
}

// TestCORS_BrowserPreflightsForJSONRPCAndConnectWithABearerToken: the
// preflights browsers send (lower-case, sorted header lists) are allowed for
// /jsonrpc and a Connect route, and answers expose the headers clients read.
func TestCORS_BrowserPreflightsForJSONRPCAndConnectWithABearerToken(t *testing.T) {
	cfg := authConfig(t)
	cfg.CORSOrigins = []string{"https://app.example"}
	url := testServer(t, cfg)
	for path, headers := range map[string]string{
		JSONRPCPath:                         "authorization,content-type",
		"/weft.v1.RunService/GetRun":        "authorization,connect-protocol-version,content-type",
		"/weft.v1.EventService/WatchEvents": "authorization,connect-protocol-version,connect-timeout-ms,content-type",
	} {
		t.Run(path, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodOptions, url+path, nil)
			require.NoError(t, err)
			req.Header.Set("Origin", "https://app.example")
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", headers)
			res, err := apitest.HTTPClient().Do(req)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusNoContent, res.StatusCode)
			require.Equal(t, "https://app.example", res.Header.Get("Access-Control-Allow-Origin"))
			allowed := strings.ToLower(res.Header.Get("Access-Control-Allow-Headers"))
			for _, h := range strings.Split(headers, ",") {
				require.Contains(t, allowed, h)
			}
		})
	}
	t.Run("ActualJSONRPCCall", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodPost, url+JSONRPCPath,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"weft.v1.RunService/ListRuns","params":{}}`))
		require.NoError(t, err)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tokenAcme)
		res, err := apitest.HTTPClient().Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "https://app.example", res.Header.Get("Access-Control-Allow-Origin"))
		require.Contains(t, res.Header.Get("Access-Control-Expose-Headers"), CorrelationHeader)
		require.NotEmpty(t, res.Header.Get(CorrelationHeader))
	})
	t.Run("OtherOriginIsNotAllowed", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodOptions, url+JSONRPCPath, nil)
		require.NoError(t, err)
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
		res, err := apitest.HTTPClient().Do(req)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
	})
}
