package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// waitOnlyJSON waits for a signal: a run that stays BLOCKED until cancelled.
const waitOnlyJSON = `{"plan_id": "wait", "plan_version": "1", "actions": [
  {"id": "wait", "order": 1, "wait_for_signal": {"signal_name": "go"}}]}`

// TestDelete_RefusesAnUnfinishedRunThenDeletesItOnceFinished: weft delete
// of a blocked run exits 1 with the failed-precondition fault and changes
// nothing; once cancelled it is deleted (-o json says removed), and a second
// delete is not found.
func TestDelete_RefusesAnUnfinishedRunThenDeletesItOnceFinished(t *testing.T) {
	t.Parallel()
	b := setup(t)
	runID := b.submitFile("def.json", waitOnlyJSON, "--start")
	b.eventually(runID, statusIs(weftv1.RunStatus_RUN_STATUS_BLOCKED))
	r := b.weft("delete", runID)
	require.Equal(t, 1, r.code, "%v", r.err)
	require.ErrorContains(t, r.err, "FailedPrecondition")
	require.ErrorContains(t, r.err, "only a finished run")
	out := b.ok("get", runID)
	require.Contains(t, out, "BLOCKED", "a refused delete changes nothing")
	require.NotContains(t, out, "retained until", "a run not finished has no expiry")

	b.ok("cancel", runID)
	require.Regexp(t, `retained until\s+20\d\d-`, b.ok("get", runID))
	out = b.ok("delete", runID, "-o", "json")
	var res struct {
		RunID   string `json:"run_id"`
		Removed bool   `json:"removed"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, runID, res.RunID)
	require.True(t, res.Removed)
	r = b.weft("get", runID)
	require.Equal(t, 1, r.code)
	require.ErrorContains(t, r.err, "NotFound")
	r = b.weft("delete", runID)
	require.Equal(t, 1, r.code, "deleting twice: the second is not found")
	require.ErrorContains(t, r.err, "NotFound")
}

func TestDelete_NeedsExactlyOneRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 2, b.weft("delete").code)
	require.Equal(t, 2, b.weft("delete", "a", "b").code)
}
