package apitest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testDeleteRun: DeleteRun refuses a run that is not finished with
// FAILED_PRECONDITION and leaves it be; it deletes a finished run, which is
// not found from then on, and a second DeleteRun of it is not found.
func testDeleteRun(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			ctx := context.Background()
			waiting := submit(t, c, waitForSignal(uniqueName("never")))
			_, err := c.Runs.DeleteRun(ctx, connect.NewRequest(&weftv1.DeleteRunRequest{RunId: waiting.GetRunId()}))
			require.Equal(t, connect.CodeFailedPrecondition, connect.CodeOf(err), "error: %v", err)
			require.Contains(t, err.Error(), "only a finished run")
			require.Equal(t, waiting.GetRunId(), RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_FAILED_PRECONDITION).GetRunId())
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, getRun(t, c, waiting.GetRunId()).GetStatus())

			run := completedRun(t, c)
			res, err := c.Runs.DeleteRun(ctx, connect.NewRequest(&weftv1.DeleteRunRequest{RunId: run.GetRunId()}))
			require.NoError(t, err)
			require.Equal(t, run.GetRunId(), res.Msg.GetRunId())
			// removed may be false: with export on (a cluster's default), the
			// run's last events may still wait in the outbox, and its records
			// go once they are published. The run is invisible either way.
			_, err = c.Runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: run.GetRunId()}))
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_NOT_FOUND)
			_, err = c.Runs.DeleteRun(ctx, connect.NewRequest(&weftv1.DeleteRunRequest{RunId: run.GetRunId()}))
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_NOT_FOUND)
		})
	}
	t.Run("http-json", func(t *testing.T) {
		waiting := submit(t, NewClients(baseURL, Protocols[0]), waitForSignal(uniqueName("never")))
		body, err := json.Marshal(map[string]string{"run_id": waiting.GetRunId()})
		require.NoError(t, err)
		res, payload := postJSON(t, baseURL+"/weft.v1.RunService/DeleteRun", body)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "body: %s", payload)
		require.Contains(t, string(payload), `"code":"failed_precondition"`)
	})
}

// testDeleteRunJSONRPC: over JSON-RPC, deleting a run that is not finished
// is Weft's conflict code with the FAILED_PRECONDITION fault, and a finished
// one answers its run id.
func testDeleteRunJSONRPC(t *testing.T, baseURL string) {
	c := NewClients(baseURL, Protocols[0])
	waiting := submit(t, c, waitForSignal(uniqueName("never")))
	res := CallJSONRPC(t, baseURL, 7, "weft.v1.RunService/DeleteRun", map[string]string{"run_id": waiting.GetRunId()}, nil)
	require.NotNil(t, res.Error)
	require.Equal(t, -32009, res.Error.Code)
	require.Equal(t, weftv1.FaultCode_FAULT_CODE_FAILED_PRECONDITION, res.Fault(t).GetCode())
	run := completedRun(t, c)
	res = CallJSONRPC(t, baseURL, 8, "weft.v1.RunService/DeleteRun", map[string]string{"run_id": run.GetRunId()}, nil)
	require.Nil(t, res.Error)
	require.Contains(t, string(res.Result), run.GetRunId())
}

// testDefinitionRetention: a definition's retention_ms wins over the
// server's default: its finished run is removed once it has passed, while
// a finished run of a definition without one stays.
func testDefinitionRetention(t *testing.T, baseURL string) {
	c := NewClients(baseURL, Protocols[0])
	ctx := context.Background()
	kept := completedRun(t, c)
	activity := uniqueName("apitest")
	def := oneActivity(activity)
	second := uint64(1000)
	def.RetentionMs = &second
	short := submit(t, c, def)
	require.Equal(t, second, short.GetDefinition().GetRetentionMs(), "the definition keeps its retention")
	complete(t, c, pollOne(t, c, activity), nil)
	require.Eventually(t, func() bool {
		_, err := c.Runs.GetRun(ctx, connect.NewRequest(&weftv1.GetRunRequest{RunId: short.GetRunId()}))
		return connect.CodeOf(err) == connect.CodeNotFound
	}, 20*time.Second, 50*time.Millisecond, "the run with a one-second retention was never removed")
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, getRun(t, c, kept.GetRunId()).GetStatus())
}

// testRetentionRange: a retention_ms outside one second to ten years is
// invalid_argument naming the field.
func testRetentionRange(t *testing.T, baseURL string) {
	for _, ms := range []uint64{0, 999, 315360000001} {
		def := oneActivity("never-run")
		def.RetentionMs = &ms
		_, err := NewClients(baseURL, Protocols[0]).Runs.SubmitRun(context.Background(),
			connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def}))
		RequireInvalidField(t, err, "definition.retention_ms", "uint64.gte_lte")
	}
}
