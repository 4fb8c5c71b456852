package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// faultyRuns answers GetRun with the fault its run_id names
// (e.g. FAULT_CODE_NOT_FOUND); FAULT_CODE_INTERNAL is a plain error, as a
// bug would be.
type faultyRuns struct {
	weftv1connect.UnimplementedRunServiceHandler
}

func (faultyRuns) GetRun(_ context.Context, req *connect.Request[weftv1.GetRunRequest]) (*connect.Response[weftv1.GetRunResponse], error) {
	code := weftv1.FaultCode(weftv1.FaultCode_value[req.Msg.GetRunId()])
	if code == weftv1.FaultCode_FAULT_CODE_INTERNAL {
		return nil, errors.New("a bug")
	}
	fault := &weftv1.Fault{Code: code, RunId: "run-1"}
	if code == weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED {
		fault.RetryAfterMs = 1500
	}
	return nil, newFaultError(fault, "fault "+code.String())
}

// TestFaults_AgreeAcrossConnectGRPCAndJSONRPC: for every fault code, the
// HTTP status of Connect, the gRPC code and the JSON-RPC code are the ones
// server/fault.go's table gives, and every transport carries the same Fault.
func TestFaults_AgreeAcrossConnectGRPCAndJSONRPC(t *testing.T) {
	t.Parallel()
	url := testServer(t, Config{Runs: faultyRuns{}})
	grpc := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, connect.WithGRPC())
	for code := range faults {
		name := code.String()
		t.Run(name, func(t *testing.T) {
			res, err := apitest.HTTPClient().Post(url+"/weft.v1.RunService/GetRun", "application/json",
				strings.NewReader(`{"run_id":"`+name+`"}`))
			require.NoError(t, err)
			var body struct {
				Code string `json:"code"`
			}
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			require.NoError(t, res.Body.Close())
			require.Equal(t, HTTPStatus(code), res.StatusCode, "connect HTTP status")
			require.Equal(t, ConnectCode(code).String(), body.Code)
			if code == weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED {
				require.Equal(t, "2", res.Header.Get("Retry-After"), "overload carries Retry-After in seconds")
			}

			_, err = grpc.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: name}))
			require.Equal(t, ConnectCode(code), connect.CodeOf(err), "gRPC code")
			require.Equal(t, code, apitest.RequireFault(t, err, code).GetCode())

			rpc := apitest.CallJSONRPC(t, url, name, "weft.v1.RunService/GetRun", map[string]string{"run_id": name}, nil)
			require.NotNil(t, rpc.Error)
			require.Equal(t, JSONRPCCode(code), rpc.Error.Code, "JSON-RPC code")
			require.Equal(t, code, rpc.Fault(t).GetCode())
			require.Equal(t, ConnectCode(code).String(), rpc.Error.Data.ConnectCode)
			require.Len(t, rpc.Fault(t).GetCorrelationId(), 36)
			if code == weftv1.FaultCode_FAULT_CODE_RESOURCE_EXHAUSTED {
				require.Equal(t, uint32(1500), rpc.Fault(t).GetRetryAfterMs())
			}
		})
	}
}

// TestFaults_SemanticsTableMatchesTheServer: docs/semantics.md's fault table
// says what server/fault.go does.
func TestFaults_SemanticsTableMatchesTheServer(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../docs/semantics.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `(FAULT_CODE_)?([A-Z_]+)` \\| [A-Za-z]+ \\| ([a-z_]+) \\| (\\d{3})[^|]* \\| (-\\d+) \\|")
	rows := row.FindAllStringSubmatch(string(src), -1)
	require.Len(t, rows, len(faults), "every fault code needs one row")
	for _, m := range rows {
		code := weftv1.FaultCode(weftv1.FaultCode_value["FAULT_CODE_"+m[2]])
		mapping, ok := faults[code]
		require.True(t, ok, m[2])
		require.Equal(t, m[3], mapping.connect.String(), m[2])
		require.Equal(t, m[4], strconv.Itoa(mapping.http), m[2])
		require.Equal(t, m[5], strconv.Itoa(mapping.jsonRPC), m[2])
	}
}

// TestClientCausedErrors_AreNever5xx: whatever a client sends, over
// Connect's HTTP/JSON or JSON-RPC, the answer is a 4xx (JSON-RPC answers
// its own errors in a 200, as JSON-RPC over HTTP does).
func TestClientCausedErrors_AreNever5xx(t *testing.T) {
	t.Parallel()
	cfg := engineConfig(t)
	cfg.MaxRequestBytes = 4096
	url := testServer(t, cfg)
	big := `{"run_id":"` + strings.Repeat("x", 8192) + `"}`
	huge := strings.Repeat(" ", 4096+128<<10)
	cases := []struct {
		name, method, path, contentType, body string
		status                                int
	}{
		{"ConnectMalformedJSON", "POST", "/weft.v1.RunService/GetRun", "application/json", `{"run_id":`, 400},
		{"ConnectWrongContentType", "POST", "/weft.v1.RunService/GetRun", "text/plain", `{"run_id":"r"}`, 415},
		{"ConnectUnknownMethod", "POST", "/weft.v1.RunService/Nope", "application/json", `{}`, 404},
		{"ConnectWrongFieldType", "POST", "/weft.v1.RunService/GetRun", "application/json", `{"run_id":5}`, 400},
		{"ConnectBadEnumType", "POST", "/weft.v1.RunService/ListRuns", "application/json", `{"statuses":[true]}`, 400},
		{"ConnectBadEnumNumber", "POST", "/weft.v1.RunService/ListRuns", "application/json", `{"statuses":[12345]}`, 400},
		{"ConnectUnknownEnumName", "POST", "/weft.v1.RunService/ListRuns", "application/json", `{"statuses":["RUNING"]}`, 400},
		{"ConnectOversizeMessage", "POST", "/weft.v1.RunService/GetRun", "application/json", big, 400},
		{"ConnectOversizeBody", "POST", "/weft.v1.RunService/GetRun", "application/json", huge, 400},
		{"ConnectGETOfAMutation", "GET", "/weft.v1.RunService/CancelRun", "", "", 405},
		{"JSONRPCMalformed", "POST", "/jsonrpc", "application/json", `{"jsonrpc":`, 200},
		{"JSONRPCWrongContentType", "POST", "/jsonrpc", "text/plain", `{}`, 415},
		{"JSONRPCOversizeBody", "POST", "/jsonrpc", "application/json", huge, 400},
		{"JSONRPCOversizeParams", "POST", "/jsonrpc", "application/json",
			`{"jsonrpc":"2.0","id":1,"method":"weft.v1.RunService/GetRun","params":` + big + `}`, 200},
		{"JSONRPCGet", "GET", "/jsonrpc", "", "", 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, url+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			res, err := apitest.HTTPClient().Do(req)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, tc.status, res.StatusCode)
		})
	}
}
