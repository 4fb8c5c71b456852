package server

import (
	"context"
	"encoding/json"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

func TestAwaitRun_AnswersTheTerminalRunOrTheRunAsItIsWhenTheWaitPasses(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "act-a"}))
		res, err := b.c.Runs.AwaitRun(context.Background(), connect.NewRequest(&weftv1.AwaitRunRequest{RunId: run.GetRunId(), WaitMs: 20}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_RUNNING, res.Msg.GetRun().GetStatus(), "the wait passed first")

		done := make(chan *weftv1.Run, 1)
		go func() {
			res, err := b.c.Runs.AwaitRun(context.Background(), connect.NewRequest(&weftv1.AwaitRunRequest{RunId: run.GetRunId(), WaitMs: 60000}))
			if err != nil {
				done <- nil
				return
			}
			done <- res.Msg.GetRun()
		}()
		b.complete(b.poll("act-a"))
		got := <-done
		require.NotNil(t, got)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetStatus())
		require.Len(t, got.GetSteps(), 1)
	})
}

func TestAwaitRun_RefusesBadRequestsNamingTheFieldOnEveryPath(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	for _, tc := range []struct {
		name, field, rule string
		req               *weftv1.AwaitRunRequest
	}{
		{"no run", "run_id", "string.min_len", &weftv1.AwaitRunRequest{WaitMs: 10}},
		{"a wait over a minute", "wait_ms", "uint32.lte", &weftv1.AwaitRunRequest{RunId: "r", WaitMs: 60001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range twoProtocols {
				_, err := apitest.NewClients(url, p).Runs.AwaitRun(context.Background(), connect.NewRequest(tc.req))
				apitest.RequireInvalidField(t, err, tc.field, tc.rule)
			}
			params, err := protojson.Marshal(tc.req)
			require.NoError(t, err)
			res := apitest.CallJSONRPC(t, url, 1, "weft.v1.RunService/AwaitRun", json.RawMessage(params), nil)
			require.NotNil(t, res.Error, "result: %s", res.Result)
			require.Equal(t, "invalid_argument", res.Error.Data.ConnectCode)
		})
	}
	res := apitest.CallJSONRPC(t, url, 2, "weft.v1.RunService/AwaitRun", map[string]any{"run_id": "no-such-run", "wait_ms": 10}, nil)
	require.NotNil(t, res.Error)
	require.Equal(t, "not_found", res.Error.Data.ConnectCode)
}
