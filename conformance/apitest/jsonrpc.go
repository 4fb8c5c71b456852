package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// JSONRPCResponse is one JSON-RPC 2.0 response object as Weft answers it.
type JSONRPCResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			ConnectCode string            `json:"connect_code"`
			Fault       json.RawMessage   `json:"fault"`
			Violations  []json.RawMessage `json:"violations"`
		} `json:"data"`
	} `json:"error"`
}

// Fault decodes the error's Fault (proto JSON), or nil.
func (r JSONRPCResponse) Fault(t *testing.T) *weftv1.Fault {
	t.Helper()
	if r.Error == nil || len(r.Error.Data.Fault) == 0 {
		return nil
	}
	f := &weftv1.Fault{}
	require.NoError(t, protojson.Unmarshal(r.Error.Data.Fault, f))
	return f
}

// PostJSONRPC posts body to baseURL/jsonrpc with the given extra headers
// and answers the status and the raw answer.
func PostJSONRPC(t *testing.T, baseURL string, body []byte, header http.Header) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/jsonrpc", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := HTTPClient().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	payload, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, payload
}

// CallJSONRPC makes one JSON-RPC call and answers its response object.
func CallJSONRPC(t *testing.T, baseURL string, id any, method string, params any, header http.Header) JSONRPCResponse {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	require.NoError(t, err)
	status, payload := PostJSONRPC(t, baseURL, body, header)
	require.Equal(t, http.StatusOK, status, "body: %s", payload)
	var res JSONRPCResponse
	require.NoError(t, json.Unmarshal(payload, &res), "body: %s", payload)
	require.Equal(t, "2.0", res.JSONRPC)
	return res
}

// exerciseJSONRPC runs the JSON-RPC 2.0 rules.
func exerciseJSONRPC(t *testing.T, baseURL string) {
	t.Run("JSONRPC_ResultUsesProtoFieldNamesUnderBothMethodSpellings", func(t *testing.T) {
		testJSONRPCResult(t, baseURL)
	})
	t.Run("JSONRPC_BatchKeepsOrderAndAnswersNoNotification", func(t *testing.T) {
		testJSONRPCBatch(t, baseURL)
	})
	t.Run("JSONRPC_NotificationsOnlyAnswer204", func(t *testing.T) {
		testJSONRPCNotifications(t, baseURL)
	})
	t.Run("JSONRPC_ErrorsCarryTheFaultTableCode", func(t *testing.T) {
		testJSONRPCErrors(t, baseURL)
	})
	t.Run("SignalDuplicate_AcrossTransportsAnswersTheCanonicalResult", func(t *testing.T) {
		testSignalDuplicateAcrossTransports(t, baseURL)
	})
}

func testJSONRPCResult(t *testing.T, baseURL string) {
	run := completedRun(t, NewClients(baseURL, Protocols[0]))
	for _, method := range []string{"weft.v1.RunService/GetRun", "weft.v1.RunService.GetRun"} {
		t.Run(method, func(t *testing.T) {
			res := CallJSONRPC(t, baseURL, "req-1", method, map[string]string{"run_id": run.GetRunId()}, nil)
			require.Nil(t, res.Error)
			require.JSONEq(t, `"req-1"`, string(res.ID))
			require.Contains(t, string(res.Result), `"completed_at"`)
			require.NotContains(t, string(res.Result), "completedAt")
			var got weftv1.GetRunResponse
			require.NoError(t, protojson.Unmarshal(res.Result, &got))
			require.Equal(t, run.GetRunId(), got.GetRun().GetRunId())
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetRun().GetStatus())
		})
	}
}

func testJSONRPCBatch(t *testing.T, baseURL string) {
	run := completedRun(t, NewClients(baseURL, Protocols[0]))
	body := []byte(`[
		{"jsonrpc":"2.0","id":3,"method":"weft.v1.RunService/GetRun","params":{"run_id":"` + run.GetRunId() + `"}},
		{"jsonrpc":"2.0","method":"weft.v1.RunService/GetRun","params":{"run_id":"` + run.GetRunId() + `"}},
		{"jsonrpc":"2.0","id":"b","method":"weft.v1.RunService/GetRun","params":{"run_id":"run-does-not-exist"}},
		{"jsonrpc":"2.0","id":1,"method":"weft.v1.RunService/ListRuns","params":{"page_size":1}}
	]`)
	status, payload := PostJSONRPC(t, baseURL, body, nil)
	require.Equal(t, http.StatusOK, status, "body: %s", payload)
	var got []JSONRPCResponse
	require.NoError(t, json.Unmarshal(payload, &got), "body: %s", payload)
	require.Len(t, got, 3, "the notification must have no response entry: %s", payload)
	require.JSONEq(t, `3`, string(got[0].ID))
	require.Nil(t, got[0].Error)
	require.JSONEq(t, `"b"`, string(got[1].ID))
	require.NotNil(t, got[1].Error)
	require.Equal(t, -32004, got[1].Error.Code)
	require.JSONEq(t, `1`, string(got[2].ID))
	require.Nil(t, got[2].Error)
}

func testJSONRPCNotifications(t *testing.T, baseURL string) {
	for name, body := range map[string]string{
		"single": `{"jsonrpc":"2.0","method":"weft.v1.RunService/ListRuns","params":{}}`,
		"batch": `[{"jsonrpc":"2.0","method":"weft.v1.RunService/ListRuns"},
			{"jsonrpc":"2.0","method":"weft.v1.RunService/NoSuchMethod"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			status, payload := PostJSONRPC(t, baseURL, []byte(body), nil)
			require.Equal(t, http.StatusNoContent, status, "body: %s", payload)
			require.Empty(t, payload)
		})
	}
}

func testJSONRPCErrors(t *testing.T, baseURL string) {
	cases := []struct {
		name   string
		body   string
		code   int
		fault  weftv1.FaultCode
		field  string
		idNull bool
	}{
		{name: "InvalidArgumentNamesTheField", code: -32602, fault: weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT, field: "run_id",
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.RunService/GetRun","params":{"run_id":""}}`},
		{name: "NotFound", code: -32004, fault: weftv1.FaultCode_FAULT_CODE_NOT_FOUND,
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.RunService/GetRun","params":{"run_id":"run-does-not-exist"}}`},
		{name: "ParamsOfTheWrongType", code: -32602, fault: weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT,
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.RunService/GetRun","params":{"run_id":5}}`},
		{name: "EnumOfTheWrongType", code: -32602, fault: weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT,
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.RunService/ListRuns","params":{"statuses":[true]}}`},
		{name: "PositionalParams", code: -32602,
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.RunService/GetRun","params":["run-1"]}`},
		{name: "UnknownMethod", code: -32601,
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.RunService/Nope","params":{}}`},
		{name: "StreamingMethod", code: -32601,
			body: `{"jsonrpc":"2.0","id":7,"method":"weft.v1.EventService/WatchEvents","params":{"run_id":"r"}}`},
		{name: "ParseError", code: -32700, idNull: true, body: `{"jsonrpc":"2.0","id":7,`},
		{name: "WrongVersion", code: -32600, body: `{"jsonrpc":"1.0","id":7,"method":"weft.v1.RunService/GetRun"}`},
		{name: "EmptyBatch", code: -32600, idNull: true, body: `[]`},
		{name: "NotAnObject", code: -32600, idNull: true, body: `42`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, payload := PostJSONRPC(t, baseURL, []byte(tc.body), nil)
			require.Equal(t, http.StatusOK, status, "body: %s", payload)
			var res JSONRPCResponse
			require.NoError(t, json.Unmarshal(payload, &res), "body: %s", payload)
			require.NotNil(t, res.Error, "body: %s", payload)
			require.Equal(t, tc.code, res.Error.Code, "body: %s", payload)
			if tc.idNull {
				require.JSONEq(t, `null`, string(res.ID))
			} else {
				require.JSONEq(t, `7`, string(res.ID))
			}
			if tc.fault != weftv1.FaultCode_FAULT_CODE_UNSPECIFIED {
				require.Equal(t, tc.fault, res.Fault(t).GetCode(), "body: %s", payload)
			}
			if tc.field != "" {
				require.Len(t, res.Error.Data.Violations, 1, "body: %s", payload)
				require.Contains(t, string(res.Error.Data.Violations[0]), `"field_name":"`+tc.field+`"`)
				require.Len(t, res.Fault(t).GetCorrelationId(), 36)
			}
		})
	}
}

// testSignalDuplicate across transports: the same signal_id sent over
// Connect JSON, then retried over JSON-RPC and gRPC, answers one canonical
// AcceptedSignalResult; the JSON-RPC retry carries its own new id.
func testSignalDuplicateAcrossTransports(t *testing.T, baseURL string) {
	first := NewClients(baseURL, Protocols[0])
	signal := uniqueName("approve")
	run := submit(t, first, waitForSignal(signal))
	signalID := uniqueName("click")
	req := &weftv1.SignalRunRequest{RunId: run.GetRunId(), SignalName: signal, SignalId: proto.String(signalID),
		Payload: structpb.NewStringValue("yes")}

	original, err := first.Signals.SignalRun(context.Background(), connect.NewRequest(req))
	require.NoError(t, err)
	require.False(t, original.Msg.GetDuplicate())

	params, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
	require.NoError(t, err)
	res := CallJSONRPC(t, baseURL, "retry-2", "weft.v1.SignalService/SignalRun", json.RawMessage(params), nil)
	require.Nil(t, res.Error)
	require.JSONEq(t, `"retry-2"`, string(res.ID), "a duplicate answers with the new request's id")
	var viaJSONRPC weftv1.SignalRunResponse
	require.NoError(t, protojson.Unmarshal(res.Result, &viaJSONRPC))
	require.True(t, viaJSONRPC.GetDuplicate())

	viaGRPC, err := NewClients(baseURL, Protocols[2]).Signals.SignalRun(context.Background(), connect.NewRequest(req))
	require.NoError(t, err)
	require.True(t, viaGRPC.Msg.GetDuplicate())

	for name, got := range map[string]*weftv1.AcceptedSignalResult{
		"jsonrpc": viaJSONRPC.GetResult(), "grpc": viaGRPC.Msg.GetResult()} {
		require.True(t, proto.Equal(original.Msg.GetResult(), got), "%s: %v, want %v", name, got, original.Msg.GetResult())
	}
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, getRun(t, first, run.GetRunId()).GetStatus())
}
