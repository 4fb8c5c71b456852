package apitest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// Protocol is one wire protocol a client can speak to weftd.
type Protocol struct {
	Name    string
	Options []connect.ClientOption
}

// Protocols are the protocols every rule is checked through.
var Protocols = []Protocol{
	{Name: "connect+json", Options: []connect.ClientOption{connect.WithProtoJSON()}},
	{Name: "connect+proto"},
	{Name: "grpc", Options: []connect.ClientOption{connect.WithGRPC()}},
	{Name: "grpc-web", Options: []connect.ClientOption{connect.WithGRPCWeb()}},
}

// HTTPClient answers a client that speaks HTTP/1.1 and HTTP/2 without TLS, as
// gRPC against a plaintext weftd needs, and HTTP/2 over TLS against an
// https:// one whose CA TrustCA named.
func HTTPClient() *http.Client {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: trustedRoots.Load()}
	return &http.Client{Transport: &http.Transport{Protocols: p, TLSClientConfig: tlsConfig}, Timeout: 30 * time.Second}
}

// trustedRoots are the CAs HTTPClient trusts (nil: the system's).
var (
	trustedRoots atomic.Pointer[x509.CertPool]
	trustMu      sync.Mutex
)

// TrustCA makes every client of the suite trust ca, so the suite can run
// against an https:// weftd whose certificate a test's CA signed.
func TrustCA(ca *x509.Certificate) {
	trustMu.Lock()
	defer trustMu.Unlock()
	pool := x509.NewCertPool()
	if old := trustedRoots.Load(); old != nil {
		pool = old.Clone()
	}
	pool.AddCert(ca)
	trustedRoots.Store(pool)
}

// Exercise runs every rule of the suite against the server at baseURL
// (e.g. http://127.0.0.1:7400).
func Exercise(t *testing.T, baseURL string) {
	t.Run("InvalidArgument_NamesFieldAndRuleOnEveryProtocol", func(t *testing.T) {
		testInvalidArgumentNamesField(t, baseURL)
	})
	t.Run("UnknownRequestFields_AreIgnored", func(t *testing.T) {
		testUnknownFieldsIgnored(t, baseURL)
	})
	t.Run("Health_ServesEveryService", func(t *testing.T) {
		testHealth(t, baseURL)
	})
	t.Run("SubmitAndComplete_ThroughEveryProtocol", func(t *testing.T) {
		testSubmitAndComplete(t, baseURL)
	})
	t.Run("AwaitRun_AnswersTheRunOnceTerminal", func(t *testing.T) {
		testAwaitRun(t, baseURL)
	})
	t.Run("EagerDispatch_ACompletionBringsTheNextTask", func(t *testing.T) {
		testEagerDispatch(t, baseURL)
	})
	t.Run("HTTPJSON_UsesProtoFieldNames", func(t *testing.T) {
		testProtoFieldNames(t, baseURL)
	})
	t.Run("UnknownRun_IsNotFoundNamingTheRun", func(t *testing.T) {
		testNotFound(t, baseURL)
	})
	t.Run("CancelCompletedRun_IsIllegalTransition409", func(t *testing.T) {
		testIllegalTransition(t, baseURL)
	})
	t.Run("CancelWithCompensate_RollsBackThenEndsCancelledOnEveryProtocol", func(t *testing.T) {
		testCancelCompensate(t, baseURL)
	})
	t.Run("StartEndedRun_IsIllegalTransitionOnEveryProtocol", func(t *testing.T) {
		testStartEndedRun(t, baseURL)
	})
	t.Run("EveryTransitionRequestOnAnEndedRun_IsIllegalTransition", func(t *testing.T) {
		testTransitionOnEndedRun(t, baseURL)
	})
	t.Run("EngineValidation_NamesTheFieldPath", func(t *testing.T) {
		testEngineValidation(t, baseURL)
	})
	t.Run("SignalDuplicate_AnswersTheOriginalResult", func(t *testing.T) {
		testSignalDuplicate(t, baseURL)
	})
	t.Run("LateTaskReport_IsTaskClaimLost", func(t *testing.T) {
		testLateTaskReport(t, baseURL)
	})
	t.Run("WatchEvents_StreamsInRunSeqOrder", func(t *testing.T) {
		testWatchEvents(t, baseURL)
	})
	t.Run("DeleteRun_RefusesAnUnfinishedRunAndRemovesAFinishedOneOnEveryProtocol", func(t *testing.T) {
		testDeleteRun(t, baseURL)
	})
	t.Run("DeleteRun_OverJSONRPCAnswersTheConflictCode", func(t *testing.T) {
		testDeleteRunJSONRPC(t, baseURL)
	})
	t.Run("Retention_ADefinitionsOwnRetentionWinsOverTheServers", func(t *testing.T) {
		testDefinitionRetention(t, baseURL)
	})
	t.Run("Retention_OutOfRangeIsInvalidArgumentNamingTheField", func(t *testing.T) {
		testRetentionRange(t, baseURL)
	})
	t.Run("Queues_ListPollersInFlightBacklogAndOldestReadyOnEveryProtocol", func(t *testing.T) {
		testQueuesListPollers(t, baseURL)
	})
	t.Run("Registry_PutGetListAndSubmitByReferenceOnEveryProtocol", func(t *testing.T) {
		testRegistry(t, baseURL)
	})
	t.Run("ParseDefinition_ReadsYAMLAndNamesEachProblemByItsYAMLPathOnEveryProtocol", func(t *testing.T) {
		testParseDefinition(t, baseURL)
	})
	t.Run("Search_AttributesQueriesAndCountsOnEveryProtocol", func(t *testing.T) {
		testSearch(t, baseURL)
	})
	t.Run("FlowControl_AStepsKeyLimitHoldsAndBadFlowControlNamesTheFieldOnEveryProtocol", func(t *testing.T) {
		testFlowControl(t, baseURL)
	})
	t.Run("Views_SaveByNameListForTheTenantDeleteOnEveryProtocol", func(t *testing.T) {
		testViews(t, baseURL)
	})
	exerciseJSONRPC(t, baseURL)
}

func testInvalidArgumentNamesField(t *testing.T, baseURL string) {
	for _, proto := range Protocols {
		t.Run(proto.Name, func(t *testing.T) {
			client := weftv1connect.NewRunServiceClient(HTTPClient(), baseURL, proto.Options...)
			_, err := client.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{}))
			RequireInvalidField(t, err, "run_id", "string.min_len")
		})
	}
}

// RequireInvalidField asserts that err is invalid_argument with exactly one
// field violation, on field by rule, and a Fault detail with a correlation id.
func RequireInvalidField(t *testing.T, err error, field, rule string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "error: %v", err)
	var cerr *connect.Error
	require.True(t, errors.As(err, &cerr))
	var violations []*validate.Violation
	var fault *weftv1.Fault
	for _, d := range cerr.Details() {
		v, derr := d.Value()
		require.NoError(t, derr)
		switch v := v.(type) {
		case *validate.Violations:
			violations = append(violations, v.GetViolations()...)
		case *weftv1.Fault:
			fault = v
		}
	}
	require.Len(t, violations, 1, "violations: %v", violations)
	require.Equal(t, field, fieldPath(violations[0]))
	require.Equal(t, rule, violations[0].GetRuleId())
	require.NotNil(t, fault, "no weft.v1.Fault detail")
	require.Equal(t, weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT, fault.GetCode())
	require.Len(t, fault.GetCorrelationId(), 36)
}

// fieldPath renders a violation's field path as "definition.actions[1].id".
func fieldPath(v *validate.Violation) string {
	var out string
	for i, e := range v.GetField().GetElements() {
		if i > 0 {
			out += "."
		}
		out += e.GetFieldName()
		if idx, ok := e.GetSubscript().(*validate.FieldPathElement_Index); ok {
			out += "[" + strconv.FormatUint(idx.Index, 10) + "]"
		}
	}
	return out
}

func testUnknownFieldsIgnored(t *testing.T, baseURL string) {
	// A newer client's field must not break an older server
	// (docs/semantics.md#schema-evolution): the request is judged on the
	// fields the server knows.
	body := []byte(`{"run_id": "", "field_from_the_future": {"x": 1}}`)
	res, payload := postJSON(t, baseURL+"/weft.v1.RunService/GetRun", body)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "body: %s", payload)
	var got struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(payload, &got))
	require.Equal(t, "invalid_argument", got.Code)
	require.Contains(t, got.Message, "run_id")
}

func testHealth(t *testing.T, baseURL string) {
	for _, svc := range []string{"", weftv1connect.RunServiceName, weftv1connect.SignalServiceName,
		weftv1connect.EventServiceName, weftv1connect.WorkerServiceName, weftv1connect.ScheduleServiceName} {
		body, err := json.Marshal(map[string]string{"service": svc})
		require.NoError(t, err)
		res, payload := postJSON(t, baseURL+"/grpc.health.v1.Health/Check", body)
		require.Equal(t, http.StatusOK, res.StatusCode, "service %q: %s", svc, payload)
		var got struct {
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(payload, &got))
		// grpchealth names the enum value SERVING_STATUS_SERVING in JSON; gRPC callers see 1.
		require.Contains(t, []string{"SERVING", "SERVING_STATUS_SERVING"}, got.Status, "service %q", svc)
	}
}

func postJSON(t *testing.T, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := HTTPClient().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	payload, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, payload
}
