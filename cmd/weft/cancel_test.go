package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client/worker"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// reserveThenWaitJSON reserves (with a release hook), then waits for a signal.
const reserveThenWaitJSON = `{"plan_id": "reserve", "plan_version": "1", "actions": [
  {"id": "reserve", "order": 1, "activity": "reserve", "compensation": {"operation": "release"}},
  {"id": "wait", "order": 2, "wait_for_signal": {"signal_name": "go"}}]}`

func TestCancelCompensate_ReleasesWhatSucceededAndEndsCancelled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	released := make(chan struct{}, 1)
	b.startWorker(func(w *worker.Worker) {
		worker.Register(w, "reserve", func(ctx context.Context, in struct{}) (string, error) { return "held", nil })
		worker.RegisterCompensation(w, "release", func(ctx context.Context, in any) error {
			released <- struct{}{}
			return nil
		})
	})
	runID := b.submitFile("def.json", reserveThenWaitJSON, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	out := b.ok("cancel", runID, "--compensate", "--reason", "order withdrawn", "-o", "json")
	var res struct {
		Run struct {
			Cancellation struct {
				Compensate bool   `json:"compensate"`
				Reason     string `json:"reason"`
			} `json:"cancellation"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.True(t, res.Run.Cancellation.Compensate, "--compensate reaches the request")
	require.Equal(t, "order withdrawn", res.Run.Cancellation.Reason)
	run := b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_CANCELLED))
	require.Len(t, released, 1, "the release hook ran once")
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_ROLLED_BACK, run.GetCompensationOutcome())
	table := b.ok("get", runID)
	require.Regexp(t, `compensation\s+ROLLED_BACK`, table)
	require.Contains(t, table, "order withdrawn (compensation asked)")
}

func TestCancel_WithoutCompensateRunsNoHook(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.startWorker(func(w *worker.Worker) {
		worker.Register(w, "reserve", func(ctx context.Context, in struct{}) (string, error) { return "held", nil })
	})
	runID := b.submitFile("def.json", reserveThenWaitJSON, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	require.Contains(t, b.ok("cancel", runID), "CANCELLED")
	run := b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_CANCELLED))
	require.Equal(t, weftv1.CompensationOutcome_COMPENSATION_OUTCOME_UNSPECIFIED, run.GetCompensationOutcome())
	require.False(t, run.GetCancellation().GetCompensate())
}
