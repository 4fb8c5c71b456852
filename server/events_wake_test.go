package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/store/memstore"
)

// TestWatchEvents_SendsThisWeftdsAppendsWithoutWaitingForTheInterval sets the
// watch interval to an hour: an event appended by the same engine must still
// reach the watcher, because appends wake it.
func TestWatchEvents_SendsThisWeftdsAppendsWithoutWaitingForTheInterval(t *testing.T) {
	t.Parallel()
	eng, err := engine.New(engine.Config{Store: memstore.New(memstore.Config{})})
	require.NoError(t, err)
	cfg := Config{}.WithEngine(eng)
	cfg.Events = &EventService{eng: eng, interval: time.Hour}
	url := testServer(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url)
	res, err := runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
		Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1",
			Actions: []*weftv1.Action{{Id: "w", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}}))
	require.NoError(t, err)
	runID := res.Msg.GetRun().GetRunId()
	events := weftv1connect.NewEventServiceClient(apitest.HTTPClient(), url)
	stream, err := events.WatchEvents(ctx, connect.NewRequest(&weftv1.WatchEventsRequest{RunId: runID}))
	require.NoError(t, err)
	var last uint64
	for last < res.Msg.GetRun().GetLastEventSeq() && stream.Receive() {
		last = stream.Msg().GetEvent().GetRunSeq()
	}
	_, err = eng.SignalRun(ctx, engine.SignalParams{TenantID: DefaultTenant, RunID: runID, SignalName: "go", Payload: json.RawMessage(`1`)})
	require.NoError(t, err)
	require.True(t, stream.Receive(), "the appended event arrives long before the hour: %v", stream.Err())
	require.Greater(t, stream.Msg().GetEvent().GetRunSeq(), last)
}
