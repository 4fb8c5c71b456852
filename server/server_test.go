package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit/loop"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/view"
)

// testServer serves cfg in-process over HTTP/1.1 and h2c (the test kit's
// loop: this package's own tests cannot import internal/testkit, which
// imports it).
func testServer(t testing.TB, cfg Config) string {
	t.Helper()
	h, err := New(cfg)
	require.NoError(t, err)
	return loop.Serve(t, h, Protocols())
}

// engineConfig answers a config whose services run on a fresh memstore-backed engine.
func engineConfig(t testing.TB) Config {
	t.Helper()
	st := memstore.New(memstore.Config{})
	t.Cleanup(func() { _ = st.Close() })
	return engineConfigOn(t, st)
}

// engineConfigOn is engineConfig with the engine on st.
func engineConfigOn(t testing.TB, st store.Store) Config {
	t.Helper()
	return Config{}.WithEngine(loop.Engine(t, engine.Config{Store: st})).WithViews(view.New(st))
}

func TestServer_PassesAPISuiteInProcess(t *testing.T) {
	t.Parallel()
	apitest.Exercise(t, testServer(t, engineConfig(t)))
}

func TestUnimplementedRPC_AnswersFaultWithCorrelationID(t *testing.T) {
	t.Parallel()
	url := testServer(t, Config{})
	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, p.Options...)
			_, err := client.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: "run-1"}))
			require.Equal(t, connect.CodeUnimplemented, connect.CodeOf(err))
			fault, ok := FaultOf(err)
			require.True(t, ok, "no Fault detail on %v", err)
			require.Equal(t, weftv1.FaultCode_FAULT_CODE_UNIMPLEMENTED, fault.GetCode())
			require.Len(t, fault.GetCorrelationId(), 36)
		})
	}
}

// leakyRuns fails in ways that must not reach the client verbatim.
type leakyRuns struct {
	weftv1connect.UnimplementedRunServiceHandler
}

const secret = "payload-card-4111111111111111"

func (leakyRuns) GetRun(_ context.Context, req *connect.Request[weftv1.GetRunRequest]) (*connect.Response[weftv1.GetRunResponse], error) {
	if req.Msg.GetRunId() == "panic" {
		panic("boom " + secret)
	}
	return nil, errors.New("store said " + secret)
}

func TestInternalErrors_NeverReachTheClientVerbatim(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	url := testServer(t, Config{Logger: logger, Runs: leakyRuns{}})
	client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url)
	for _, runID := range []string{"error", "panic"} {
		t.Run(runID, func(t *testing.T) {
			_, err := client.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
			require.Equal(t, connect.CodeInternal, connect.CodeOf(err))
			require.NotContains(t, err.Error(), secret)
			fault, ok := FaultOf(err)
			require.True(t, ok, "no Fault detail on %v", err)
			require.Equal(t, weftv1.FaultCode_FAULT_CODE_INTERNAL, fault.GetCode())
			require.Contains(t, logs.String(), fault.GetCorrelationId(), "the log line must carry the correlation id")
		})
	}
}

func TestRequestSizeLimit_RefusesOversizedMessagesWithoutA5xx(t *testing.T) {
	t.Parallel()
	url := testServer(t, Config{MaxRequestBytes: 4096})
	client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url)
	_, err := client.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: strings.Repeat("x", 8192)}))
	require.Equal(t, ConnectCode(weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE), connect.CodeOf(err), "error: %v", err)
	fault, ok := FaultOf(err)
	require.True(t, ok, "no Fault detail on %v", err)
	require.Equal(t, weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE, fault.GetCode())
}

func TestConfig_RejectsTinyRequestLimit(t *testing.T) {
	t.Parallel()
	_, err := New(Config{MaxRequestBytes: 10})
	require.EqualError(t, err, "max request bytes must be at least 1024, got 10")
}

func TestJSONCodec_EmitsProtoFieldNames(t *testing.T) {
	t.Parallel()
	step := &weftv1.Step{ActionId: "a", StartedAt: timestamppb.Now(), CompletedAt: timestamppb.Now(), LogicalAttemptId: 1}
	out, err := jsonCodec{name: "json"}.Marshal(step)
	require.NoError(t, err)
	for _, key := range []string{`"action_id"`, `"started_at"`, `"completed_at"`, `"logical_attempt_id"`} {
		require.Contains(t, string(out), key)
	}
	require.NotContains(t, string(out), "startedAt")
}

func TestJSONCodec_IgnoresUnknownFields(t *testing.T) {
	t.Parallel()
	var req weftv1.GetRunRequest
	require.NoError(t, jsonCodec{name: "json"}.Unmarshal([]byte(`{"run_id":"r","from_the_future":1}`), &req))
	require.Equal(t, "r", req.GetRunId())
}

func TestFaultTable_MapsEveryCode(t *testing.T) {
	t.Parallel()
	for num, name := range weftv1.FaultCode_name {
		code := weftv1.FaultCode(num)
		if code == weftv1.FaultCode_FAULT_CODE_UNSPECIFIED {
			continue
		}
		_, ok := faults[code]
		require.True(t, ok, "%s has no transport mapping", name)
	}
}

// Faults a client causes never answer 5xx.
func TestFaultTable_ClientCausedFaultsAreNever5xx(t *testing.T) {
	t.Parallel()
	serverSide := map[weftv1.FaultCode]bool{
		weftv1.FaultCode_FAULT_CODE_INTERNAL:               true,
		weftv1.FaultCode_FAULT_CODE_UNAVAILABLE:            true,
		weftv1.FaultCode_FAULT_CODE_UNIMPLEMENTED:          true,
		weftv1.FaultCode_FAULT_CODE_CAPABILITY_UNAVAILABLE: true,
	}
	for code, m := range faults {
		if !serverSide[code] {
			require.Less(t, m.http, 500, "%s answers %d", code, m.http)
		}
	}
}

// The proto documents each code's "connect / http / jsonrpc" triple; the table
// must say the same.
func TestFaultTable_MatchesProtoDocumentation(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../proto/weft/v1/fault.proto")
	require.NoError(t, err)
	re := regexp.MustCompile(`([a-z_]+) / (\d{3}) / (-\d+)\.\n\s+(FAULT_CODE_[A-Z_]+) =`)
	matches := re.FindAllStringSubmatch(string(src), -1)
	require.Len(t, matches, len(faults), "every mapped code needs a documented triple")
	for _, m := range matches {
		code := weftv1.FaultCode(weftv1.FaultCode_value[m[4]])
		got := faults[code]
		require.Equal(t, m[1], got.connect.String(), m[4])
		require.Equal(t, m[2], strconv.Itoa(got.http), m[4])
		require.Equal(t, m[3], strconv.Itoa(got.jsonRPC), m[4])
	}
}

func TestOverloadFault_SetsRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	err := newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED, RetryAfterMs: 1500}, "tenant limit reached")
	require.Equal(t, connect.CodeResourceExhausted, err.Code())
	require.Equal(t, "2", err.Meta().Get("Retry-After"))
	require.Equal(t, http.StatusTooManyRequests, HTTPStatus(weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED))
}
