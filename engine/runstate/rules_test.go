package runstate

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIdempotencyKey_IsSpec004Formula(t *testing.T) {
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	require.Equal(t, sum("run-1|a|2|StepStarted|v1"), IdempotencyKey("run-1", "a", 2, EvStepStarted, "v1", 7),
		"engine attempts do not change a step event's key")
	require.Equal(t, sum("run-1|RUN|1|RunStarted|v1"), IdempotencyKey("run-1", "", 0, EvRunStarted, "v1", 0),
		"run-level events normalise stepId to RUN and logicalAttemptId to 1")
	require.Equal(t, sum("run-1|a|1|StepAttemptRecorded|v1|3"), IdempotencyKey("run-1", "a", 1, EvStepAttemptRecorded, "v1", 3),
		"per-attempt evidence includes the engine attempt")
}

func TestTransitions_AnEndedRunsOnlyWayOutIsARerunToRunning(t *testing.T) {
	all := []RunStatus{RunPending, RunApproved, RunQueued, RunRunning, RunBlocked, RunPaused, RunCompensating, RunCompleted, RunFailed, RunCancelled}
	for _, from := range []RunStatus{RunCompleted, RunFailed, RunCancelled} {
		for _, to := range all {
			require.Equal(t, to == RunRunning, RunTransitionAllowed(from, to), "%s -> %s", from, to)
		}
	}
	illegal := [][2]RunStatus{{RunPending, RunRunning}, {RunCompensating, RunRunning},
		{RunCompensating, RunCancelled}, {RunCompensating, RunPaused}}
	for _, tr := range illegal {
		require.False(t, RunTransitionAllowed(tr[0], tr[1]), "%s -> %s must be illegal", tr[0], tr[1])
	}
}

func TestTransitions_CompensatingEndsCancelledOnlyWhenACancelAskedForTheCompensation(t *testing.T) {
	for _, tc := range []struct {
		from, to           RunStatus
		cancelCompensation bool
		want               bool
	}{
		{RunCompensating, RunFailed, false, true},
		{RunCompensating, RunCancelled, false, false},
		{RunCompensating, RunCancelled, true, true},
		{RunCompensating, RunFailed, true, true}, // the table itself still holds
		{RunCompensating, RunRunning, true, false},
		{RunCompensating, RunPaused, true, false},
		{RunCompensating, RunCompleted, true, false},
		{RunRunning, RunCancelled, false, true},
		{RunCancelled, RunCompensating, true, false},
		{RunFailed, RunCancelled, true, false},
		{RunFailed, RunRunning, false, true}, // RerunRun (docs/semantics.md#rerun)
		{RunCancelled, RunRunning, true, true},
		{RunCompleted, RunRunning, false, true},
		{RunCompleted, RunBlocked, false, false},
		{RunFailed, RunQueued, false, false},
	} {
		require.Equal(t, tc.want, RunTransitionAllowedWhen(tc.from, tc.to, tc.cancelCompensation),
			"%s -> %s (cancel compensation %v)", tc.from, tc.to, tc.cancelCompensation)
	}
	failing := &State{Status: RunCompensating, Compensation: &CompensationState{Order: []string{"a"}}}
	require.False(t, RunTransitionAllowedFor(failing, RunCancelled), "a failure's rollback never ends CANCELLED")
	cancelling := &State{Status: RunCompensating, Compensation: &CompensationState{Order: []string{"a"}, ForCancel: true}}
	require.True(t, RunTransitionAllowedFor(cancelling, RunCancelled))
}
