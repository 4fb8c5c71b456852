package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/server/wiretest"
)

// lockedBuffer is a log sink the server's goroutines write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// loggedServer serves an engine and answers its URL and its log.
func loggedServer(t *testing.T) (string, *lockedBuffer) {
	t.Helper()
	log := &lockedBuffer{}
	cfg := engineConfig(t)
	cfg.Logger = slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return testServer(t, cfg), log
}

// requireClientMistake: the outcome is invalid_argument with the Fault and a
// correlation id, never quoting marker, and the server logged no ERROR.
func requireClientMistake(t *testing.T, out wiretest.Outcome, marker string, log *lockedBuffer) {
	t.Helper()
	require.Empty(t, out.Problem(marker), "answer: %s", out.Raw)
	require.Equal(t, "invalid_argument", out.Code, "answer: %s", out.Raw)
	require.NotContains(t, log.String(), `"level":"ERROR"`)
}

// TestConnectGETWithBadBase64_IsInvalidArgument: issue 20 finding 1 (HTTP
// 500 unknown "illegal base64 data").
func TestConnectGETWithBadBase64_IsInvalidArgument(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	res, err := apitest.HTTPClient().Get(base + "/weft.v1.RunService/GetRun?encoding=json&base64=1&message=!!")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", body)
	var ce connectErrorBody
	require.NoError(t, json.Unmarshal(body, &ce))
	require.Equal(t, "invalid_argument", ce.Code)
	fault, violations := detailsOf(ce)
	require.Len(t, fault.GetCorrelationId(), 36)
	require.Equal(t, res.Header.Get(CorrelationHeader), fault.GetCorrelationId())
	require.Len(t, violations, 1)
	require.Equal(t, RuleGETBase64, violations[0].GetRuleId())
	require.NotContains(t, log.String(), `"level":"ERROR"`)
}

// TestTimeoutHeaders_NotInTheProtocolsForm_AreInvalidArgumentNotQuotingThem: a
// Connect-Timeout-Ms or Grpc-Timeout that is not the protocol's form is
// refused as invalid_argument with the Fault, naming the header and never
// repeating it (Connect's own refusal quoted it).
func TestTimeoutHeaders_NotInTheProtocolsForm_AreInvalidArgumentNotQuotingThem(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	for name, tc := range map[string]struct {
		p      wiretest.Protocol
		header string
		value  string
	}{
		"ConnectTooLong": {wiretest.ConnectJSON, "Connect-Timeout-Ms", "MARKER12345678"},
		"ConnectLetters": {wiretest.ConnectJSON, "Connect-Timeout-Ms", "MARKER"},
		"GRPCNoUnit":     {wiretest.GRPC, "Grpc-Timeout", "MARKER"},
		"GRPCTooLong":    {wiretest.GRPC, "Grpc-Timeout", "123456789MARKERS"},
		"GRPCWebBadUnit": {wiretest.GRPCWeb, "Grpc-Timeout", "10MARKER"},
	} {
		t.Run(name, func(t *testing.T) {
			body := []byte(`{"run_id":"r"}`)
			if tc.p.Enveloped {
				body = wiretest.Envelope([]byte("\x0a\x01r"))
			}
			req, err := wiretest.Request(context.Background(), base, tc.p, "weft.v1.RunService/GetRun", body)
			require.NoError(t, err)
			req.Header.Set(tc.header, tc.value)
			out, err := wiretest.Do(req, tc.p)
			require.NoError(t, err)
			requireClientMistake(t, out, "MARKER", log)
		})
	}
}

// TestConnectGETWithAnUnknownEncoding_IsInvalidArgumentNotQuotingIt: a
// Connect GET naming a codec or compressor the server lacks is refused as
// invalid_argument with the Fault, and the answer never repeats the
// parameter (Connect's own refusal quoted it).
func TestConnectGETWithAnUnknownEncoding_IsInvalidArgumentNotQuotingIt(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	for name, query := range map[string]string{
		"Encoding":    "encoding=MARKERxml&message=%7B%7D",
		"NoEncoding":  "message=%7B%7D",
		"Compression": "encoding=json&compression=MARKERbr&message=%7B%7D",
	} {
		t.Run(name, func(t *testing.T) {
			res, err := apitest.HTTPClient().Get(base + "/weft.v1.RunService/GetRun?connect=v1&" + query)
			require.NoError(t, err)
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", body)
			require.NotContains(t, string(body), "MARKER")
			var ce connectErrorBody
			require.NoError(t, json.Unmarshal(body, &ce))
			require.Equal(t, "invalid_argument", ce.Code)
			fault, violations := detailsOf(ce)
			require.Equal(t, res.Header.Get(CorrelationHeader), fault.GetCorrelationId())
			require.Len(t, violations, 1)
			require.Equal(t, RuleGETEncoding, violations[0].GetRuleId())
		})
	}
	require.NotContains(t, log.String(), `"level":"ERROR"`)
}

// TestTruncatedEnvelope_IsInvalidArgumentOnEveryEnvelopedProtocol: issue 20
// finding 1 (an envelope declaring more bytes than sent answered INTERNAL,
// and WatchEvents logged an ERROR line per request), and the other framing
// mistakes Connect answered as internal or unknown.
func TestTruncatedEnvelope_IsInvalidArgumentOnEveryEnvelopedProtocol(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	bodies := map[string][]byte{
		"DeclaresMoreThanSent": []byte("\x00\x00\x00\x00\x0a\x0a\x01x"),
		"TruncatedPrefix":      []byte("\x00\x00\x00"),
		"TwoMessages":          append(wiretest.Envelope([]byte("\x0a\x01x")), wiretest.Envelope([]byte("\x0a\x01x"))...),
		"BadFlags":             []byte("\x02\x00\x00\x00\x03\x0a\x01x"),
		"CompressedWithout":    []byte("\x01\x00\x00\x00\x03\x0a\x01x"),
		"NoMessage":            nil,
	}
	for _, p := range []wiretest.Protocol{wiretest.GRPC, wiretest.GRPCWeb, wiretest.ConnectStream} {
		for _, procedure := range []string{"weft.v1.RunService/GetRun", "weft.v1.EventService/WatchEvents"} {
			if p == wiretest.ConnectStream && !strings.HasSuffix(procedure, "WatchEvents") {
				continue
			}
			for name, body := range bodies {
				t.Run(p.Name+"/"+procedure+"/"+name, func(t *testing.T) {
					if p.JSON {
						body = bytes.ReplaceAll(body, []byte("\x0a\x01x"), []byte(`{"}`))
					}
					out, err := wiretest.Call(context.Background(), base, p, procedure, body)
					require.NoError(t, err)
					requireClientMistake(t, out, "", log)
				})
			}
		}
	}
}

// TestInvalidUTF8_IsInvalidArgumentNamingTheField: issue 20 finding 1 (gRPC
// with the JSON codec answered grpc-status 13 "marshal protobuf status:
// string field contains invalid UTF-8"), on every protocol and both codecs.
func TestInvalidUTF8_IsInvalidArgumentNamingTheField(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	jsonBody := []byte("{\"run_id\":\"MARK\xff\xfeER\"}")
	protoBody := []byte("\x0a\x08MARK\xff\xfeER")
	for _, p := range wiretest.Protocols {
		procedure := "weft.v1.RunService/GetRun"
		if p.Streaming && !p.Unary {
			procedure = "weft.v1.EventService/WatchEvents"
		}
		t.Run(p.Name, func(t *testing.T) {
			body := protoBody
			if p.JSON {
				body = jsonBody
			}
			if p.Enveloped {
				body = wiretest.Envelope(body)
			}
			out, err := wiretest.Call(context.Background(), base, p, procedure, body)
			require.NoError(t, err)
			requireClientMistake(t, out, "MARK\xff", log)
			if !p.JSON {
				require.Contains(t, out.Message, "run_id: is not valid UTF-8 [proto.utf8]")
			}
		})
	}
}

// TestDecodeErrors_NameTheProtoFieldAndNeverQuoteTheRequest: issue 20
// finding 2 (duplicate map keys, invalid values and a signal's payload were
// quoted, fields named in camelCase, no Fault or correlation id).
func TestDecodeErrors_NameTheProtoFieldAndNeverQuoteTheRequest(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	cases := []struct {
		name, procedure, body, field, rule string
	}{
		{"DuplicateMapKeyInPayload", "weft.v1.SignalService/SignalRun",
			`{"run_id":"r","signal_name":"s","payload":{"SECRET-1":1,"SECRET-1":2}}`, "payload", RuleJSONValue},
		{"WrongTypeInNestedField", "weft.v1.RunService/SubmitRun",
			`{"definition":{"plan_id":"p","actions":[{"id":"a","retry":{"maxAttempts":"SECRET-1"}}]}}`,
			"definition.actions[0].retry.max_attempts", RuleJSONValue},
		{"DuplicateField", "weft.v1.RunService/GetRun", `{"run_id":"SECRET-1","runId":"SECRET-1"}`, "run_id", RuleJSONDuplicate},
		{"NotAnObject", "weft.v1.RunService/GetRun", `["SECRET-1"]`, "", RuleJSONObject},
		{"Malformed", "weft.v1.RunService/GetRun", `{"run_id":"SECRET-1"`, "", RuleJSONSyntax},
	}
	for _, tc := range cases {
		for _, p := range []wiretest.Protocol{wiretest.ConnectJSON, wiretest.GRPCJSON, wiretest.GRPCWeb, wiretest.JSONRPC} {
			t.Run(tc.name+"/"+p.Name, func(t *testing.T) {
				if p == wiretest.GRPCWeb {
					p.JSON = true
				}
				body := []byte(tc.body)
				if p.Enveloped {
					body = wiretest.Envelope(body)
				}
				out, err := wiretest.Call(context.Background(), base, p, tc.procedure, body)
				require.NoError(t, err)
				if p == wiretest.JSONRPC && tc.rule == RuleJSONSyntax {
					require.Equal(t, -32700, out.JSONRPCCode)
					return
				}
				requireClientMistake(t, out, "SECRET-1", log)
				want := tc.field + ": "
				if tc.field == "" {
					want = "validation error: "
				}
				require.Contains(t, out.Message, want, "the field by its proto name")
				require.Contains(t, out.Message, "["+tc.rule+"]")
				require.NotContains(t, out.Message, "maxAttempts")
			})
		}
	}
}

// TestConnectErrorDebug_UsesProtoFieldNames: issue 20 finding 2 (the
// details' debug JSON of a Connect error used camelCase keys).
func TestConnectErrorDebug_UsesProtoFieldNames(t *testing.T) {
	t.Parallel()
	base, _ := loggedServer(t)
	res, err := apitest.HTTPClient().Post(base+"/weft.v1.RunService/GetRun", "application/json", strings.NewReader(`{"run_id":""}`))
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, string(body), `"correlation_id"`)
	require.Contains(t, string(body), `"rule_id"`)
	require.NotContains(t, string(body), `"correlationId"`)
	require.NotContains(t, string(body), `"ruleId"`)
}

// TestConnectStreamingErrorDebug_UsesProtoFieldNames: the end-of-stream
// error of a Connect streaming answer carries the Fault with its
// correlation id, and its details' debug JSON uses proto field names, with
// either codec.
func TestConnectStreamingErrorDebug_UsesProtoFieldNames(t *testing.T) {
	t.Parallel()
	base, _ := loggedServer(t)
	for _, codec := range []string{"json", "proto"} {
		t.Run(codec, func(t *testing.T) {
			body := []byte(`{"run_id":""}`)
			if codec == "proto" {
				body = []byte{}
			}
			req, err := http.NewRequest(http.MethodPost, base+"/weft.v1.EventService/WatchEvents",
				bytes.NewReader(wiretest.Envelope(body)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/connect+"+codec)
			res, err := apitest.HTTPClient().Do(req)
			require.NoError(t, err)
			answer, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Contains(t, string(answer), `"rule_id":"string.min_len"`)
			require.Contains(t, string(answer), `"correlation_id":"`+res.Header.Get(CorrelationHeader)+`"`)
			require.NotContains(t, string(answer), `"ruleId"`)
		})
	}
}

// TestCorruptGzip_IsInvalidArgumentWithTheFault: a body that claims gzip and
// is not is a client mistake on Connect and gRPC, answered with the Fault.
func TestCorruptGzip_IsInvalidArgumentWithTheFault(t *testing.T) {
	t.Parallel()
	base, log := loggedServer(t)
	for name, p := range map[string]wiretest.Protocol{"connect": wiretest.ConnectJSON, "grpc": wiretest.GRPC, "grpc-web": wiretest.GRPCWeb} {
		t.Run(name, func(t *testing.T) {
			wire := []byte("\x1f\x8bnot gzip at all")
			if p.Enveloped {
				wire = wiretest.Envelope(wire)
				wire[0] = 0x01 // compressed
			}
			req, err := wiretest.Request(context.Background(), base, p, "weft.v1.RunService/GetRun", wire)
			require.NoError(t, err)
			if p.Enveloped {
				req.Header.Set("Grpc-Encoding", "gzip")
			} else {
				req.Header.Set("Content-Encoding", "gzip")
			}
			out, err := wiretest.Do(req, p)
			require.NoError(t, err)
			requireClientMistake(t, out, "not gzip", log)
		})
	}
}
