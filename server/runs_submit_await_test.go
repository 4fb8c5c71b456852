package server

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

func TestSubmitRun_WithAwaitMsAnswersTheRunOnceTerminalOrAsItIsWhenTheWaitPasses(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		res, err := b.c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
			Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "act-a"}), Start: true, AwaitMs: 20}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_RUNNING, res.Msg.GetRun().GetStatus(), "the wait passed first")

		done := make(chan *weftv1.Run, 1)
		go func() {
			res, err := b.c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
				Definition: def(&weftv1.Action{Id: "b", Order: 1, Activity: "act-b"}), Start: true, AwaitMs: 60000}))
			if err != nil {
				done <- nil
				return
			}
			done <- res.Msg.GetRun()
		}()
		b.complete(b.poll("act-b"))
		got := <-done
		require.NotNil(t, got)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetStatus())
		require.Len(t, got.GetSteps(), 1)
	})
}

func TestSubmitRun_WithoutStartIgnoresAwaitMs(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := b.c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{
			Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "act-a"}), AwaitMs: 60000}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_PENDING, res.Msg.GetRun().GetStatus())
	})
}

func TestSubmitRun_RefusesAnAwaitOverAMinute(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	for _, p := range twoProtocols {
		_, err := apitest.NewClients(url, p).Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
			Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "act-a"}), Start: true, AwaitMs: 60001}))
		apitest.RequireInvalidField(t, err, "await_ms", "uint32.lte")
	}
}
