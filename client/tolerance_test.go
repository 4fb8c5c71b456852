package client_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// newerServer answers canned Connect JSON bodies by path, as a newer weftd would.
func newerServer(t *testing.T, bodies map[string]string, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, bodies[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSchemaEvolution_UnknownFieldsEnumValuesAndEventTypesAreTolerated(t *testing.T) {
	t.Parallel()
	url := newerServer(t, map[string]string{
		"/weft.v1.RunService/GetRun": `{"run": {"run_id": "r1", "status": "RUN_STATUS_ARCHIVED", "brand_new_field": {"x": 1},
			"steps": [{"action_id": "a", "status": 42}]}}`,
		"/weft.v1.EventService/ListEvents": `{"events": [
			{"event_type": "RunTeleported", "run_id": "r1", "run_seq": "1", "teleported": {"to": "mars"}},
			{"event_type": "RunStarted", "run_id": "r1", "run_seq": "2", "run_started": {"status": "RUN_STATUS_HYPERSPACE", "extra": true}}
		], "last_event_seq": "2"}`,
	}, http.StatusOK)
	c := client.New(url, client.WithProtocol(client.ProtocolConnectJSON))
	run, err := c.GetRun(context.Background(), "r1")
	require.NoError(t, err)
	require.Equal(t, "r1", run.GetRunId())
	require.Equal(t, weftv1.StepStatus(42), run.GetSteps()[0].GetStatus())
	require.False(t, client.Terminal(run.GetStatus()))
	page, err := c.ListEvents(context.Background(), &weftv1.ListEventsRequest{RunId: "r1"})
	require.NoError(t, err)
	require.Len(t, page.GetEvents(), 2)
	require.Equal(t, "RunTeleported", page.GetEvents()[0].GetEventType())
	require.Equal(t, uint64(2), page.GetEvents()[1].GetRunSeq())
}

func TestFaultWithUnknownCode_FallsBackToTheConnectCode(t *testing.T) {
	t.Parallel()
	detail, err := proto.Marshal(&weftv1.Fault{Code: weftv1.FaultCode(99), CorrelationId: "corr-1"})
	require.NoError(t, err)
	body := fmt.Sprintf(`{"code": "aborted", "message": "something new", "details": [{"type": "weft.v1.Fault", "value": %q}]}`,
		base64.RawStdEncoding.EncodeToString(detail))
	url := newerServer(t, map[string]string{"/weft.v1.RunService/GetRun": body}, http.StatusConflict)
	_, err = client.New(url, client.WithProtocol(client.ProtocolConnectJSON)).GetRun(context.Background(), "r1")
	require.True(t, client.IsCode(err, client.CodeAborted), "got %v", err)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "corr-1", e.CorrelationID)
}

func TestSignalAcceptanceIndeterminate_IsATypedCodeAndNotRetried(t *testing.T) {
	t.Parallel()
	detail, err := proto.Marshal(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_SIGNAL_ACCEPTANCE_INDETERMINATE, SignalId: "s1"})
	require.NoError(t, err)
	body := fmt.Sprintf(`{"code": "aborted", "message": "indeterminate", "details": [{"type": "weft.v1.Fault", "value": %q}]}`,
		base64.RawStdEncoding.EncodeToString(detail))
	url := newerServer(t, map[string]string{"/weft.v1.SignalService/SignalRun": body}, http.StatusConflict)
	_, err = client.New(url).SignalRun(context.Background(), &weftv1.SignalRunRequest{RunId: "r", SignalName: "go"})
	require.True(t, client.IsCode(err, client.CodeSignalAcceptanceIndeterminate), "got %v", err)
	require.Equal(t, client.CodeSignalAcceptanceIndeterminate, client.CodeOf(err))
}
