package server

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/telemetry"
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
	t.Parallel()
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

// family is one metric family of a scrape: its type and the label names of
// each of its samples (the histogram's le excluded).
type family struct {
	typ    string
	labels map[string]bool // label names joined by ","
	les    []string        // histogram bucket bounds, in scrape order, of the first series
	first  string          // the first bucket series' labels, le excluded
}

var labelPattern = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"`)

// parseExposition reads the Prometheus text format into families by name.
func parseExposition(t *testing.T, text string) map[string]*family {
	t.Helper()
	families := map[string]*family{}
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			families[name] = &family{typ: typ, labels: map[string]bool{}}
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, _ := strings.Cut(strings.Fields(line)[0], "{")
		f, suffix := families[name], ""
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			if f == nil && strings.HasSuffix(name, s) {
				f, suffix = families[strings.TrimSuffix(name, s)], s
			}
		}
		require.NotNil(t, f, "sample %q has no # TYPE line", line)
		var names, pairs []string
		le := ""
		for _, m := range labelPattern.FindAllStringSubmatch(labels, -1) {
			if m[1] == "le" && suffix == "_bucket" {
				le = m[2]
				continue
			}
			names, pairs = append(names, m[1]), append(pairs, m[0])
		}
		if le != "" {
			if f.les == nil {
				f.first = strings.Join(pairs, ",")
			}
			if f.first == strings.Join(pairs, ",") {
				f.les = append(f.les, le)
			}
		}
		slices.Sort(names)
		f.labels[strings.Join(names, ",")] = true
	}
	return families
}

// TestMetrics_OpenTelemetryInstrumentsKeepTheirPrometheusNamesAndLabels:
// the server's OpenTelemetry instruments reach /metrics through the
// Prometheus exporter under exactly the names, types, label names and
// buckets docs/api.md lists, with no scope labels, no target_info and no
// other weft_ series; a second server counts nothing of the first's.
func TestMetrics_OpenTelemetryInstrumentsKeepTheirPrometheusNamesAndLabels(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	b := &bundle{t: t, c: apitest.NewClients(url, apitest.Protocols[0])}
	ctx := context.Background()
	b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}, &weftv1.Action{Id: "b", Order: 1, Activity: "y"}))
	b.complete(b.poll("x"))
	task := b.poll("y")
	_, err := b.c.Workers.FailTask(ctx, connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: task.GetTaskToken(),
		WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_VALIDATION, Message: "bad"}))
	require.NoError(t, err)
	_, err = b.c.Signals.SignalRun(ctx, connect.NewRequest(&weftv1.SignalRunRequest{RunId: "nope", SignalName: "go"}))
	require.Error(t, err)
	status, _ := apitest.PostJSONRPC(t, url, []byte(`{`), nil)
	require.Equal(t, http.StatusOK, status)

	text := scrape(t, url)
	families := parseExposition(t, text)
	want := map[string]family{
		"weft_rpc_requests_total":     {typ: "counter", labels: map[string]bool{"code,procedure,protocol": true}},
		"weft_rpc_duration_seconds":   {typ: "histogram", labels: map[string]bool{"procedure": true}},
		"weft_rpc_in_flight":          {typ: "gauge", labels: map[string]bool{"": true}},
		"weft_runs_submitted_total":   {typ: "counter", labels: map[string]bool{"result": true}},
		"weft_task_reports_total":     {typ: "counter", labels: map[string]bool{"outcome": true}},
		"weft_tasks_dispatched_total": {typ: "counter", labels: map[string]bool{"": true}},
		"weft_jsonrpc_rejected_total": {typ: "counter", labels: map[string]bool{"reason": true}},
	}
	for name, f := range families {
		if !strings.HasPrefix(name, "weft_") {
			continue
		}
		w, ok := want[name]
		require.True(t, ok, "unexpected family %s", name)
		require.Equal(t, w.typ, f.typ, name)
		require.Equal(t, w.labels, f.labels, name)
	}
	for name := range want {
		require.Contains(t, families, name)
	}
	var les []string
	for _, b := range rpcDurationBuckets {
		les = append(les, strconv.FormatFloat(b, 'g', -1, 64))
	}
	require.Equal(t, append(les, "+Inf"), families["weft_rpc_duration_seconds"].les)
	for _, line := range []string{
		`weft_task_reports_total{outcome="completed"} 1`,
		`weft_task_reports_total{outcome="failed"} 1`,
		`weft_tasks_dispatched_total 2`,
		`weft_rpc_requests_total{code="not_found",procedure="/weft.v1.SignalService/SignalRun",protocol="connect"} 1`,
	} {
		require.Contains(t, text, line)
	}
	require.NotContains(t, families, "target_info")
	require.NotContains(t, text, "otel_scope_")
	require.Contains(t, families, "go_goroutines")
	require.Contains(t, families, "process_cpu_seconds_total")

	other := scrape(t, testServer(t, engineConfig(t)))
	require.NotContains(t, other, "weft_rpc_requests_total{", "each server has a pipeline of its own")
	require.Contains(t, other, "weft_tasks_dispatched_total 0")
}

// TestMetrics_ServersSharingAPipelineServeOneCount: Config.Metrics shares
// one pipeline (weftd's server, engine and export worker); what one server
// counts, the other serves.
func TestMetrics_ServersSharingAPipelineServeOneCount(t *testing.T) {
	t.Parallel()
	pipeline, err := telemetry.NewMetrics()
	require.NoError(t, err)
	cfg := engineConfig(t)
	cfg.Metrics = pipeline
	first, second := testServer(t, cfg), testServer(t, cfg)
	status, _ := apitest.PostJSONRPC(t, first, []byte(`{`), nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, scrape(t, second), `weft_jsonrpc_rejected_total{reason="parse_error"} 1`)
}

// TestCORS_BrowserPreflightsForJSONRPCAndConnectWithABearerToken: the
// preflights browsers send (lower-case, sorted header lists) are allowed for
// /jsonrpc and a Connect route, and answers expose the headers clients read.
func TestCORS_BrowserPreflightsForJSONRPCAndConnectWithABearerToken(t *testing.T) {
	t.Parallel()
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
