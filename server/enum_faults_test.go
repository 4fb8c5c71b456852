package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit/loop"
)

// fixedJSON is a client codec that sends a fixed JSON body whatever the
// request message, so a Connect client can name enum values no Go enum
// has, on every protocol that carries JSON.
type fixedJSON struct{ body string }

func (c fixedJSON) Name() string                      { return "json" }
func (c fixedJSON) Marshal(any) ([]byte, error)       { return []byte(c.body), nil }
func (c fixedJSON) MarshalStable(any) ([]byte, error) { return []byte(c.body), nil }
func (c fixedJSON) IsBinary() bool                    { return false }
func (c fixedJSON) Unmarshal(b []byte, m any) error {
	return protojson.Unmarshal(b, m.(proto.Message))
}

// jsonProtocols are the client protocols that carry a request as JSON.
var jsonProtocols = []struct {
	name string
	opts []connect.ClientOption
}{
	{"ConnectUnaryPOST", nil},
	{"ConnectUnaryGET", []connect.ClientOption{connect.WithHTTPGet()}},
	{"GRPCJSON", []connect.ClientOption{connect.WithGRPC()}},
	{"GRPCWebJSON", []connect.ClientOption{connect.WithGRPCWeb()}},
}

// TestUnknownEnumName_IsInvalidArgumentNamingFieldAndRuleOnEveryJSONPath:
// a request naming an enum value the server does not know (a misspelt
// ListRuns status, which protojson would drop, matching every run) answers
// invalid_argument with one violation naming the field path and
// enum.known_name, and an INVALID_ARGUMENT Fault with a correlation id, on
// Connect (POST and GET), gRPC and gRPC-Web with JSON, and JSON-RPC.
func TestUnknownEnumName_IsInvalidArgumentNamingFieldAndRuleOnEveryJSONPath(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	cases := []struct {
		name, procedure, body, field string
	}{
		{"ListRunsStatus", "weft.v1.RunService/ListRuns", `{"statuses":["RUN_STATUS_RUNNING","RUNING"]}`, "statuses[1]"},
		{"NestedLowerCamelField", "weft.v1.RunService/SubmitRun",
			`{"definition":{"name":"w","actions":[{"id":"a","order":1,"activity":"x","onFailure":"ON_FAILURE_SHRUG"}]}}`,
			"definition.actions[0].on_failure"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range jsonProtocols {
				t.Run(p.name, func(t *testing.T) {
					if tc.procedure != "weft.v1.RunService/ListRuns" && p.name == "ConnectUnaryGET" {
						t.Skipf("%s has side effects: Connect answers GET only for reads", tc.procedure)
					}
					opts := append([]connect.ClientOption{connect.WithCodec(fixedJSON{tc.body})}, p.opts...)
					client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, opts...)
					var err error
					if tc.procedure == "weft.v1.RunService/ListRuns" {
						_, err = client.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
					} else {
						_, err = client.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{}))
					}
					apitest.RequireInvalidField(t, err, tc.field, RuleUnknownEnumName)
				})
			}
			t.Run("JSONRPC", func(t *testing.T) {
				res := apitest.CallJSONRPC(t, url, 1, tc.procedure, json.RawMessage(tc.body), nil)
				require.NotNil(t, res.Error, "result: %s", res.Result)
				require.Equal(t, JSONRPCCode(weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT), res.Error.Code)
				require.Equal(t, "invalid_argument", res.Error.Data.ConnectCode)
				require.Equal(t, weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT, res.Fault(t).GetCode())
				require.Len(t, res.Error.Data.Violations, 1)
				v := &validate.Violation{}
				require.NoError(t, protojson.Unmarshal(res.Error.Data.Violations[0], v))
				require.Equal(t, tc.field, protovalidate.FieldPathString(v.GetField()))
				require.Equal(t, RuleUnknownEnumName, v.GetRuleId())
			})
		})
	}
}

// TestUnknownEnumName_AnswersHTTP400WithFaultAndViolations: over plain
// HTTP/JSON (Connect unary POST and GET) the refusal is a 400 whose body
// carries the Fault and the violations.
func TestUnknownEnumName_AnswersHTTP400WithFaultAndViolations(t *testing.T) {
	t.Parallel()
	base := testServer(t, engineConfig(t))
	body := `{"statuses":["RUNING"]}`
	get, err := http.NewRequest(http.MethodGet, base+"/weft.v1.RunService/ListRuns?encoding=json&message="+url.QueryEscape(body), nil)
	require.NoError(t, err)
	post, err := http.NewRequest(http.MethodPost, base+"/weft.v1.RunService/ListRuns", strings.NewReader(body))
	require.NoError(t, err)
	post.Header.Set("Content-Type", "application/json")
	for name, req := range map[string]*http.Request{"POST": post, "GET": get} {
		t.Run(name, func(t *testing.T) {
			res, err := apitest.HTTPClient().Do(req)
			require.NoError(t, err)
			payload, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.NoError(t, res.Body.Close())
			require.Equal(t, HTTPStatus(weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT), res.StatusCode, "body: %s", payload)
			var ce connectErrorBody
			require.NoError(t, json.Unmarshal(payload, &ce))
			require.Equal(t, "invalid_argument", ce.Code)
			require.Contains(t, ce.Message, `statuses[0]: is not a value of enum weft.v1.RunStatus [enum.known_name]`)
			require.NotContains(t, string(payload), "RUNING", "the refusal never quotes the request")
			fault, violations := detailsOf(ce)
			require.Equal(t, weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT, fault.GetCode())
			require.Len(t, fault.GetCorrelationId(), 36)
			require.Len(t, violations, 1)
			require.Equal(t, "statuses[0]", protovalidate.FieldPathString(violations[0].GetField()))
		})
	}
}

// TestUnknownEnumName_IsRefusedOnAServerStream: the refusal reaches a
// streaming handler's Receive as it reaches a unary interceptor (weft.v1's
// one stream, WatchEvents, has no enum field, so a stream of ListRuns
// requests stands in, with the server's codec and validation interceptor).
func TestUnknownEnumName_IsRefusedOnAServerStream(t *testing.T) {
	t.Parallel()
	validator, err := protovalidate.New()
	require.NoError(t, err)
	reached := false
	const procedure = "/weft.test.Streams/List"
	mux := http.NewServeMux()
	mux.Handle(procedure, connect.NewServerStreamHandler(procedure,
		func(context.Context, *connect.Request[weftv1.ListRunsRequest], *connect.ServerStream[weftv1.ListRunsResponse]) error {
			reached = true
			return nil
		},
		connect.WithCodec(jsonCodec{name: "json"}), connect.WithInterceptors(&validationInterceptor{validator: validator})))
	url := loop.Serve(t, mux, Protocols())
	streams := []struct {
		name string
		opts []connect.ClientOption
	}{
		{"ConnectStreamingJSON", nil},
		{"GRPCJSON", []connect.ClientOption{connect.WithGRPC()}},
		{"GRPCWebJSON", []connect.ClientOption{connect.WithGRPCWeb()}},
	}
	for _, p := range streams {
		t.Run(p.name, func(t *testing.T) {
			opts := append([]connect.ClientOption{connect.WithCodec(fixedJSON{`{"statuses":["RUNING"]}`})}, p.opts...)
			client := connect.NewClient[weftv1.ListRunsRequest, weftv1.ListRunsResponse](apitest.HTTPClient(), url+procedure, opts...)
			stream, err := client.CallServerStream(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
			require.NoError(t, err)
			require.False(t, stream.Receive())
			err = stream.Err()
			require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "error: %v", err)
			fault, ok := FaultOf(err)
			require.True(t, ok, "no Fault detail on %v", err)
			require.Equal(t, weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT, fault.GetCode())
			require.False(t, reached, "the handler saw a refused request")
		})
	}
}

// TestUnknownEnumName_IsJudgedAfterAuthentication: a caller without a token
// learns nothing of the request rules, unknown enum names included.
func TestUnknownEnumName_IsJudgedAfterAuthentication(t *testing.T) {
	t.Parallel()
	url := testServer(t, authConfig(t))
	client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, connect.WithCodec(fixedJSON{`{"statuses":["RUNING"]}`}))
	_, err := client.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{}))
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "error: %v", err)
}

// TestUnknownEnumNumber_KeepsProtobufBehaviour: a number no enum value has
// is protobuf's open-enum value, in JSON as in binary; where the field has a
// defined_only rule (ListRuns statuses does) validation refuses it.
func TestUnknownEnumNumber_KeepsProtobufBehaviour(t *testing.T) {
	t.Parallel()
	var req weftv1.ListRunsRequest
	require.NoError(t, jsonCodec{name: "json"}.Unmarshal([]byte(`{"statuses":[12345]}`), &req))
	require.Equal(t, weftv1.RunStatus(12345), req.GetStatuses()[0])
	require.NoError(t, decodeRefusal(&req), "a number is not refused by the codec")

	url := testServer(t, engineConfig(t))
	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, p.Options...)
			_, err := client.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{Statuses: []weftv1.RunStatus{12345}}))
			apitest.RequireInvalidField(t, err, "statuses[0]", "enum.defined_only")
		})
	}
}

// TestJSONCodec_RefusesUnknownEnumNamesAndUndecodableBodies: the codec's
// decisions, one row per rule: unknown fields (their contents included) are
// ignored, known names and numbers decode, each unknown name is one
// violation, and a body protojson cannot decode is one violation naming the
// field and the rule (never a codec error, which would lose the Fault).
func TestJSONCodec_RefusesUnknownEnumNamesAndUndecodableBodies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		rule       string
		violations []string // field paths refused
	}{
		{"KnownName", `{"statuses":["RUN_STATUS_RUNNING"]}`, "", nil},
		{"KnownNumber", `{"statuses":[2]}`, "", nil},
		{"UnknownField", `{"from_the_future":"RUNING"}`, "", nil},
		{"UnknownFieldBesideKnownName", `{"statuses":["RUN_STATUS_FAILED"],"x":{"statuses":["NOPE"]}}`, "", nil},
		{"NullEnum", `{"statuses":null}`, "", nil},
		{"UnknownName", `{"statuses":["RUNING"]}`, RuleUnknownEnumName, []string{"statuses[0]"}},
		{"UnknownNameBesideUnknownField", `{"x":1,"statuses":["RUNNING"]}`, RuleUnknownEnumName, []string{"statuses[0]"}},
		{"EveryUnknownName", `{"statuses":["A","RUN_STATUS_FAILED","B"]}`, RuleUnknownEnumName, []string{"statuses[0]", "statuses[2]"}},
		{"WrongType", `{"statuses":[true]}`, RuleJSONValue, []string{"statuses[0]"}},
		{"Malformed", `{"statuses":`, RuleJSONSyntax, []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req weftv1.ListRunsRequest
			err := jsonCodec{name: "json"}.Unmarshal([]byte(tc.body), &req)
			require.NoError(t, err)
			refusal := decodeRefusal(&req)
			if tc.violations == nil {
				require.NoError(t, refusal)
				require.Empty(t, req.ProtoReflect().GetUnknown(), "an accepted message carries no mark")
				return
			}
			require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(refusal))
			var got []string
			for _, v := range refusalOf(&req).GetViolations() {
				require.Equal(t, tc.rule, v.GetRuleId())
				got = append(got, protovalidate.FieldPathString(v.GetField()))
			}
			require.Equal(t, tc.violations, got)
		})
	}
}

// TestJSONCodec_BoundsTheViolationsOfOneRequest: however many unknown names
// a request holds, one refusal lists at most maxEnumViolations, and quotes
// no more than 64 characters of each.
func TestJSONCodec_BoundsTheViolationsOfOneRequest(t *testing.T) {
	t.Parallel()
	names := make([]string, 1000)
	for i := range names {
		names[i] = strings.Repeat("Z", 10_000)
	}
	body, err := json.Marshal(map[string]any{"statuses": names})
	require.NoError(t, err)
	var req weftv1.ListRunsRequest
	require.NoError(t, jsonCodec{name: "json"}.Unmarshal(body, &req))
	v := refusalOf(&req)
	require.Len(t, v.GetViolations(), maxEnumViolations)
	require.Less(t, len(v.GetViolations()[0].GetMessage()), 200)
}

// TestRefusalMark_ReadsBackWhatTheCodecWrote: the mark survives other
// unknown fields before it, and a message without it is not refused.
func TestRefusalMark_ReadsBackWhatTheCodecWrote(t *testing.T) {
	t.Parallel()
	var req weftv1.ListRunsRequest
	require.Nil(t, refusalOf(&req))
	other := []byte{0x98, 0x06, 0x01} // field 99, varint 1: a newer client's field
	req.ProtoReflect().SetUnknown(other)
	require.Nil(t, refusalOf(&req))
	want := &validate.Violations{Violations: []*validate.Violation{{RuleId: proto.String(RuleUnknownEnumName)}}}
	markRefused(&req, want)
	require.True(t, proto.Equal(want, refusalOf(&req)))
}
